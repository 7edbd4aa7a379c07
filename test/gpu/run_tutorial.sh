#!/bin/sh
# GPU test: runs the tutorial's convolution with `tcc-conv --run` and passes if the tool exits 0
# and reports a max relative error <= 1e-3. Without an NVIDIA driver it prints
# "SKIP: no GPU" and exits 77 (ctest's SKIP_RETURN_CODE for this test).
#
# usage: run_tutorial.sh path/to/tcc-conv [extra tcc-conv options]
set -u

if [ $# -lt 1 ]; then
    echo "usage: $0 path/to/tcc-conv [options]" >&2
    exit 2
fi
tool=$1
shift

# shellcheck source=driver.sh
. "$(dirname "$0")/driver.sh"

log=$(mktemp "${TMPDIR:-/tmp}/tcc-run-tutorial.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT

"$tool" --run "$@" >"$log" 2>&1
status=$?
cat "$log"
if [ "$status" -ne 0 ]; then
    echo "FAIL: tcc-conv --run exited with status $status"
    exit 1
fi

error=$(sed -n 's/^max relative error: \([^ ]*\).*/\1/p' "$log" | head -n 1)
if [ -z "$error" ]; then
    echo "FAIL: no 'max relative error' line in the output"
    exit 1
fi
if awk -v e="$error" 'BEGIN { exit !(e ~ /^[0-9.eE+-]+$/ && e + 0 <= 1e-3) }'; then
    echo "PASS: max relative error $error <= 1e-3"
    exit 0
fi
echo "FAIL: max relative error $error > 1e-3"
exit 1
