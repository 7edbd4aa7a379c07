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

# shellcheck source=driver.sh
. "$(dirname "$0")/driver.sh"

# exec: the tool's exit status (0, 1, or 77) is the test's.
exec "$tool" "$@"
