"""``python -m hortus.cli``."""

import sys

from hortus.cli import main

sys.exit(main())
