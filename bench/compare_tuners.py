#!/usr/bin/env python3
"""Random search against the model-based tuner, from tcc-tune's exported records.

    compare_tuners.py DIR:SEED ...

reads DIR/random_SEED.jsonl and DIR/xgb_SEED.jsonl (tcc-tune --db ... --export, one database a
tuner and seed, layers tuned in order) and prints, per layer, how many trials each tuner took
to reach 95% of a final best, read three ways: each tuner's own final best ("own"); the
model-based tuner's final best, for both ("xgb's"); the better of the two finals ("common");
then the medians over the seeds and the layers where the model-based tuner's median is the
lower.
Trials count as tcc-tune counts them: measured configs, not those refused or copied.
"""
import collections
import json
import statistics
import sys

NOT_REACHED = 999  # past any run's trials


def load(path):
    """Per workload, each trial's best repeat in seconds (None for a failed one), in order."""
    runs = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            record = json.loads(line)
            costs, error = record["result"][0], record["result"][1]
            if error in (1, 2):  # refused by the template or tcc: no trial
                continue
            runs[tuple(record["input"][2][:7])].append(min(costs) if error == 0 else None)
    return runs


def best_so_far(costs):
    best, out = float("inf"), []
    for c in costs:
        if c is not None:
            best = min(best, c)
        out.append(best)
    return out


def trials_to(curve, target):
    return next((i + 1 for i, c in enumerate(curve) if c <= target * (1 + 1e-12)), NOT_REACHED)


def main(args):
    runs = []
    for arg in args:
        directory, seed = arg.split(":")
        runs.append((load(f"{directory}/random_{seed}.jsonl"), load(f"{directory}/xgb_{seed}.jsonl")))
    readings = ("own", "xgb's", "common")
    wins = dict.fromkeys(readings, 0)
    show = lambda pairs: " ".join(f"{a if a < NOT_REACHED else '>'}:{b if b < NOT_REACHED else '>'}" for a, b in pairs)
    print(f"{'workload (N H W C K R S)':32} " + " ".join(f"{r + ', random:xgb a seed':28}" for r in readings)
          + " | medians own | xgb's | common | median final ms")
    for workload in runs[0][1]:
        pairs = {r: [] for r in readings}
        final = []
        for random_runs, xgb_runs in runs:
            r, x = best_so_far(random_runs[workload]), best_so_far(xgb_runs[workload])
            targets = {"own": (r[-1], x[-1]), "xgb's": (x[-1], x[-1]), "common": (min(r[-1], x[-1]),) * 2}
            for reading, (tr, tx) in targets.items():
                pairs[reading].append((trials_to(r, tr / 0.95), trials_to(x, tx / 0.95)))
            final.append((r[-1] * 1e3, x[-1] * 1e3))
        median = lambda pairs, i: statistics.median(p[i] for p in pairs)
        for reading in readings:
            wins[reading] += median(pairs[reading], 1) < median(pairs[reading], 0)
        print(f"{str(workload):32} " + " ".join(f"{show(pairs[r]):28}" for r in readings) + " | "
              + " | ".join(f"{median(pairs[r], 0):5.1f} {median(pairs[r], 1):5.1f}" for r in readings)
              + f" | {median(final, 0):.4f} {median(final, 1):.4f}")
    print("model-based tuner's median the lower: "
          + ", ".join(f"{r} target on {wins[r]}" for r in readings) + f" of {len(runs[0][1])} workloads")


if __name__ == "__main__":
    main(sys.argv[1:])
