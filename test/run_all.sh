#!/usr/bin/env bash
# All of tcc's tests, as CI runs them:
#   1. build/       Release build; ctest (unit tests, lit tests of tcc-conv, GPU test)
#   2. install      test/install/run.sh build: build/ installed into a temporary prefix; a
#                   plain C program built against it through find_package, pkg-config (shared
#                   and static) and add_subdirectory of this tree, and run; libtensorcc.so's
#                   exports checked.
#      python       python/run_tests.sh build: the Python package pip-installed into a fresh
#                   virtual environment (from ./python with TENSORCC_LIBRARY, and from
#                   build/python with the library inside) and its tests (the GPU ones skip).
#   3. build-asan/  Debug build with AddressSanitizer + UndefinedBehaviorSanitizer (with
#                   float-cast-overflow); the same ctest, so the unit tests and every
#                   tcc-conv run of the lit tests are checked for memory errors, undefined
#                   behaviour and leaks.
#   4. build-tsan/  Debug build with ThreadSanitizer of llvm_test_threads only (threads
#                   compiling at once in separate contexts, a kernel read by several): any
#                   report fails it.
#   5. build-fuzz/  test/fuzz/ci.sh: the libFuzzer targets, built with clang, each run for
#                   TCC_FUZZ_SECONDS (default 60); skipped while test/fuzz/ci.sh is absent.
# The GPU test reports SKIP where there is no NVIDIA driver. Every stage runs; the exit
# status is 0 only if all pass. TCC_JOBS sets the build parallelism (default 2: the static
# LLVM link is the slow, memory-hungry step).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

jobs=${TCC_JOBS:-2}
start=$SECONDS
summary=()
failed=0

# record NAME PASS|FAIL|SKIP STAGE_START: adds "NAME RESULT (time)" to the summary.
record() {
    local elapsed=$((SECONDS - $3))
    summary+=("$1 $2 ($((elapsed / 60))m$((elapsed % 60))s)")
    if [ "$2" = FAIL ]; then
        failed=1
    fi
}

# build_and_test NAME DIR [cmake options...]
build_and_test() {
    local name=$1 dir=$2 stage_start=$SECONDS
    shift 2
    echo "==== $name: configure and build $dir ===="
    cmake -S . -B "$dir" "$@"
    cmake --build "$dir" -j"$jobs"
    echo "==== $name: ctest ===="
    if ctest --test-dir "$dir" --output-on-failure -j"$jobs"; then
        record "$name" PASS "$stage_start"
    else
        record "$name" FAIL "$stage_start"
    fi
}

build_and_test release build -DCMAKE_BUILD_TYPE=Release

# What a user of the packages does, on the release build (about a minute: the add_subdirectory
# consumer compiles the library's sources once more).
install_start=$SECONDS
echo "==== install: test/install/run.sh build ===="
if TCC_JOBS=$jobs bash test/install/run.sh build; then
    record install PASS "$install_start"
else
    record install FAIL "$install_start"
fi

python_start=$SECONDS
echo "==== python: python/run_tests.sh build ===="
if bash python/run_tests.sh build; then
    record python PASS "$python_start"
else
    record python FAIL "$python_start"
fi

# protect_shadow_gap=0: the CUDA driver maps memory where ASan's shadow gap would be, and
# cuInit fails with CUDA_ERROR_OUT_OF_MEMORY without it (checked on an H200). Leak checking
# stays on with no suppressions: neither LLVM's static state nor libcuda reports leaks.
# exitcode=86: a sanitizer report never passes for the tool's own exit status 1.
export ASAN_OPTIONS="protect_shadow_gap=0:detect_leaks=1:exitcode=86"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=86"
# A Debug build under ASan runs several times slower than Release: scale Check's
# per-test timeout (4 s by default) to match, or exhaustive tests time out under load.
export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-10}
# libtensorcc.so is left out: the same objects as the archive the tests link, one more link.
build_and_test asan build-asan -DTCC_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DTCC_BUILD_SHARED=OFF
unset ASAN_OPTIONS UBSAN_OPTIONS

# ThreadSanitizer: only the thread test is built (the library and that one program, about a
# minute): it is what runs tcc on many threads at once. LLVM itself is not instrumented:
# TSan sees tcc's own code, where any shared mutable state would be. halt_on_error +
# exitcode: a report fails the run even where the test's checks pass. test/unit/tsan.supp
# drops what TSan misreads inside libcuda on a GPU host (not reached without a driver).
tsan_start=$SECONDS
echo "==== tsan: configure build-tsan, build llvm_test_threads ===="
if cmake -S . -B build-tsan -DTCC_SANITIZE=thread -DCMAKE_BUILD_TYPE=Debug \
    -DTCC_BUILD_SHARED=OFF &&
    cmake --build build-tsan -j"$jobs" --target llvm_test_threads; then
    echo "==== tsan: llvm_test_threads ===="
    # GCC 12's TSan runtime fails at start ("unexpected memory mapping") under the wider
    # address randomization of newer kernels (vm.mmap_rnd_bits 32): run without ASLR where
    # setarch allows it.
    no_aslr=()
    if setarch "$(uname -m)" -R true 2> /dev/null; then
        no_aslr=(setarch "$(uname -m)" -R)
    fi
    tsan_options="halt_on_error=1:exitcode=86:second_deadlock_stack=1"
    if TSAN_OPTIONS="$tsan_options:suppressions=$root/test/unit/tsan.supp" \
        ${no_aslr[@]+"${no_aslr[@]}"} build-tsan/llvm_test_threads; then
        record tsan PASS "$tsan_start"
    else
        record tsan FAIL "$tsan_start"
    fi
else
    record tsan FAIL "$tsan_start"
fi

# Fuzzing (test/fuzz/README.md): a clang build of its own; test/fuzz/ci.sh fails on any
# crash, leak, timeout or out-of-memory and leaves the input in build-fuzz/fuzz-artifacts/.
fuzz_start=$SECONDS
if [ -f test/fuzz/ci.sh ]; then
    echo "==== fuzz: test/fuzz/ci.sh build-fuzz ===="
    if TCC_FUZZ_JOBS=$jobs bash test/fuzz/ci.sh build-fuzz "${TCC_FUZZ_SECONDS:-60}"; then
        record fuzz PASS "$fuzz_start"
    else
        record fuzz FAIL "$fuzz_start"
    fi
else
    record fuzz SKIP "$fuzz_start"
fi

elapsed=$((SECONDS - start))
joined=$(printf ', %s' "${summary[@]}")
echo "run_all: ${joined:2}; total $((elapsed / 60))m$((elapsed % 60))s"
exit "$failed"
