#!/usr/bin/env python3
"""Compares foldkit-bench reduction CSVs of two builds timed alternately on one machine.

Usage: compare_reduce_ab.py BASE.csv[,BASE2.csv...] NEW.csv[,NEW2.csv...]

For every foldkit case (op, dtype, n) prints the base and new per-call medians and batch means
(the mean over the given runs of each) and new/base, and each build's ratio to CUB and to the
read ceiling timed in the same run (means over its runs).
"""
import csv
import statistics
import sys


def load(paths, key=lambda r: (r["op"], r["dtype"], int(r["n"]))):
    """One {key(row): row} of foldkit's rows per CSV of the comma-separated list (also used by
    compare_axes_ab.py, with its own key)."""
    runs = []
    for p in paths.split(","):
        rows = {}
        with open(p, newline="") as f:
            for r in csv.DictReader(f):
                if r["impl"] != "foldkit":
                    continue
                rows[key(r)] = r
        runs.append(rows)
    return runs


def fnum(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return float("nan")


def summary(runs, key, field):
    vals = [fnum(run[key][field]) for run in runs if key in run]
    return statistics.mean(vals), (max(vals) - min(vals)) / 2 if len(vals) > 1 else 0.0


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    base, new = load(sys.argv[1]), load(sys.argv[2])
    keys = [k for k in base[0] if k in new[0]]
    print(f"{'case':<20} {'base med':>9} {'new med':>9} {'new/base':>8} | {'base bat':>9} {'new bat':>9} {'new/base':>8} |"
          f" {'/CUB med b->n':>15} {'/CUB bat b->n':>15} | {'/ceil med b->n':>15} {'/ceil bat b->n':>15}")
    for k in keys:
        op, dt, n = k
        bm, _ = summary(base, k, "median_us")
        nm, _ = summary(new, k, "median_us")
        bb, _ = summary(base, k, "batch_mean_us")
        nb, _ = summary(new, k, "batch_mean_us")
        cm = [summary(x, k, "ratio_to_cub_median")[0] for x in (base, new)]
        cb = [summary(x, k, "ratio_to_cub_batch")[0] for x in (base, new)]
        em = [summary(x, k, "ratio_to_ceiling_median")[0] for x in (base, new)]
        eb = [summary(x, k, "ratio_to_ceiling_batch")[0] for x in (base, new)]
        name = f"{op} {dt} 2^{n.bit_length() - 1}" if n & (n - 1) == 0 else f"{op} {dt} {n}"
        print(f"{name:<20} {bm:9.3f} {nm:9.3f} {nm / bm:8.3f} | {bb:9.3f} {nb:9.3f} {nb / bb:8.3f} |"
              f" {cm[0]:7.3f}->{cm[1]:6.3f} {cb[0]:7.3f}->{cb[1]:6.3f} | {em[0]:7.3f}->{em[1]:6.3f} {eb[0]:7.3f}->{eb[1]:6.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
