#!/bin/bash
# Issue 13 on a 2-GPU host (bench/results-workers.md): a PostgreSQL server from Debian's
# packages (carried unpacked as .carry/pg.tar.xz: usr/lib/postgresql/15/{bin,lib},
# usr/share/postgresql/15, lib/), a coordinator with one worker (GPU 0), then with two (GPU 0
# and 1), random search from nothing, 300 trials of one layer each, two claim sizes.
# .carry/tools.tar.xz holds tcc-tune and its libraries (.carry/pack.sh).
T=$PWD/.carry/t; rm -rf $T; mkdir -p $T; tar xJf .carry/tools.tar.xz -C $T
P=/tmp/pg; rm -rf $P; mkdir -p $P; tar xJf .carry/pg.tar.xz -C $P
W=/tmp/w61; rm -rf $W; mkdir -p $W; chmod 755 $W
export CUDA_CACHE_DISABLE=1
JL=$(find / -name "libnvJitLink.so.13*" -not -path "*/proc/*" 2>/dev/null | head -1)
export TCC_NVJITLINK=$JL LD_LIBRARY_PATH=$P/lib:$T/lib
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/gpu.txt
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
bin=$P/usr/lib/postgresql/15/bin
D=$W/db; mkdir -p $D; as=(); [ "$(id -u)" -eq 0 ] && { chown nobody $D; as=(runuser -u nobody -- env LD_LIBRARY_PATH=$P/lib); }
(cd $D && "${as[@]}" $bin/initdb -D $D/data -U tcc --auth=trust -E UTF8 > $W/initdb.log 2>&1) || { echo "initdb failed"; tail -5 $W/initdb.log; }
(cd $D && "${as[@]}" $bin/pg_ctl -D $D/data -l $D/server.log -w -o "-k $D -p 5499 -c listen_addresses=''" start) || { echo "pg_ctl failed"; tail -5 $D/server.log; }
S="host=$D&port=5499&user=tcc"
$bin/psql -X -q "postgresql:///postgres?$S" -c "CREATE DATABASE one" -c "CREATE DATABASE two" -c "CREATE DATABASE three" -c "CREATE DATABASE four" -c "SELECT version()" -tA
L=r50_res3_3x3s2_b32
A="--template gemm --layer $L --layout nhwc --tuner random --seed 1 --n-trial 300 --measure-default off --progress lines --top 1"
summary() { grep -E "trials in|trials/s\)" $1 | tail -1; }
run() { # name db workers(devices...)
  local name=$1 db=$2; shift 2; local pids=()
  for dev in "$@"; do $T/tcc-tune --worker --db "postgresql:///$db?$S" --devices $dev --batch $WB --worker-name gpu$dev > $W/${name}_w$dev.log 2>&1 & pids+=($!); done
  sleep 3
  timeout 90 $T/tcc-tune $A --batch $CB --db "postgresql:///$db?$S" --measure workers --arch sm_90a --device-name "$GPU" > $W/$name.txt 2>&1
  echo "$name rc=$? $(summary $W/$name.txt)"
  kill -TERM "${pids[@]}"; wait "${pids[@]}"
  tail -q -n 1 $W/${name}_w*.log
}
WB=16 CB=64; run one_worker_16_64 one 0; run two_workers_16_64 two 0 1
WB=8 CB=128; run one_worker_8_128 three 0; run two_workers_8_128 four 0 1
for devs in 0 0,1; do
  timeout 90 $T/tcc-tune $A --db $W/local_$devs.db --devices $devs > $W/local_$devs.txt 2>&1
  echo "local --devices $devs rc=$? $(summary $W/local_$devs.txt)"
done
$bin/psql -X -q "postgresql:///four?$S" -tA -c "SELECT worker, count(*), max(attempts) FROM tcc_jobs GROUP BY worker"
(cd $D && "${as[@]}" $bin/pg_ctl -D $D/data -m fast stop)
tar czf $OUT/w61.tar.gz --exclude=w61/db/data -C /tmp w61
echo "done at $SECONDS s"
