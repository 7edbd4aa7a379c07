#!/usr/bin/env python3
"""Random search against the model-based tuner, from tcc-tune's exported records.

    compare_tuners.py DIR:SEED ...

reads DIR/random_SEED.jsonl and DIR/xgb_SEED.jsonl (tcc-tune --db ... --export, one database a
tuner and seed, layers tuned in order) and prints, per layer, how many trials each tuner took
to reach 95% of a final best: its own, and the better of the two (the common target); then the
medians over the seeds and the layers where the model-based tuner's median is the lower.
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
    wins = {"own": 0, "common": 0}
    show = lambda pairs: " ".join(f"{a if a < NOT_REACHED else '>'}:{b if b < NOT_REACHED else '>'}" for a, b in pairs)
    print(f"{'workload (N H W C K R S)':32} {'own, random:xgb a seed':28} {'common, random:xgb':28} "
          f"| median own | median common | median final ms")
    for workload in runs[0][1]:
        own, common, final = [], [], []
        for random_runs, xgb_runs in runs:
            r, x = best_so_far(random_runs[workload]), best_so_far(xgb_runs[workload])
            own.append((trials_to(r, r[-1] / 0.95), trials_to(x, x[-1] / 0.95)))
            target = min(r[-1], x[-1]) / 0.95
            common.append((trials_to(r, target), trials_to(x, target)))
            final.append((r[-1] * 1e3, x[-1] * 1e3))
        median = lambda pairs, i: statistics.median(p[i] for p in pairs)
        wins["own"] += median(own, 1) < median(own, 0)
        wins["common"] += median(common, 1) < median(common, 0)
        print(f"{str(workload):32} {show(own):28} {show(common):28} | {median(own, 0):5.1f} {median(own, 1):5.1f} "
              f"| {median(common, 0):5.1f} {median(common, 1):5.1f} | {median(final, 0):.4f} {median(final, 1):.4f}")
    print(f"model-based tuner's median the lower: own final best on {wins['own']}, "
          f"common on {wins['common']} of {len(runs[0][1])} workloads")


if __name__ == "__main__":
    main(sys.argv[1:])
