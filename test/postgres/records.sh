#!/usr/bin/env bash
# The records store on a real PostgreSQL server (issue 13), started and stopped by server.sh
# (exit 77, ctest's skip, where none is installed): tcc-tune and tcc-conv against it.
#
# usage: records.sh path/to/build   (the folder holding tcc-tune and tcc-conv)
set -euo pipefail

build=$(cd "$1" && pwd)
tune=$build/tcc-tune conv=$build/tcc-conv
# shellcheck source=server.sh
. "$(dirname "$0")/server.sh"

failures=0
check() { # description, then a command that must succeed
    local what=$1
    shift
    if "$@"; then echo "ok - $what"; else echo "FAIL - $what"; failures=$((failures + 1)); fi
}
# The records of an export without their times (all_cost, timestamp), which two runs differ in.
untimed() {
    python3 -c 'import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line); r["result"][2:4] = [0, 0]; print(json.dumps(r, sort_keys=True))' "$1"
}
same_records() { diff <(untimed "$1") <(untimed "$2") >/dev/null; }
lines() { wc -l <"$1" | tr -d ' '; }
tune_synthetic() { # db, seed, trials, extra options...
    "$tune" --template gemm --layer r50_res2_3x3_b32 --measure synthetic --tuner random \
        --db "$1" --seed "$2" --n-trial "$3" "${@:4}" >/dev/null 2>&1
}
work=$(mktemp -d "${TMPDIR:-/tmp}/tcc-postgres-work.XXXXXX")
trap 'cleanup_server; rm -rf "$work"' EXIT

# 1. A tuning run records the same trials into PostgreSQL as into SQLite.
url=$(database records)
tune_synthetic "$url" 7 48
tune_synthetic "$work/records.db" 7 48
"$tune" --db "$url" --export "$work/pg.jsonl"
"$tune" --db "$work/records.db" --export "$work/sqlite.jsonl"
check "a run's records in PostgreSQL equal those in SQLite" same_records "$work/pg.jsonl" "$work/sqlite.jsonl"
check "a run's records are there ($(lines "$work/pg.jsonl") lines)" test "$(lines "$work/pg.jsonl")" -ge 48

# 2. Export from PostgreSQL equals export from SQLite for the same records, to the bit.
url=$(database imported)
"$tune" --db "$url" --import "$work/sqlite.jsonl" >/dev/null 2>&1
"$tune" --db "$url" --export "$work/imported.jsonl"
check "an SQLite export imported into PostgreSQL exports the same lines" \
    diff "$work/sqlite.jsonl" "$work/imported.jsonl"

# 2b. An SQLite records file migrated into PostgreSQL: its records, to the bit.
url=$(database migrated)
"$tune" --db "$url" --import "$work/records.db" >"$work/migrated.out" 2>&1
"$tune" --db "$url" --export "$work/migrated.jsonl"
check "an SQLite file migrated into PostgreSQL ($(cat "$work/migrated.out"))" \
    diff "$work/sqlite.jsonl" "$work/migrated.jsonl"

# 3. --tuned reads the best record from PostgreSQL as from SQLite.
"$conv" --layer r50_res2_3x3_b32 --arch sm_90a --tuned --db "$url" -o /dev/null 2>"$work/tuned.pg"
"$conv" --layer r50_res2_3x3_b32 --arch sm_90a --tuned --db "$work/records.db" -o /dev/null \
    2>"$work/tuned.sqlite"
check "tcc-conv --tuned picks a record from PostgreSQL" grep -q "schedule: tuned: config" "$work/tuned.pg"
check "the same record as from SQLite" diff "$work/tuned.pg" "$work/tuned.sqlite"

# 4. Two tuners writing one database at once: every record of both is there. (Two layers: the
# tuners of one would learn from each other's records, as they should, and differ from alone.)
url=$(database shared)
other=(--layer r50_res3_1x1_b256)
tune_synthetic "$url" 11 200 & first=$!
tune_synthetic "$url" 12 200 "${other[@]}" & second=$!
wait $first && wait $second
tune_synthetic "$work/eleven.db" 11 200
tune_synthetic "$work/twelve.db" 12 200 "${other[@]}"
"$tune" --db "$url" --export "$work/shared.jsonl"
"$tune" --db "$work/eleven.db" --export "$work/eleven.jsonl"
"$tune" --db "$work/twelve.db" --export "$work/twelve.jsonl"
check "two tuners at once: $(lines "$work/shared.jsonl") records, as many as alone" \
    test "$(lines "$work/shared.jsonl")" -eq $(($(lines "$work/eleven.jsonl") + $(lines "$work/twelve.jsonl")))

# 5. A tuner killed mid-run loses no record it added, and the database takes the next tuner's.
url=$(database killed)
"$tune" --template gemm --layer r50_res2_3x3_b32 --measure synthetic --tuner random --db "$url" \
    --seed 13 --n-trial 1000000 --batch 8 >/dev/null 2>&1 &
victim=$!
for _ in $(seq 50); do
    sleep 0.1
    [ "$(sql killed -tA -c 'SELECT count(*) FROM tcc_trials' 2>/dev/null || echo 0)" -ge 40 ] && break
done
kill -KILL $victim
wait $victim 2>/dev/null || true
"$tune" --db "$url" --export "$work/killed.jsonl"
kept=$(lines "$work/killed.jsonl")
check "a tuner killed with SIGKILL left its $kept records" test "$kept" -ge 40
tune_synthetic "$url" 14 16
"$tune" --db "$url" --export "$work/after.jsonl"
check "and the next tuner adds to them" test "$(lines "$work/after.jsonl")" -gt "$kept"

# 6. A server restart loses no record written before it.
stop_server fast
start
"$tune" --db "$url" --export "$work/restarted.jsonl"
check "a server restart kept every record" diff "$work/after.jsonl" "$work/restarted.jsonl"

# 7. Bad input: one line each, and the exit status of its kind.
one_line_error() { # expected status, expected text, command...
    local status=0 want=$1 text=$2
    shift 2
    "$@" >"$work/out" 2>"$work/err" || status=$?
    [ "$status" -eq "$want" ] && [ "$(wc -l <"$work/err")" -eq 1 ] && grep -q "$text" "$work/err" ||
        { echo "  status $status (want $want): $(cat "$work/err")"; return 1; }
}
check "a URL that does not parse" one_line_error 2 "postgresql://\\[::1/x: cannot connect: " \
    "$tune" --db "postgresql://[::1/x" --export "$work/x.jsonl"
check "a role the server refuses" one_line_error 2 'role "nobody_here" does not exist' \
    "$tune" --db "postgresql:///records?host=$dir&port=$port&user=nobody_here" --export "$work/x.jsonl"
check "the URL named without its password" one_line_error 2 "postgresql://someone@/records" \
    "$tune" --db "postgresql://someone:secret@/records?host=$dir&port=$port" --export "$work/x.jsonl"
check "the password nowhere" bash -c "! grep -q secret '$work/err'"
sql records -c "UPDATE tcc_schema SET version = 99"
check "tables of another schema version" one_line_error 3 "schema version 99" \
    "$tune" --db "postgresql:///records?$server" --export "$work/x.jsonl"

if [ "$failures" -gt 0 ]; then
    echo "FAIL: $failures checks"
    exit 1
fi
echo "PASS: PostgreSQL records"
