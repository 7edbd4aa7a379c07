#!/bin/sh
# Times tcc against cuDNN on every layer of layers.csv (NHWC and NCHW) on a GPU host:
# a wrapper of bench/layers.py that writes the markdown table, the CSV, the plot and the full
# log.
#
# usage: bench/run_layers.sh path/to/tcc-conv [out-dir] [layers.py options...]
#   out-dir (default .) receives results-layers.md, results-layers.csv (every number),
#   results-layers.png (tcc/cuDNN per layer; results-layers.svg without matplotlib) and
#   layers.log
set -u

if [ $# -lt 1 ]; then
    echo "usage: $0 path/to/tcc-conv [out-dir] [layers.py options...]" >&2
    exit 2
fi
tool=$1
shift
out=.
if [ $# -gt 0 ]; then
    out=$1
    shift
fi
here=$(dirname "$0")
mkdir -p "$out" || exit 1

# Unbuffered, so a log cut short by a time limit still holds every finished layer.
PYTHONUNBUFFERED=1 python3 "$here/layers.py" --tcc "$tool" --out "$out/results-layers.md" "$@" \
    >"$out/layers.log" 2>&1
status=$?
cat "$out/layers.log"
exit $status
