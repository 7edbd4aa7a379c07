#!/bin/bash
# Issue 13 on a 2-GPU host (bench/results-workers.md): a PostgreSQL server from Debian's
# packages (carried unpacked as .carry/pg.tar.xz, bench/pack_postgres.sh:
# usr/lib/postgresql/15/{bin,lib}, usr/share/postgresql/15, lib/), a coordinator with one
# worker (GPU 0), then with two (GPU 0 and 1): random search from nothing, 300 trials of one
# layer, two coordinator batch sizes, each pair twice; then 1000 trials.
#
# Each worker stands for a GPU host of its own: its GPU and its own half of the other cores
# (taskset, and as many builders), so that two workers have twice the GPUs and the CPUs of one.
# The coordinator and the server share the two cores left. tcc-tune measuring by itself on one
# worker's share is the reference. .carry/tools.tar.xz holds tcc-tune, stripped.
T=$PWD/.carry/t; rm -rf $T; mkdir -p $T; tar xJf .carry/tools.tar.xz -C $T
P=/tmp/pg; rm -rf $P; mkdir -p $P; tar xJf .carry/pg.tar.xz -C $P; chmod -R go+rX $P
W=/tmp/workers; rm -rf $W; mkdir -p $W; chmod 755 $W
export CUDA_CACHE_DISABLE=1
JL=$(find / -name "libnvJitLink.so.13*" -not -path "*/proc/*" 2>/dev/null | head -1)
export TCC_NVJITLINK=$JL LD_LIBRARY_PATH=$P/lib
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/gpu.txt
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
HALF=$((($(nproc) - 2) / 2))
CORES=("2-$((1 + HALF))" "$((2 + HALF))-$((1 + 2 * HALF))")
echo "$(nproc) cores: coordinator and server on 0-1, worker 0 on ${CORES[0]}, worker 1 on ${CORES[1]}"
bin=$P/usr/lib/postgresql/15/bin
D=$W/db; mkdir -p $D; as=(); [ "$(id -u)" -eq 0 ] && { chown nobody $D; as=(runuser -u nobody -- env LD_LIBRARY_PATH=$P/lib); }
(cd $D && "${as[@]}" $bin/initdb -D $D/data -U tcc --auth=trust -E UTF8 > $W/initdb.log 2>&1) || { echo "initdb failed"; tail -5 $W/initdb.log; }
(cd $D && taskset -c 0-1 "${as[@]}" $bin/pg_ctl -D $D/data -l $D/server.log -w -o "-k $D -p 5499 -c listen_addresses=''" start) || { echo "pg_ctl failed"; tail -5 $D/server.log; }
S="host=$D&port=5499&user=tcc"
$bin/psql -X -q "postgresql:///postgres?$S" -tA -c "SELECT version()"
L=r50_res3_3x3s2_b32
A="--template gemm --layer $L --layout nhwc --tuner random --seed 1 --measure-default off --progress lines --top 1"
summary() { grep -E "trials in|trials/s\)" $1 | tail -1; }
run() { # name, trials, coordinator batch, then the workers' GPUs
  local name=$1 trials=$2 batch=$3; shift 3; local pids=()
  $bin/psql -X -q "postgresql:///postgres?$S" -c "CREATE DATABASE $name"
  for dev in "$@"; do
    taskset -c ${CORES[$dev]} $T/tcc-tune --worker --db "postgresql:///$name?$S" --devices $dev \
      --builders $HALF --worker-name gpu$dev > $W/${name}_w$dev.log 2>&1 & pids+=($!)
  done
  sleep 3
  timeout 120 taskset -c 0-1 $T/tcc-tune $A --n-trial $trials --batch $batch --db "postgresql:///$name?$S" \
    --measure workers --arch sm_90a --device-name "$GPU" > $W/$name.txt 2>&1
  echo "$name rc=$? $(summary $W/$name.txt)"
  kill -TERM "${pids[@]}"; wait "${pids[@]}"
  tail -q -n 1 $W/${name}_w*.log
  $bin/psql -X -q "postgresql:///$name?$S" -tA -c "SELECT worker, count(*), max(attempts) FROM tcc_jobs GROUP BY worker"
}
for rep in 1 2; do
  for batch in 64 128; do
    run one_b${batch}_r$rep 300 $batch 0
    run two_b${batch}_r$rep 300 $batch 0 1
  done
done
run one_long 1000 128 0
run two_long 1000 128 0 1
for batch in 64 128; do
  taskset -c ${CORES[0]} timeout 120 $T/tcc-tune $A --n-trial 300 --batch $batch --builders $HALF --devices 0 \
    --db $W/local_$batch.db > $W/local_$batch.txt 2>&1
  echo "tcc-tune alone, batch $batch, GPU 0 and ${CORES[0]}: rc=$? $(summary $W/local_$batch.txt)"
done
(cd $D && "${as[@]}" $bin/pg_ctl -D $D/data -m fast stop)
tar czf $OUT/workers.tar.gz --exclude=workers/db/data -C /tmp workers
echo "done at $SECONDS s"
