#!/usr/bin/env bash
# The install test (CI's "install" stage): what a user of an installed tensorcc, or of its
# source tree, does. Installs BUILD_DIR (a configured and built Release tree) into a fresh
# temporary prefix, checks what is there, then builds and runs consumer.c, a plain C program
# (no C++ anywhere in its projects), five ways:
#   find_package(tensorcc)      -> tensorcc::tensorcc (shared) and tensorcc::tensorcc_static
#   cc $(pkg-config ...)        -> libtensorcc.so, and with --static libtensorcc.a
#   add_subdirectory(tcc)       -> tensorcc::tensorcc_static built from the sources (no Check,
#                                  pkg-config or Python needed; no -Werror)
# and checks that libtensorcc.so exports exactly the public tcc_* functions and needs only
# glibc, and that the program linking it is small. Prints each step; exits non-zero at the
# first failure. Removes everything it made.
#
#   usage: test/install/run.sh BUILD_DIR
#
# Environment: TCC_JOBS (build parallelism for the add_subdirectory consumer, default 2), CC
# (the compiler of the pkg-config consumers, default cc).
set -euo pipefail

if [[ $# -ne 1 ]]; then
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
build=$(cd "$1" && pwd)
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
here=$source_dir/test/install
jobs=${TCC_JOBS:-2}
cc=${CC:-cc}
work=$(mktemp -d "${TMPDIR:-/tmp}/tcc-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

fail() {
    echo "install test: FAIL: $*" >&2
    exit 1
}
step() {
    echo "== $*"
}

# ---- the installed tree -------------------------------------------------------------------
step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log" || {
    cat "$work/install.log"
    fail "cmake --install"
}
shared=$(find "$prefix" -name libtensorcc.so -print -quit)
[[ -n $shared ]] || fail "no libtensorcc.so under $prefix"
libdir=$(dirname "$shared")
for file in include/tcc/{base,te,ops,runtime,tcc,version}.h bin/tcc-{conv,matmul,opt} \
    share/man/man1/tcc-{conv,matmul,opt}.1; do
    [[ -f $prefix/$file ]] || fail "$file is not installed"
done
for file in libtensorcc.so.0 libtensorcc.a cmake/tensorcc/tensorccConfig.cmake \
    cmake/tensorcc/tensorccConfigVersion.cmake cmake/tensorcc/tensorccTargets.cmake \
    pkgconfig/tensorcc.pc; do
    [[ -e $libdir/$file ]] || fail "${libdir#"$prefix"/}/$file is not installed"
done
for page in "$prefix"/share/man/man1/*.1; do
    if ! grep -q '^\.TH TCC-' "$page" || ! grep -q '^\.SH DESCRIPTION' "$page"; then
        fail "$page is no man page"
    fi
done
"$prefix/bin/tcc-conv" --help > /dev/null || fail "the installed tcc-conv --help"
echo "installed: $(cd "$prefix" && find . -type f | wc -l) files"

# ---- libtensorcc.so: its exports, its SONAME, what it needs -------------------------------
step "libtensorcc.so's dynamic symbols"
nm -D --defined-only "$shared" | awk '{print $NF}' > "$work/exports"
other=$(grep -v -E '^(tcc_[A-Za-z0-9_]+@@TENSORCC_0|TENSORCC_0)$' "$work/exports" || true)
[[ -z $other ]] || fail "libtensorcc.so exports more than tcc_*: $(echo "$other" | head -5)"
count=0
while read -r symbol; do
    name=${symbol%%@*}
    [[ $name == TENSORCC_0 ]] && continue
    grep -q -w "$name" "$prefix"/include/tcc/*.h || fail "$name is exported but in no header"
    count=$((count + 1))
done < "$work/exports"
[[ $count -gt 100 ]] || fail "only $count tcc_ symbols exported"
echo "exports: $count tcc_ functions (each declared in include/tcc/), TENSORCC_0"
soname=$(readelf -d "$shared" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ $soname == libtensorcc.so.0 ]] || fail "SONAME is '$soname'"
needed=$(readelf -d "$shared" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ' | sed 's/ $//')
for library in $needed; do
    case $library in
        libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | ld-linux*) ;;
        *) fail "libtensorcc.so needs $library (only glibc expected)" ;;
    esac
done
stripped=$work/stripped.so
strip -o "$stripped" "$shared"
echo "SONAME $soname; needs $needed; $(stat -L -c %s "$shared") bytes, $(stat -c %s "$stripped") stripped"

# run NAME PROGRAM [ENV...]: runs a consumer, shows its output, fails on a non-zero exit.
run() {
    local name=$1 program=$2
    shift 2
    env "$@" "$program" > "$work/$name.out" 2>&1 || {
        cat "$work/$name.out"
        fail "$name exited with an error"
    }
    sed 's/^/    /' "$work/$name.out"
    echo "$name: $(stat -c %s "$program") bytes"
}
# needs_shared PROGRAM yes|no: whether PROGRAM has libtensorcc.so.0 as NEEDED.
needs_shared() {
    local found=no
    if readelf -d "$1" | grep -q 'NEEDED.*\[libtensorcc\.so\.0\]'; then
        found=yes
    fi
    [[ $found == "$2" ]] || fail "$1: needs libtensorcc.so.0: $found (expected $2)"
}

# ---- find_package -------------------------------------------------------------------------
step "find_package(tensorcc): a C project"
if ! { cmake -S "$here/find_package" -B "$work/find_package" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix" && cmake --build "$work/find_package" -j"$jobs"; } \
    > "$work/find_package.log" 2>&1; then
    cat "$work/find_package.log"
    fail "the find_package consumer did not build"
fi
needs_shared "$work/find_package/consumer" yes
needs_shared "$work/find_package/consumer_static" no
run find_package/consumer "$work/find_package/consumer"
size=$(stat -c %s "$work/find_package/consumer")
[[ $size -lt 1000000 ]] || fail "the consumer of libtensorcc.so is $size bytes"
run find_package/consumer_static "$work/find_package/consumer_static"

# ---- pkg-config ---------------------------------------------------------------------------
step "pkg-config: cc consumer.c \$(pkg-config --cflags --libs tensorcc)"
export PKG_CONFIG_PATH=$libdir/pkgconfig
version=$(pkg-config --modversion tensorcc)
grep -q "TCC_VERSION_STRING \"$version\"" "$prefix/include/tcc/version.h" ||
    fail "pkg-config says version $version"
# shellcheck disable=SC2046 # pkg-config's output is words
"$cc" -o "$work/pkg_config" "$here/consumer.c" $(pkg-config --cflags --libs tensorcc) ||
    fail "cc with pkg-config's flags"
needs_shared "$work/pkg_config" yes
run pkg_config "$work/pkg_config" LD_LIBRARY_PATH="$libdir"
# The archive: --static's flags, with -ltensorcc made -l:libtensorcc.a (with both installed,
# -ltensorcc would take the shared library).
static_libs=$(pkg-config --static --libs tensorcc)
static_libs=${static_libs/-ltensorcc/-l:libtensorcc.a}
step "pkg-config --static: cc consumer.c $static_libs"
# shellcheck disable=SC2046,SC2086
"$cc" -o "$work/pkg_config_static" "$here/consumer.c" $(pkg-config --cflags tensorcc) \
    $static_libs || fail "cc with pkg-config --static's flags"
needs_shared "$work/pkg_config_static" no
run pkg_config_static "$work/pkg_config_static"
unset PKG_CONFIG_PATH

# ---- add_subdirectory ---------------------------------------------------------------------
step "add_subdirectory($source_dir): a C project, only the consumer built"
sub=$work/add_subdirectory
if ! { cmake -G "Unix Makefiles" -S "$here/add_subdirectory" -B "$sub" -DCMAKE_BUILD_TYPE=Release \
    -DTCC_SOURCE_DIR="$source_dir" && cmake --build "$sub" -j"$jobs" --target consumer; } \
    > "$work/add_subdirectory.log" 2>&1; then
    tail -40 "$work/add_subdirectory.log"
    fail "the add_subdirectory consumer did not build"
fi
# Nothing of the tests' was looked for, and nothing was compiled with -Werror.
if grep -E '^(CHECK_FOUND|Python3_EXECUTABLE|PKG_CONFIG_EXECUTABLE):' "$sub/CMakeCache.txt"; then
    fail "add_subdirectory looked for the tests' dependencies"
fi
if grep -r -l --include=flags.make -e -Werror "$sub"; then
    fail "add_subdirectory compiles with -Werror"
fi
grep -q 'unused parameter' "$work/add_subdirectory.log" &&
    fail "tcc's warning flags reached the consumer (consumer.c's unused parameter)"
run add_subdirectory/consumer "$sub/consumer"

echo "install test: PASS"
