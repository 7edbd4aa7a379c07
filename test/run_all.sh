#!/usr/bin/env bash
# All of tcc's tests, as CI runs them:
#   1. build/       Release build; ctest (unit tests, lit tests of tcc-conv, GPU test)
#   2. build-asan/  Debug build with AddressSanitizer + UndefinedBehaviorSanitizer; the
#                   same ctest, so the unit tests and every tcc-conv run of the lit tests
#                   are checked for memory errors, undefined behaviour and leaks.
# The GPU test reports SKIP where there is no NVIDIA driver. Both suites always run; the
# exit status is 0 only if both pass. TCC_JOBS sets the build parallelism (default 2: the
# static LLVM link is the slow, memory-hungry step).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

jobs=${TCC_JOBS:-2}
start=$SECONDS
summary=()
failed=0

# build_and_test NAME DIR [cmake options...]
build_and_test() {
    local name=$1 dir=$2
    shift 2
    echo "==== $name: configure and build $dir ===="
    cmake -S . -B "$dir" "$@"
    cmake --build "$dir" -j"$jobs"
    echo "==== $name: ctest ===="
    if ctest --test-dir "$dir" --output-on-failure -j"$jobs"; then
        summary+=("$name PASS")
    else
        summary+=("$name FAIL")
        failed=1
    fi
}

build_and_test release build -DCMAKE_BUILD_TYPE=Release

# protect_shadow_gap=0: the CUDA driver maps memory where ASan's shadow gap would be, and
# cuInit fails with CUDA_ERROR_OUT_OF_MEMORY without it (checked on an H200). Leak checking
# stays on with no suppressions: neither LLVM's static state nor libcuda reports leaks.
# exitcode=86: a sanitizer report never passes for the tool's own exit status 1.
export ASAN_OPTIONS="protect_shadow_gap=0:detect_leaks=1:exitcode=86"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=86"
# A Debug build under ASan runs several times slower than Release: scale Check's
# per-test timeout (4 s by default) to match, or exhaustive tests time out under load.
export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-10}
build_and_test asan build-asan -DTCC_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug

elapsed=$((SECONDS - start))
echo "run_all: ${summary[*]} ($((elapsed / 60))m$((elapsed % 60))s)"
exit "$failed"
