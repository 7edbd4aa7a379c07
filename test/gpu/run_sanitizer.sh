#!/bin/sh
# GPU test: compute-sanitizer's racecheck, memcheck and synccheck on the seed layer with the
# default schedule (cp.async stages, dynamic shared memory, mma.sync) and on a run of the
# randomized matrix, which draws the schedule's knobs. Passes when every tool reports no
# error. Without a driver it prints "SKIP: no GPU" and exits 77.
#
# usage: run_sanitizer.sh TOOLDIR [--seed S] [--count N]
#   TOOLDIR holds tcc-conv and tcc-matrix; N matrix configurations (default 20)
set -u

if [ $# -lt 1 ]; then
    echo "usage: $0 TOOLDIR [--seed S] [--count N]" >&2
    exit 2
fi
tools=$1
shift
seed=$(date +%s)
count=20
while [ $# -gt 0 ]; do
    case $1 in
    --seed) seed=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
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
for tool in racecheck memcheck synccheck; do
    echo "== $tool: seed layer"
    if ! compute-sanitizer --tool "$tool" --error-exitcode 3 "$tools/tcc-conv" \
        --layer seed_tutorial --schedule default --run --check sampled --runs 1 --warmup 0 \
        >"/tmp/sanitizer-$tool-seed.log" 2>&1; then
        tail -20 "/tmp/sanitizer-$tool-seed.log"
        failed=1
    fi
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "/tmp/sanitizer-$tool-seed.log"
    echo "== $tool: $count matrix configurations, seed $seed"
    if ! compute-sanitizer --tool "$tool" --error-exitcode 3 "$tools/tcc-matrix" --seed "$seed" \
        --count "$count" >"/tmp/sanitizer-$tool-matrix.log" 2>&1; then
        tail -20 "/tmp/sanitizer-$tool-matrix.log"
        failed=1
    fi
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed" "/tmp/sanitizer-$tool-matrix.log"
done
echo "seed: $seed"
[ $failed -eq 0 ] && echo "sanitizer: no errors" || echo "sanitizer: errors found"
exit $failed
