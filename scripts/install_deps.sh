#!/usr/bin/env bash
# Installs what building and testing tcc needs (Debian 12 / Ubuntu with LLVM 19 packages).
# Used by .ci/run and scripts/setup_and_run.sh. Runs apt-get as root, through sudo when
# not root; does nothing when every package is already installed, so that a prepared
# machine (or a user without root) is not stopped here.
set -euo pipefail

# clang-19 and libclang-rt-19-dev (libFuzzer's and the sanitizers' runtimes): the fuzz stage
# of test/run_all.sh, which builds test/fuzz/ with clang. python3-venv, python3-setuptools,
# python3-wheel: the Python package's tests pip-install it into a virtual environment
# offline. binutils (ar, nm, readelf, strip): merging libtensorcc.a and the install test.
# libsqlite3-dev: the tuning records' database (lib/tune/records.c), its static archive linked
# into the libraries and tools so that they need no SQLite where they run.
packages=(cmake make gcc g++ binutils pkg-config check llvm-19-dev llvm-19-tools libzstd-dev
          zlib1g-dev libsqlite3-dev python3 python3-venv python3-setuptools python3-wheel
          clang-19 libclang-rt-19-dev)

# libxgboost0: libxgboost.so.0, which the xgb tuner opens at run time (lib/tune/tuner_xgb.c); tcc
# builds and runs without it, that tuner then refusing and its tests saying SKIP.
packages+=(libxgboost0)

# postgresql (the server) and libpq5: the records store on PostgreSQL, which tcc reaches through
# libpq.so.5 opened at run time (lib/tune/postgres.c); test/postgres/*.sh starts a server of
# its own and says SKIP without one.
packages+=(postgresql libpq5)

missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$package")
    fi
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install_deps: all build dependencies are installed"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_deps: no apt-get; install these yourself: ${packages[*]}" >&2
    exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
    sudo=()
elif command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
else
    echo "install_deps: missing ${missing[*]}; run as root or install sudo" >&2
    exit 1
fi

echo "install_deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
${sudo[@]+"${sudo[@]}"} apt-get update
${sudo[@]+"${sudo[@]}"} apt-get install -y --no-install-recommends "${packages[@]}"
