#!/usr/bin/env bash
# The fuzz job: configures BUILD_DIR with clang and -DTCC_FUZZ=ON, builds the fuzz targets
# only, and runs each for SECONDS_PER_TARGET (default 60), TCC_FUZZ_JOBS of them at once, from
# the lit tests' seeds (make_corpus.py) and what earlier runs in BUILD_DIR found. Prints each
# target's executions and corpus size; exits non-zero on any crash, leak, timeout or
# out-of-memory, whose input is left in BUILD_DIR/fuzz-artifacts/ (reproduce:
# BUILD_DIR/test/fuzz/tcc_fuzz_TARGET FILE).
#
#   usage: test/fuzz/ci.sh BUILD_DIR [SECONDS_PER_TARGET] [TARGET...]
#
# Environment: CC/CXX (default clang-19/clang++-19 if installed, else clang/clang++),
# TCC_FUZZ_BUILD_TYPE (default RelWithDebInfo), TCC_FUZZ_JOBS (build jobs, and targets run at
# once; default the cores), TCC_FUZZ_SEED (libFuzzer's -seed, default 1: CI tries the same
# mutations each run, so a finding does not come and go with the run; 0 for a random seed),
# TCC_FUZZ_ARGS (more libFuzzer flags, e.g. -jobs=4 -workers=4).
set -euo pipefail

if [[ $# -lt 1 ]]; then
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
build_dir=$1
seconds=${2:-60}
shift $(($# < 2 ? $# : 2))
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
all_targets=(conv_cli matmul_cli opt_cli loop_ir compile kernel_bytes)
targets=("${@:-${all_targets[@]}}")

if [[ -z ${CC:-} ]]; then
    if command -v clang-19 > /dev/null; then
        export CC=clang-19 CXX=clang++-19
    else
        export CC=clang CXX=clang++
    fi
fi
cmake -S "$source_dir" -B "$build_dir" -DTCC_FUZZ=ON \
    -DCMAKE_BUILD_TYPE="${TCC_FUZZ_BUILD_TYPE:-RelWithDebInfo}" > /dev/null
cmake --build "$build_dir" -j "${TCC_FUZZ_JOBS:-$(nproc)}" --target \
    $(printf 'tcc_fuzz_%s ' "${targets[@]}")

build_dir=$(cd "$build_dir" && pwd)
seeds=$build_dir/fuzz-seeds
corpus=$build_dir/fuzz-corpus
artifacts=$build_dir/fuzz-artifacts
rm -rf "$seeds"
python3 "$source_dir/test/fuzz/make_corpus.py" "$seeds" > /dev/null
mkdir -p "$artifacts"

# Bounds per input: its size, its time (a hang is a finding), its memory. Leaks are
# reported (detect_leaks is on by default with AddressSanitizer).
declare -A max_len=([conv_cli]=512 [matmul_cli]=512 [opt_cli]=512 [loop_ir]=4096 [compile]=256
    [kernel_bytes]=4096)
declare -A timeout=([conv_cli]=10 [matmul_cli]=10 [opt_cli]=10 [loop_ir]=20 [compile]=60
    [kernel_bytes]=10)
# compile runs a few inputs a second: too few for libFuzzer to grow their length step by step.
declare -A extra=([compile]=-len_control=0)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# One target's run: its log in BUILD_DIR/fuzz-TARGET.log, its exit status in .status.
run_target() {
    local target=$1 log=$build_dir/fuzz-$1.log status=0
    mkdir -p "$corpus/$target" "$seeds/$target"
    # shellcheck disable=SC2086
    "$build_dir/test/fuzz/tcc_fuzz_$target" "$corpus/$target" "$seeds/$target" \
        -max_total_time="$seconds" -seed="${TCC_FUZZ_SEED:-1}" -max_len="${max_len[$target]}" \
        -timeout="${timeout[$target]}" -rss_limit_mb=4096 -close_fd_mask=3 \
        -artifact_prefix="$artifacts/$target-" -print_final_stats=1 ${extra[$target]:-} \
        ${TCC_FUZZ_ARGS:-} > "$log" 2>&1 || status=$?
    echo "$status" > "$log.status"
}

# The targets run TCC_FUZZ_JOBS at a time (each a process of one thread), so that a machine of
# two cores gives each its full time in half the wall time.
parallel=${TCC_FUZZ_JOBS:-$(nproc)}
running=()
for target in "${targets[@]}"; do
    echo "== $target: ${seconds}s"
    run_target "$target" &
    running+=($!)
    if [[ ${#running[@]} -ge $parallel ]]; then
        wait "${running[0]}"
        running=("${running[@]:1}")
    fi
done
wait

failed=0
summary=()
for target in "${targets[@]}"; do
    log=$build_dir/fuzz-$target.log
    status=$(cat "$log.status")
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    size=$(find "$corpus/$target" -type f | wc -l)
    if [[ $status -ne 0 ]]; then
        failed=1
        summary+=("$(printf '%-11s FAILED (exit %d): see %s' "$target" "$status" "$log")")
        grep -E "ERROR|SUMMARY|fuzz:|runtime error|Test unit written" "$log" | head -20 || true
    else
        summary+=("$(printf '%-11s %10s executions, corpus %d inputs' "$target" "${execs:-?}" \
            "$size")")
    fi
done
printf '%s\n' "== fuzz summary" "${summary[@]}"
exit $failed
