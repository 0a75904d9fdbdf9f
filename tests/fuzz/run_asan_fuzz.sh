#!/usr/bin/env bash
# Coverage-guided fuzzing under AddressSanitizer, one command:
#
#   tests/fuzz/run_asan_fuzz.sh [RUNS_PER_GAME [WORKDIR]]     # default 250000, /tmp/hortus-asan-fuzz
#
# 1. copies this checkout (tracked and untracked-but-not-ignored files, so uncommitted edits
#    are fuzzed too) to WORKDIR/src; the checkout's own extensions are never touched;
# 2. builds it into the throwaway venv WORKDIR/venv with HORTUS_DEBUG=fuzz: every Cython
#    extension compiled by clang with -fsanitize=address,fuzzer-no-link and Cython bounds
#    checks, so libFuzzer sees the kernels' edges and ASan checks their memory accesses;
# 3. runs tests/fuzz/fuzz_positions.py once per game for RUNS_PER_GAME inputs, with atheris's
#    ASan+libFuzzer runtime preloaded and PYTHONMALLOC=malloc (so Python objects, e.g. the
#    bytes a kernel reads a position from, are ASan-checked heap blocks too);
# 4. runs each corpus once more with -print_coverage=1 and counts the C edges it covers
#    (native_coverage.py), since libFuzzer's cov: figure mixes them with Python's.
#
# Corpora (WORKDIR/corpus/<game>) are kept between runs; a finding is written to
# WORKDIR/artifacts/<game>-crash-* and its log to WORKDIR/logs/<game>.log, and the script exits 1.
# Needs clang (Debian: apt-get install clang) and PyPI for the venv. SKIP_BUILD=1 reuses the
# build of a previous run. Run it under `nice` on a shared machine.
set -euo pipefail

RUNS=${1:-250000}
WORK=${2:-${TMPDIR:-/tmp}/hortus-asan-fuzz}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
PYTHON=${PYTHON:-python3}
VENV=$WORK/venv

command -v clang >/dev/null || { echo "clang not found (Debian: apt-get install clang)" >&2; exit 2; }
mkdir -p "$WORK"/{corpus,artifacts,logs}

if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    rm -rf "$WORK/src"
    mkdir -p "$WORK/src"
    # Deleted-but-tracked files are listed by git and skipped by tar.
    git -C "$REPO" ls-files -z --cached --others --exclude-standard \
        | tar -C "$REPO" --null -T - --ignore-failed-read -cf - 2>/dev/null \
        | tar -C "$WORK/src" -xf -
    [[ -x $VENV/bin/python ]] || "$PYTHON" -m venv "$VENV"
    "$VENV/bin/pip" install -q "setuptools>=69" wheel "Cython>=3.0,<4" "numpy>=1.26" \
        "grpcio-tools>=1.85,<1.86" atheris
    echo "building the extensions with clang, ASan and libFuzzer coverage..."
    HORTUS_DEBUG=fuzz "$VENV/bin/pip" install -q --no-build-isolation "$WORK/src[test]"
fi

SITE=$("$VENV/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['platlib'])")
# Every extension must carry both instrumentations, or the run would silently fuzz less.
for so in $(find "$SITE/hortus" -name "*.so"); do
    symbols=$(nm -D "$so")
    [[ $symbols == *__sanitizer_cov_8bit_counters_init* ]] || { echo "no libFuzzer coverage in $so" >&2; exit 2; }
    [[ $symbols == *__asan_report* ]] || { echo "no ASan in $so" >&2; exit 2; }
done

RUNTIME="$("$VENV/bin/python" -c "import atheris; print(atheris.path())")/asan_with_fuzzer.so"
[[ -f $RUNTIME ]] || { echo "atheris did not ship $RUNTIME" >&2; exit 2; }
# The instrumented extensions only load with the runtime preloaded (it defines the coverage symbols).
# detect_leaks=0: the interpreter keeps objects alive until exit by design.
# allow_user_segv_handler=1: Python's faulthandler may install its own handler.
export ASAN_OPTIONS=detect_leaks=0:allow_user_segv_handler=1
GAMES=$(cd "$WORK" && LD_PRELOAD="$RUNTIME" "$VENV/bin/python" -c "from hortus import games; print(' '.join(games.names()))")

status=0
for game in $GAMES; do
    mkdir -p "$WORK/corpus/$game"
    echo "fuzzing $game: $RUNS inputs (log: $WORK/logs/$game.log)"
    if ! (cd "$WORK" && LD_PRELOAD="$RUNTIME" PYTHONMALLOC=malloc HORTUS_FUZZ_GAMES="$game" \
        "$VENV/bin/python" "$WORK/src/tests/fuzz/fuzz_positions.py" \
        -atheris_runs="$RUNS" -timeout=60 -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="$WORK/artifacts/$game-" "$WORK/corpus/$game" >"$WORK/logs/$game.log" 2>&1); then
        echo "  FINDING in $game: see $WORK/logs/$game.log and $WORK/artifacts/" >&2
        status=1
    fi
    # libFuzzer's last status line (cov: edges, ft: features; Python and C edges together) and
    # atheris's "Done N in S second(s)".
    { grep -E "^#[0-9]+.* cov: " "$WORK/logs/$game.log" | tail -1; grep -E "^Done [0-9]+ " "$WORK/logs/$game.log"; } \
        | sed 's/^/  /' || true
    # The C edges alone: the corpus run once more with -print_coverage=1. (The RSS limit is
    # above libFuzzer's default 2 GB because ASan's shadow memory counts: about 2.2 GB at rest.)
    (cd "$WORK" && LD_PRELOAD="$RUNTIME" PYTHONMALLOC=malloc HORTUS_FUZZ_GAMES="$game" \
        "$VENV/bin/python" "$WORK/src/tests/fuzz/fuzz_positions.py" -runs=0 -rss_limit_mb=4096 -print_coverage=1 \
        "$WORK/corpus/$game" >"$WORK/logs/$game.coverage.log" 2>&1) || true
    "$VENV/bin/python" "$WORK/src/tests/fuzz/native_coverage.py" "$WORK/logs/$game.coverage.log" "$game" \
        | sed 's/^/  /' || true
done
exit $status
