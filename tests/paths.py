"""Where things are, for tests in any subfolder."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
"""The tests folder (golden files, artifacts)."""
REPO = TESTS.parent
"""The checkout's top folder (README, bench/, clients/)."""
