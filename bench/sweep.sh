#!/bin/sh
# Times a list of schedule variants of one tcc-conv or tcc-matmul command on the GPU: each
# line of the variants file is extra options; prints "ms  options" per variant.
#
# usage: bench/sweep.sh TOOL VARIANTS-FILE [common options...]
set -u
if [ $# -lt 2 ]; then
    echo "usage: $0 TOOL VARIANTS-FILE [common options...]" >&2
    exit 2
fi
tool=$1
variants=$2
shift 2
while IFS= read -r extra; do
    [ -z "$extra" ] && continue
    # shellcheck disable=SC2086
    line=$("$tool" "$@" $extra --run --check sampled --samples 4096 --runs 20 --warmup 5 2>&1 |
        grep -E "^time|error|FAIL|launch" | tr '\n' ' ')
    printf '%s | %s\n' "$extra" "$line"
done <"$variants"
