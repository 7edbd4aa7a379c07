#!/usr/bin/env bash
# Tuning on workers through the jobs of a PostgreSQL store (issue 13), on a server server.sh
# starts (exit 77, ctest's skip, where none is installed), with the synthetic measurer:
#   1. a coordinator and three workers tune to the end: every job is measured once, and the
#      records are those of the same run measured locally into SQLite; two coordinators of two
#      layers at once share the workers, and a short run is not left behind a long one;
#   2. a worker killed with SIGKILL mid-job: its jobs are queued again and finished by others;
#   3. a job on which two workers stopped answering is recorded as a RUNTIME_DEVICE error;
#   4. the server restarted mid-run: the coordinator stops with one line, no written record is
#      lost, and the workers, which waited, finish the next run's jobs.
#
# usage: workers.sh path/to/build   (the folder holding tcc-tune)
set -uo pipefail

build=$(cd "$1" && pwd)
tune=$build/tcc-tune
# shellcheck source=server.sh
. "$(dirname "$0")/server.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/tcc-workers.XXXXXX")
workers=()
finish() {
    [ ${#workers[@]} -gt 0 ] && kill -KILL "${workers[@]}" 2>/dev/null
    cleanup_server
    rm -rf "$work"
}
trap finish EXIT

failures=0
check() { # description, then a command that must succeed
    local what=$1
    shift
    if "$@"; then echo "ok - $what"; else echo "FAIL - $what"; failures=$((failures + 1)); fi
}
value() { sql "$1" -tA -c "$2"; } # database, query: its one value
# The same while waiting on a run: 0 until its coordinator has created the tables.
polled() { value "$1" "$2" 2>/dev/null || echo 0; }
# A worker on the synthetic cost, in the background; its pid appended to workers[].
worker() { # database URL, name, options...
    "$tune" --worker --db "$1" --worker-name "$2" --measure synthetic --arch sm_90a "${@:3}" \
        2>"$work/$2.log" &
    workers+=($!)
}
stop_workers() {
    kill -TERM "${workers[@]}" 2>/dev/null
    wait "${workers[@]}" 2>/dev/null
    workers=()
}
tuning=(--template gemm --layer r50_res2_3x3_b32 --tuner random --batch 16 --progress lines)
coordinate() { # database URL, seed, trials, options...
    "$tune" "${tuning[@]}" --db "$1" --seed "$2" --n-trial "$3" --measure workers \
        --arch sm_90a --device-name synthetic "${@:4}"
}
# Two exports agree: every config both measured has one record, the same in both but for its
# times, and at least MIN trials that ran are in both. (Where workers measure, the coordinator
# proposes its next batch before the last is in, and so a different surplus of configs, past
# its trials, for the refusals it expects.)
agree() { # export, export, MIN
    python3 -c 'import json, sys
def load(path):
    records = {}
    for line in open(path):
        r = json.loads(line)
        r["result"][2:4] = [0, 0]
        key = json.dumps([r["input"], r["config"]["index"]])
        assert key not in records, "two records of " + key
        records[key] = r
    return records
a, b = load(sys.argv[1]), load(sys.argv[2])
both = a.keys() & b.keys()
differ = sum(a[k] != b[k] for k in both)
ran = sum(a[k]["result"][1] == 0 for k in both)
print(f"  {len(both)} configs in both, {ran} of them ran, {differ} differ")
sys.exit(differ > 0 or ran < int(sys.argv[3]))' "$@"
}

# 1. Three workers, to the end.
url=$(database tuned)
for name in one two three; do worker "$url" "$name" --batch 4; done
coordinate "$url" 5 120 >"$work/coordinator.out" 2>"$work/coordinator.err"
check "the coordinator finished (status $?)" test $? -eq 0
stop_workers
"$tune" "${tuning[@]}" --db "$work/local.db" --seed 5 --n-trial 120 --measure synthetic \
    --arch sm_90a >/dev/null 2>&1
"$tune" --db "$url" --export "$work/workers.jsonl"
"$tune" --db "$work/local.db" --export "$work/local.jsonl"
check "the workers' records are those of the run measured locally" \
    agree "$work/workers.jsonl" "$work/local.jsonl" 120
jobs=$(value tuned "SELECT count(*) FROM tcc_jobs WHERE state = 'done'")
check "$jobs jobs, each measured once: a record each, no job claimed twice" test \
    "$(value tuned "SELECT count(DISTINCT record_id) || ' ' || max(attempts) FROM tcc_jobs")" \
    = "$jobs 1" -a "$(value tuned "SELECT count(*) FROM tcc_trials")" -eq "$jobs"
check "the workers shared them" test \
    "$(value tuned "SELECT count(DISTINCT worker) FROM tcc_jobs")" -ge 2

# 1b. Two coordinators of two layers at once share one pool of workers.
url=$(database shared)
for name in left right; do worker "$url" "$name" --batch 4; done
coordinate "$url" 10 60 >/dev/null 2>"$work/first.err" & first=$!
coordinate "$url" 11 60 --layer r50_res3_1x1_b256 >/dev/null 2>"$work/second.err" & second=$!
wait $first && wait $second
check "two coordinators at once both finished (status $?)" test $? -eq 0
stop_workers
"$tune" --db "$url" --export "$work/shared.jsonl"
for seed in 10 11; do
    layer=$([ $seed = 10 ] && echo r50_res2_3x3_b32 || echo r50_res3_1x1_b256)
    "$tune" "${tuning[@]}" --layer $layer --db "$work/alone.db" --seed $seed --n-trial 60 \
        --measure synthetic --arch sm_90a >/dev/null 2>&1
done
"$tune" --db "$work/alone.db" --export "$work/alone.jsonl"
check "each run's records are those it measures alone" \
    agree "$work/shared.jsonl" "$work/alone.jsonl" 120
check "one pool of workers served both runs" test "$(value shared \
    "SELECT count(DISTINCT run) || ' ' || count(*) FILTER (WHERE state <> 'done') FROM tcc_jobs")" \
    = "2 0"

# 1c. Two runs share one worker: the second's jobs are not left behind the first's, although
# the first always has its next batch queued (its streams end after 1 s here, 10 s by default).
url=$(database fair)
TCC_TUNE_SYNTHETIC_MS=5 TCC_TUNE_STREAM_S=1 worker "$url" alone --batch 4
coordinate "$url" 12 1500 >/dev/null 2>"$work/long.err" & long=$!
sleep 1
coordinate "$url" 13 20 --layer r50_res3_1x1_b256 >/dev/null 2>"$work/short.err"
short=$?
kill -0 $long 2>/dev/null
check "a short run finished (status $short) while a long one on the same worker still ran" \
    test $short -eq 0 -a $? -eq 0
wait $long
check "and the long one finished too (status $?)" test $? -eq 0
stop_workers

# 2. A worker killed mid-job: its jobs queued again once its heartbeat is 1 s old.
url=$(database killed)
TCC_TUNE_SYNTHETIC_MS=2000 worker "$url" victim --batch 4
victim=${workers[0]}
coordinate "$url" 6 40 --worker-grace 3 >/dev/null 2>"$work/killed.err" &
coordinator=$!
for _ in $(seq 300); do
    [ "$(polled killed "SELECT count(*) FROM tcc_jobs WHERE worker = 'victim'")" -gt 0 ] && break
    sleep 0.1
done
kill -KILL "$victim"
workers=()
worker "$url" healthy --batch 4
wait $coordinator
check "the coordinator finished after a worker was killed (status $?)" test $? -eq 0
stop_workers
requeue_line=$(grep "jobs of silent workers queued again" "$work/killed.err")
check "the killed worker's jobs were queued again: '$requeue_line'" test -n "$requeue_line"
requeued=$(value killed "SELECT count(*) FROM tcc_jobs WHERE attempts = 2")
check "and finished by another ($requeued), once each" test "$requeued" -ge 1 -a "$(value killed \
    "SELECT count(*) FROM tcc_jobs WHERE attempts = 2 AND state = 'done' AND worker = 'healthy'")" \
    -eq "$requeued" -a "$(value killed "SELECT count(*) FROM tcc_trials")" -eq \
    "$(value killed "SELECT count(*) FROM tcc_jobs")"

# 3. A job two workers stopped answering on: an error, not tried a third time.
url=$(database poison)
coordinate "$url" 7 4 --measure-default off --batch 1 --worker-grace 3 >/dev/null \
    2>"$work/poison.err" &
coordinator=$!
for round in 1 2; do
    TCC_TUNE_SYNTHETIC_MS=60000 worker "$url" "stuck$round" --batch 1
    for _ in $(seq 300); do
        [ "$(polled poison "SELECT count(*) FROM tcc_jobs WHERE worker = 'stuck$round'")" -gt 0 ] &&
            break
        sleep 0.1
    done
    kill -KILL "${workers[@]}"
    workers=()
    # Its job queued again before the next worker starts, which then claims it (the oldest)
    # rather than the next batch's, which the coordinator has queued already.
    for _ in $(seq 300); do
        [ "$(polled poison "SELECT count(*) FROM tcc_jobs WHERE worker = 'stuck$round' AND state = 'running'")" -eq 0 ] &&
            break
        sleep 0.1
    done
done
worker "$url" healthy --batch 1
wait $coordinator
check "the coordinator finished after two workers died on one job (status $?)" test $? -eq 0
stop_workers
check "that job is recorded as RUNTIME_DEVICE, its workers named" test "$(value poison \
    "SELECT count(*) FROM tcc_trials WHERE error_no = 4 AND message LIKE '%stopped answering 2 times (the last: stuck2)%'")" \
    -eq 1

# 4. The server restarted mid-run.
url=$(database restarted)
for name in left right; do TCC_TUNE_SYNTHETIC_MS=20 worker "$url" "$name" --batch 2; done
coordinate "$url" 8 100000 >/dev/null 2>"$work/restarted.err" &
coordinator=$!
for _ in $(seq 300); do
    [ "$(polled restarted "SELECT count(*) FROM tcc_trials")" -ge 20 ] && break
    sleep 0.1
done
stop_server fast
start
wait $coordinator
status=$?
check "the coordinator stops when the server goes away (status $status), in one line" test \
    $status -eq 1 -a "$(grep -c . "$work/restarted.err")" -ge 1 -a \
    "$(grep -c "tcc-tune: error: records postgresql:///restarted" "$work/restarted.err")" -eq 1
# One statement, one snapshot: the workers go on measuring the dead run's jobs meanwhile.
counts=$(value restarted "SELECT (SELECT count(*) FROM tcc_jobs WHERE state = 'done') || ' ' || \
    (SELECT count(*) FROM tcc_jobs j JOIN tcc_trials t ON t.id = j.record_id) || ' ' || \
    (SELECT count(*) FROM tcc_trials)")
read -r done_jobs with_record records <<<"$counts"
check "no record written before is lost: each of $done_jobs finished jobs has its record" test \
    "$done_jobs" -eq "$with_record" -a "$records" -ge 20
coordinate "$url" 9 12 --worker-grace 3 >/dev/null 2>"$work/again.err"
check "the workers came back and measured the next run (status $?)" test $? -eq 0
stop_workers
check "after waiting for the server" grep -q "trying again" "$work/left.log"

if [ "$failures" -gt 0 ]; then
    for log in "$work"/*.log "$work"/*.err; do echo "== $log"; tail -n 5 "$log"; done
    echo "FAIL: $failures checks"
    exit 1
fi
echo "PASS: PostgreSQL workers"
