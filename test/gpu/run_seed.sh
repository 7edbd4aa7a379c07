#!/bin/sh
# GPU test: runs the seed convolution with `tcc-conv --run` and passes if the tool exits 0
# and reports a max relative error <= 1e-3. Without an NVIDIA driver it prints
# "SKIP: no GPU" and exits 77 (ctest's SKIP_RETURN_CODE for this test).
#
# usage: run_seed.sh path/to/tcc-conv [extra tcc-conv options]
set -u

if [ $# -lt 1 ]; then
    echo "usage: $0 path/to/tcc-conv [options]" >&2
    exit 2
fi
tool=$1
shift

have_driver() {
    if command -v ldconfig >/dev/null 2>&1 && ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
        return 0
    fi
    for dir in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib \
               /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/wsl/lib; do
        [ -e "$dir/libcuda.so.1" ] && return 0
    done
    # LD_LIBRARY_PATH is where dlopen looks too (containers often put the driver there).
    old_ifs=$IFS
    IFS=:
    for dir in ${LD_LIBRARY_PATH:-}; do
        if [ -n "$dir" ] && [ -e "$dir/libcuda.so.1" ]; then
            IFS=$old_ifs
            return 0
        fi
    done
    IFS=$old_ifs
    return 1
}

if ! have_driver; then
    echo "SKIP: no GPU"
    exit 77
fi

log=$(mktemp "${TMPDIR:-/tmp}/tcc-run-seed.XXXXXX") || exit 1
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
