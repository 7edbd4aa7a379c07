#!/bin/sh
# Random search against the model-based tuner on a GPU host (issue 12's bar): the gemm template
# on every layer of layers.csv in order, NHWC, from nothing (the default schedule not measured
# first), one database a tuner and seed, each exported as AutoTVM log lines; then
# bench/compare_tuners.py's table of trials to 95% of a final best.
#
# usage: bench/tune_tuners.sh path/to/tcc-tune layers.csv out-dir [seeds] [trials]
#   layers.csv names the layers (tcc-tune knows their shapes: --layer NAME),
#   seeds (default "1 2 3 4"), trials a layer (default 400). Each tcc-tune run gets 60 s; the
#   time a run took is in out-dir/TUNER_SEED_LAYER.txt. LD_LIBRARY_PATH must find XGBoost.
set -u

if [ $# -lt 3 ]; then
    echo "usage: $0 path/to/tcc-tune layers.csv out-dir [seeds] [trials]" >&2
    exit 2
fi
tune=$1 layers=$2 out=$3 seeds=${4:-1 2 3 4} trials=${5:-400}
here=$(dirname "$0")
mkdir -p "$out" || exit 1
for seed in $seeds; do
    for layer in $(tail -n +2 "$layers" | cut -d, -f1); do
        for tuner in random xgb; do
            log="$out/${tuner}_${seed}_$layer.txt"
            timeout 60 "$tune" --template gemm --layer "$layer" \
                --layout nhwc --tuner $tuner --measure-default off --n-trial "$trials" \
                --seed "$seed" --db "$out/${tuner}_$seed.db" --progress lines --top 1 >"$log" 2>&1
            echo "seed $seed $layer $tuner: rc=$? $(grep -o '([0-9.]* trials/s)' "$log")"
        done
    done
    for tuner in random xgb; do
        "$tune" --db "$out/${tuner}_$seed.db" --export "$out/${tuner}_$seed.jsonl" || exit 1
    done
done
python3 "$here/compare_tuners.py" $(for seed in $seeds; do printf '%s:%s ' "$out" "$seed"; done)
