#!/usr/bin/env bash
# python/run_tests.sh BUILD_DIR: the Python package's tests as a user meets them. In a fresh
# virtual environment (no PyTorch: the GPU tests skip; on a GPU host run them with the
# Python that has it), installs the package twice and runs tests/ each time:
#   1. `pip install ./python`, the library named by TENSORCC_LIBRARY (BUILD_DIR's);
#   2. `pip install BUILD_DIR/python` (the python-package target: the library inside the
#      package), with no TENSORCC_LIBRARY.
# pip runs offline (--no-index --no-build-isolation): the venv sees the system's setuptools and
# wheel (Debian's python3-setuptools and python3-wheel, which scripts/install_deps.sh installs),
# so CI needs no package index. TCC_PYTHON picks the interpreter (default Debian's).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: python/run_tests.sh BUILD_DIR}" && pwd)
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT

python=${TCC_PYTHON:-/usr/bin/python3}
[ -x "$python" ] || python=python3
"$python" -m venv --system-site-packages "$venv"
pip=("$venv/bin/python" -m pip install --quiet --no-build-isolation --no-index)
cd "$root/python/tests" # not beside the source package, so the installed one is imported

echo "python: pip install ./python, TENSORCC_LIBRARY=$build/libtensorcc.so.0"
"${pip[@]}" "$root/python"
TENSORCC_LIBRARY="$build/libtensorcc.so.0" "$venv/bin/python" -m unittest discover -s . -v

echo "python: pip install $build/python (the library inside the package)"
cmake --build "$build" --target python-package > /dev/null
"$venv/bin/python" -m pip uninstall --quiet --yes tensorcc
"${pip[@]}" "$build/python"
env -u TENSORCC_LIBRARY "$venv/bin/python" -m unittest discover -s . -v
