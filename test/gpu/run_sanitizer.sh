#!/bin/sh
# GPU test: compute-sanitizer's racecheck, memcheck, synccheck and initcheck on the seed layer with the
# default schedule (on sm_90a a persistent grid; also with a producer warpgroup, a block a
# tile storing from registers, clusters of two blocks sharing B's tiles, and a float16 output
# stored by the copy engine) and
# on a run of the randomized matrix, which draws the schedule's knobs. Passes when every tool
# reports no error, and ends with each tool's summary (its runs, and those with errors).
# Without a driver it prints "SKIP: no GPU" and exits 77.
#
# usage: run_sanitizer.sh TOOLDIR [--seed S] [--count N] [--tools "T1 T2 ..."]
#   TOOLDIR holds tcc-conv and tcc-matrix; N matrix configurations (default 30); the tools
#   (default all four) run in turn, each on the same configurations
set -u

if [ $# -lt 1 ]; then
    echo "usage: $0 TOOLDIR [--seed S] [--count N]" >&2
    exit 2
fi
tools=$1
shift
seed=$(date +%s)
count=30
sanitizers="racecheck memcheck synccheck initcheck"
while [ $# -gt 0 ]; do
    case $1 in
    --seed) seed=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --tools) sanitizers=$2; shift 2 ;;
    *) echo "$0: unknown option $1" >&2; exit 2 ;;
    esac
done

# shellcheck source=driver.sh
. "$(dirname "$0")/driver.sh"

if ! command -v compute-sanitizer >/dev/null 2>&1; then
    echo "SKIP: no compute-sanitizer"
    exit 77
fi

failed=0
# note TOOL NAME OK: one run's outcome, for the tool's summary line.
note() {
    eval "runs_$1=\$((\${runs_$1:-0} + 1))"
    if [ "$3" != ok ]; then
        eval "bad_$1=\"\${bad_$1:-}\$2 \""
        failed=1
    fi
}

# The seed layer under one tool, with the default schedule and extra options ($3...).
seed_layer() {
    tool=$1 name=$2
    shift 2
    echo "== $tool: seed layer, $name"
    if compute-sanitizer --tool "$tool" --error-exitcode 3 "$tools/tcc-conv" \
        --layer seed_tutorial --schedule default "$@" --run --check sampled --runs 1 \
        --warmup 0 >"/tmp/sanitizer-$tool-$name.log" 2>&1; then
        note "$tool" "$name" ok
    else
        tail -20 "/tmp/sanitizer-$tool-$name.log"
        note "$tool" "$name" errors
    fi
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "/tmp/sanitizer-$tool-$name.log"
}

for tool in $sanitizers; do
    seed_layer "$tool" default
    # On compute capability 9.0 (sm_90a): bulk copies issued by a producer warpgroup.
    if [ "$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)" = 9.0 ]; then
        seed_layer "$tool" producer --layout nhwc --producer warpgroup
        seed_layer "$tool" registers --layout nhwc --store registers --grid tiles
        seed_layer "$tool" cluster --layout nhwc --cluster 2
        seed_layer "$tool" bulk-store --layout nhwc --out f16
    fi
    echo "== $tool: $count matrix configurations, seed $seed"
    if compute-sanitizer --tool "$tool" --error-exitcode 3 "$tools/tcc-matrix" --seed "$seed" \
        --count "$count" >"/tmp/sanitizer-$tool-matrix.log" 2>&1; then
        note "$tool" matrix ok
    else
        tail -20 "/tmp/sanitizer-$tool-matrix.log"
        note "$tool" matrix errors
    fi
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed" "/tmp/sanitizer-$tool-matrix.log"
done
echo "seed: $seed"
for tool in $sanitizers; do
    eval "runs=\${runs_$tool:-0} bad=\${bad_$tool:-}"
    bad=${bad% }
    echo "summary: $tool: $runs runs; errors in: ${bad:-none}"
done
[ $failed -eq 0 ] && echo "sanitizer: no errors" || echo "sanitizer: errors found"
exit $failed
