#!/usr/bin/env python3
"""Choose kReduceTable (include/foldkit/cuda/tuning/reduce_tuning.hpp) from `foldkit-bench sweep` CSVs.

Usage: pick_reduce_table.py SWEEP.csv [SWEEP.csv ...] [--arg-from N]
  --arg-from N: argmax rows are taken only from the N-th CSV on (0-based), e.g. when earlier
  runs timed an older argmax kernel.

Per case and tier, a shape's score is the worse of (its per-call median / the best median) and
(its batch mean / the best batch mean), averaged over the CSVs that timed that tier. Up to
256 KiB the score is the median ratio alone: there the batch mean is the host's submission
rate (the same for every shape, and noisy), and the median is the call's GPU time. Per family
(value4 = sum and max f32), the pick minimises the worst score over the family's cases plus a
quarter of that at the neighbouring tiers (so that one noisy sample does not decide a tier).
Prints one table row per family, in the header's order and format.
"""
import collections
import csv
import re
import sys

FAMILIES = {  # family -> the sweep cases that stand for it
    "narrow": ["sum f16"],
    "value4": ["sum f32", "max f32"],
    "widen4": ["sum i32"],
    "value8": ["sum f64"],
    "arg4": ["argmax f32"],
}
TIERS = [4096 << t for t in range(19)]
HOST_BOUND_BYTES = 256 * 1024


def load(path):
    by = collections.defaultdict(dict)
    with open(path) as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            if r["impl"] == "foldkit" and r["check"] == "ok":
                by[(r["op"] + " " + r["dtype"], int(r["bytes"]))][r["config"]] = (
                    float(r["median_us"]), float(r["batch_mean_us"]))
    return by


def main(argv):
    arg_from = 0
    if "--arg-from" in argv:
        i = argv.index("--arg-from")
        arg_from = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    runs = [load(p) for p in argv]
    if not runs:
        sys.exit(__doc__)

    def score_in(by, case, size, cfg):
        d = by.get((case, size))
        if not d or cfg not in d:
            return None
        best_median = min(v[0] for v in d.values())
        best_batch = min(v[1] for v in d.values())
        if size <= HOST_BOUND_BYTES:
            return d[cfg][0] / best_median
        return max(d[cfg][0] / best_median, d[cfg][1] / best_batch)

    def score(family, case, size, cfg):
        use = runs[arg_from:] if family == "arg4" else runs
        got = [s for s in (score_in(by, case, size, cfg) for by in use) if s is not None]
        return sum(got) / len(got) if got else 9.0

    for family, cases in FAMILIES.items():
        configs = set()
        for by in runs:
            for (case, _), d in by.items():
                if case in cases:
                    configs |= set(d)
        if not configs:  # a partial sweep (--dtypes, --tiers) has no case of this family
            print("/* %-6s */ (no case of this family in these runs)" % family)
            continue
        cells = []
        for i, size in enumerate(TIERS):
            neighbours = [TIERS[j] for j in (i - 1, i + 1) if 0 <= j < len(TIERS)]

            def total(cfg):
                here = max(score(family, c, size, cfg) for c in cases)
                near = max(score(family, c, s, cfg) for c in cases for s in neighbours)
                return here + 0.25 * near

            if all(score(family, c, size, cfg) >= 9.0 for c in cases for cfg in configs):
                cells.append("--")  # this tier was not swept (--tiers)
                continue
            pick = min(sorted(configs), key=total)
            threads, unroll, per_sm = re.match(r"threads=(\d+) unroll=(\d+) blocks/SM=(\d+)", pick).groups()
            cells.append("{%s, %s, %s}" % (threads, per_sm, unroll))
        print("/* %-6s */ {%s}," % (family, ", ".join(cells)))


if __name__ == "__main__":
    main(sys.argv[1:])
