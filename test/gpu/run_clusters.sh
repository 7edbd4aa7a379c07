#!/bin/sh
# GPU test: thread-block clusters (sm_90a), whose blocks share B's tiles through the copy
# engine's multicast, on products the random matrix draws too rarely: a deep product with B
# row-major (its tiles MN-major, so wgmma reads the descriptor's leading-dimension field, which
# a cluster's shared addresses once spilled into: wrong results at 8192^3), the same with B
# column-major and in bfloat16, and the seed layer in clusters. Passes when every run passes
# its check against the CPU reference; on a GPU without clusters (a compile for it refuses
# them, exit status 3) it prints "SKIP: no clusters" and exits 77, as without a driver.
#
# usage: run_clusters.sh TOOLDIR   (TOOLDIR holds tcc-conv and tcc-matmul)
set -u

if [ $# -lt 1 ]; then
    echo "usage: $0 TOOLDIR" >&2
    exit 2
fi
tools=$1

# shellcheck source=driver.sh
. "$(dirname "$0")/driver.sh"

log=$(mktemp "${TMPDIR:-/tmp}/tcc-run-clusters.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT

"$tools/tcc-matmul" --m 256 --n 256 --k 256 --cluster 2 --arch native -o /dev/null >"$log" 2>&1
status=$?
if [ "$status" -eq 3 ]; then
    cat "$log"
    echo "SKIP: no clusters"
    exit 77
fi

failed=0
# check NAME TOOL OPTIONS...: one run, checked at sampled outputs (all of them for unwritten).
check() {
    name=$1
    shift
    "$@" --run --check sampled --samples 4096 --runs 1 --warmup 0 >"$log" 2>&1
    status=$?
    if [ "$status" -ne 0 ]; then
        cat "$log"
        echo "FAIL: $name (exit status $status)"
        failed=1
    else
        echo "ok: $name: $(grep '^max relative error' "$log")"
    fi
}

deep="--m 512 --n 512 --k 8192 --cluster 2 --producer warpgroup --grid persistent --grid-blocks 4"
# shellcheck disable=SC2086
check "deep product, B row-major" "$tools/tcc-matmul" $deep
# shellcheck disable=SC2086
check "deep product, B column-major" "$tools/tcc-matmul" $deep --b-col-major
# shellcheck disable=SC2086
check "deep product, bfloat16" "$tools/tcc-matmul" $deep --dtype bf16
check "a block a tile" "$tools/tcc-matmul" --m 512 --n 512 --k 512 --cluster 2 --grid tiles
check "seed layer" "$tools/tcc-conv" --layer seed_tutorial --layout nhwc --out f16 --cluster 2 \
    --grid-blocks 132
exit $failed
