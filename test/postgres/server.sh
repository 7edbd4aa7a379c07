# Sourced by test/postgres/*.sh: starts Debian's postgresql server in a temporary data directory,
# listening on a Unix socket only and trusting local connections, as an unprivileged user where
# this runs as root (the server refuses root), and stops it and removes the directory on exit.
# Where no server is installed it says so and exits 77 (ctest: skipped), so that a test never
# passes silently. Defines: $bin (the server's programs), $dir, $port, $server (the URL's query:
# host, port, user), and the functions start, stop_server, sql DATABASE [psql options...] and
# database NAME (a fresh database; prints its URL).
initdb=$(ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$initdb" ]; then
    echo "SKIP: no PostgreSQL server installed (no /usr/lib/postgresql/*/bin/initdb):" \
        "apt-get install postgresql"
    exit 77
fi
bin=$(dirname "$initdb")
dir=$(mktemp -d "${TMPDIR:-/tmp}/tcc-postgres.XXXXXX")
chmod 755 "$dir"
as_server=()
if [ "$(id -u)" -eq 0 ]; then
    chown nobody "$dir"
    as_server=(runuser -u nobody --)
fi
stop_server() { # MODE: fast (a clean shutdown) or immediate
    (cd / && "${as_server[@]}" "$bin/pg_ctl" -D "$dir/data" -m "${1:-immediate}" stop \
        >/dev/null 2>&1) || true
}
cleanup_server() {
    stop_server immediate
    rm -rf "$dir"
}
trap cleanup_server EXIT
port=$((20000 + RANDOM % 20000))
(cd "$dir" && "${as_server[@]}" "$bin/initdb" -D "$dir/data" -U tcc --auth=trust -E UTF8 \
    >"$dir/initdb.log" 2>&1) || { cat "$dir/initdb.log"; exit 1; }
start() {
    (cd "$dir" && "${as_server[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
        -o "-k $dir -p $port -c listen_addresses=''" start >/dev/null) ||
        { cat "$dir/server.log"; exit 1; }
}
start
server="host=$dir&port=$port&user=tcc"
sql() { # database, then psql's options (its notices, such as "does not exist, skipping", unsaid)
    PGOPTIONS="-c client_min_messages=warning" \
        "$bin/psql" -X -q -v ON_ERROR_STOP=1 "postgresql:///$1?$server" "${@:2}"
}
database() {
    sql postgres -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1"
    echo "postgresql:///$1?$server"
}
