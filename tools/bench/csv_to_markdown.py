#!/usr/bin/env python3
"""Turn a foldkit-bench GPU CSV into the markdown table kept in docs/perf.md.

Usage: tools/bench/csv_to_markdown.py bench/results/<run>.csv
One row per (op, dtype, n): foldkit, CUB and ceiling times (per-call median and back-to-back
batch mean, in us), foldkit/CUB and foldkit/ceiling time ratios, and % of the ceiling's GB/s.
"""
import csv
import math
import sys


def main(path):
    rows = list(csv.DictReader(open(path)))
    cases, ceilings = {}, {}
    for r in rows:
        if r["mode"] != "gpu":
            continue
        if r["impl"] == "ceiling":  # timed over the same bytes; one row per size in bytes
            ceilings[int(r["bytes"])] = r
        else:
            cases.setdefault((r["op"], r["dtype"], int(r["n"])), {})[r["impl"]] = r
    print("| case | foldkit med / batch | CUB med / batch | ceiling med / batch | /CUB med | /CUB batch "
          "| /ceiling med | /ceiling batch | % ceiling GB/s med / batch |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (op, dtype, n), v in cases.items():
        f, c = v.get("foldkit"), v.get("cub")
        if f is None:
            continue
        e = ceilings.get(int(f["bytes"]))
        def pair(x):
            return f"{float(x['median_us']):.2f} / {float(x['batch_mean_us']):.2f}" if x else "-"
        def ratio(x):
            return f"{float(x):.2f}" if x else "-"
        print(f"| {op} {dtype} 2^{int(math.log2(n))} | {pair(f)} | {pair(c)} | {pair(e)} "
              f"| {ratio(f['ratio_to_cub_median'])} | {ratio(f['ratio_to_cub_batch'])} "
              f"| {ratio(f['ratio_to_ceiling_median'])} | {ratio(f['ratio_to_ceiling_batch'])} "
              f"| {float(f['pct_of_ceiling_median']):.1f} / {float(f['pct_of_ceiling_batch']):.1f} |")


if __name__ == "__main__":
    main(sys.argv[1])
