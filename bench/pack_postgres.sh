#!/bin/bash
# Packs Debian 12's PostgreSQL 15 server (postgres, initdb, pg_ctl, psql, the two modules
# initdb loads, its share files) and every library they and libpq.so.5 need but glibc's into
# OUT.tar.xz, to carry to a GPU host that has no PostgreSQL (bench/tune_workers.sh unpacks it
# and runs it with LD_LIBRARY_PATH=DIR/lib; the binaries find their share files relative to
# themselves). Needs the postgresql package installed here.
#
# usage: bench/pack_postgres.sh OUT.tar.xz
set -euo pipefail
out=$(realpath "$1")
pack=$(mktemp -d)
chmod 755 "$pack" # the server runs as another user there
trap 'rm -rf "$pack"' EXIT
mkdir -p "$pack"/usr/lib/postgresql/15/{bin,lib} "$pack"/usr/share/postgresql "$pack"/lib
cp -L /usr/lib/postgresql/15/bin/{postgres,initdb,pg_ctl,psql} "$pack"/usr/lib/postgresql/15/bin/
cp -L /usr/lib/postgresql/15/lib/{plpgsql.so,dict_snowball.so} "$pack"/usr/lib/postgresql/15/lib/
cp -rL /usr/share/postgresql/15 "$pack"/usr/share/postgresql/
rm -rf "$pack"/usr/share/postgresql/15/man
for file in "$pack"/usr/lib/postgresql/15/bin/* "$pack"/usr/lib/postgresql/15/lib/*.so \
    /usr/lib/x86_64-linux-gnu/libpq.so.5; do
    ldd "$file" | awk '/=>/ {print $3}'
done | sort -u | grep -vE 'lib(c|m|pthread|dl|rt)\.so|ld-linux' | xargs -I{} cp -L {} "$pack"/lib/
strip "$pack"/usr/lib/postgresql/15/bin/* "$pack"/usr/lib/postgresql/15/lib/*.so "$pack"/lib/*
tar cJf "$out" -C "$pack" .
ls -la "$out"
