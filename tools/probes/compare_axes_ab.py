#!/usr/bin/env python3
"""Compares `foldkit-bench axes --csv` runs of a baseline tree and of this tree (the A/B of
scripts/gpu_check.sh ab-axes): per case, foldkit's per-call median in every run of each tree,
the median of those, and the time ratio new / base (< 1: the new tree is faster), with the % of
the read or copy ceiling each run measured beside it. A failed result check is flagged.

Usage: compare_axes_ab.py BASE_CSV[,BASE_CSV...] NEW_CSV[,NEW_CSV...]
"""
import statistics
import sys

from compare_reduce_ab import fnum, load


def runs(paths):
    """{case: [(median_us, pct_of_ceiling, check), ...]} of foldkit's rows, one entry a run."""
    out = {}
    for run in load(paths, key=lambda r: r["case"]):
        for case, r in run.items():
            out.setdefault(case, []).append((fnum(r["median_us"]), fnum(r["pct_of_ceiling_median"]), r.get("check", "")))
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    base, new = runs(sys.argv[1]), runs(sys.argv[2])
    cases = list(base) + [c for c in new if c not in base]  # the runs' order
    width = max((len(c) for c in cases), default=10)
    print(f"{'case':<{width}}  base us (% of ceiling) per run        new us (% of ceiling) per run         new/base")
    failed = []
    for case in cases:
        b, n = base.get(case, []), new.get(case, [])
        text = lambda rs: " ".join(f"{t:7.2f} ({p:5.1f})" for t, p, _ in rs)
        ratio = (statistics.median(t for t, _, _ in n) / statistics.median(t for t, _, _ in b)) if b and n else float("nan")
        print(f"{case:<{width}}  {text(b):<36} {text(n):<36} {ratio:6.3f}")
        failed += [f"{case} ({who})" for who, rs in (("base", b), ("new", n)) for _, _, c in rs if c != "ok"]
    print("result checks:", "all ok" if not failed else "FAILED: " + ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
