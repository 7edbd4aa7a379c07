#!/bin/sh
# GPU test: the randomized test matrix (tcc-matrix). Passes if every configuration drawn
# passes its check against the CPU reference. Without an NVIDIA driver it prints
# "SKIP: no GPU" and exits 77 (ctest's SKIP_RETURN_CODE for this test); tcc-matrix itself
# also exits 77 when the driver is present but no device is.
#
# usage: run_matrix.sh path/to/tcc-matrix [--seed S] [--count N] [--only K] [--verbose]
# The seed is printed first and last; `--seed S --only K` replays configuration K.
set -u

if [ $# -lt 1 ]; then
    echo "usage: $0 path/to/tcc-matrix [options]" >&2
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

# exec: the tool's exit status (0, 1, or 77) is the test's.
exec "$tool" "$@"
