#!/usr/bin/env bash
# The first command of the README: install the dependencies, build tcc (Release), compile
# the convolution of TVM's tensor-core tutorial to build/tutorial.ptx, and where a GPU is
# present, run, check and time it with `tcc-conv --run`.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=${TCC_JOBS:-$(nproc 2>/dev/null || echo 2)}

bash scripts/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$jobs"

build/tcc-conv --emit=ptx -o build/tutorial.ptx
echo "setup_and_run: wrote build/tutorial.ptx ($(wc -l <build/tutorial.ptx) lines of PTX)"

# run_tutorial.sh runs `tcc-conv --run` and checks its error bound, or exits 77 without a GPU.
status=0
test/gpu/run_tutorial.sh build/tcc-conv || status=$?
if [ "$status" -eq 77 ]; then
    echo "setup_and_run: no NVIDIA driver found; compiled only (see build/tutorial.ptx)"
    exit 0
fi
exit "$status"
