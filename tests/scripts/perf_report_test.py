#!/usr/bin/env python3
"""Tests of scripts/perf_report.py on a small synthetic run: a LATEST file and hand-made CSVs in a
temporary directory, docs with the markers. Checks a few computed numbers, the "ceiling beaten"
detection, old CSVs without the metadata columns, idempotence and --check.

  python3 tests/scripts/perf_report_test.py
  PERF_REPORT=/path/to/perf_report.py python3 tests/scripts/perf_report_test.py   (another copy)
"""
import csv
import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(os.environ.get("PERF_REPORT") or
              Path(__file__).resolve().parents[2] / "scripts" / "perf_report.py")

BASE = ["gpu_or_cpu_name", "date", "mode", "impl", "op", "dtype", "n", "bytes", "median_us",
        "batch_mean_us", "gbps_median", "gbps_batch", "pct_of_ceiling_median",
        "pct_of_ceiling_batch", "ratio_to_cub_median", "ratio_to_cub_batch",
        "ratio_to_ceiling_median", "ratio_to_ceiling_batch", "config", "check"]
META = ["commit", "warmup", "reps_median", "reps_batch", "gate", "order", "memory"]
LADDER = ["gpu", "date", "seed", "table", "variant", "element", "rung", "n", "bytes_moved",
          "l2_resident", "shape", "median_us", "batch_us", "gbps", "pct_of_ceiling",
          "speedup_vs_rung0", "check", "note"]
GPU = "Test GPU 80GB"
DATE = "2026-11-27T10:00:00Z"


def row(impl, op, dtype, n, med, batch, mode="gpu", config="", check="", meta=None, elem=4):
    r = {k: "" for k in BASE}
    r.update(gpu_or_cpu_name=GPU if mode == "gpu" else "Test CPU", date=DATE, mode=mode,
             impl=impl, op=op, dtype=dtype, n=str(n), bytes=str(n * elem),
             median_us=f"{med:.3f}", batch_mean_us=f"{batch:.3f}", config=config, check=check)
    if meta is not None:
        r.update(meta)
    return r


NEW_META = dict(commit="0123456789ab-dirty", warmup="5", reps_median="50", reps_batch="200",
                gate="gated", order="interleaved",
                memory="inputs rotated over 1024 MiB (4 copies)")


def write_csv(path, fields, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows:
            w.writerow(r)


def make_tree(root: Path, with_busy=True):
    res = root / "bench" / "results"
    res.mkdir(parents=True)
    (root / "docs").mkdir()
    m = NEW_META
    # Reductions (new format). Two ops at 2^20 with different ceilings in their own cases: each
    # foldkit row must pair with the ceiling timed beside it.
    reduce_rows = [
        row("foldkit", "sum", "f32", 1 << 20, 4.0, 3.0, check="ok", meta=m),
        row("cub", "sum", "f32", 1 << 20, 5.0, 6.0, meta=m),
        row("ceiling-variant", "read", "f32", 1 << 20, 2.5, 2.5, meta=m),  # skipped: a variant
        row("ceiling", "read", "f32", 1 << 20, 3.0, 2.0, meta=m),
        row("foldkit", "max", "f32", 1 << 20, 2.0, 2.98, check="ok", meta=m),  # beats its ceiling
        row("cub", "max", "f32", 1 << 20, 1.6, 3.0, meta=m),                  # slower than CUB
        row("ceiling", "read", "f32", 1 << 20, 3.2, 3.0, meta=m),
        row("foldkit", "sum", "f64", 1 << 28, 700.0, 701.0, check="ok", meta=m),
        row("cub", "sum", "f64", 1 << 28, 707.0, 708.0, meta=m),
        row("ceiling", "read", "f64", 1 << 28, 697.9, 699.0, meta=m),  # 0.997: within 1 %
    ]
    write_csv(res / "reduce.csv", BASE + META, reduce_rows)
    # Scans (old format: no metadata columns).
    scan_rows = [
        row("foldkit", "incl_sum", "i32", 1 << 26, 300.0, 301.0, config="-> i64; exact",
            check="ok", elem=12),
        row("cub", "incl_sum", "i32", 1 << 26, 330.0, 331.0, elem=12),
        row("ceiling", "copy", "i32", 1 << 26, 285.0, 286.0, elem=12),
        row("variant", "incl_sum", "i32", 1 << 26, 100.0, 100.0, elem=12),  # skipped
        row("foldkit", "blocked_incl_sum/256", "i32", 1 << 30, 4400.0, 4400.0, config="-> i64",
            check="ok", elem=12),
        row("cub", "blocked_incl_sum/256", "i32", 1 << 30, 0, 0, check="n/a", elem=12),
        row("ceiling", "copy", "i32", 1 << 30, 4312.0, 4312.0, elem=12),
        row("foldkit", "segmented_incl_sum/1048576", "f32", 268696768, 735.0, 735.0,
            check="not checked here (tests check segmented scans)", elem=8),
        row("ceiling", "copy", "f32", 268696768, 714.0, 714.0, elem=8),
    ]
    for r in scan_rows:  # CUB rows of blocked scans carry no times
        if r["impl"] == "cub" and r["op"].startswith("blocked"):
            r["median_us"] = r["batch_mean_us"] = ""
    write_csv(res / "scan.csv", BASE, scan_rows)
    cpu_rows = [
        row("foldkit", "sum", "f32", 1 << 26, 2600.0, 2700.0, mode="cpu", check="ok", meta=m,
            config="threads: 16 team x48, 15 team x2"),
        row("loop-1t", "sum", "f32", 1 << 26, 52000.0, 52000.0, mode="cpu", meta=m),
        row("ceiling", "read", "f32", 1 << 26, 2574.0, 2600.0, mode="cpu", meta=m),
    ]
    write_csv(res / "cpu.csv", BASE + META, cpu_rows)
    # Under load, written ceiling first: each case's rows before its foldkit row. The two cases
    # share (dtype, n), so each must find the ceiling written just before it.
    busy = "threads: 1 x20; busy: 2 spinning threads per core"
    busy_rows = [
        row("ceiling", "read", "f32", 1 << 26, 3000.0, 3000.0, mode="cpu", meta=m),
        row("foldkit", "sum", "f32", 1 << 26, 4000.0, 4100.0, mode="cpu", check="ok",
            config=busy, meta=m),
        row("loop-1t", "sum", "f32", 1 << 26, 60000.0, 60000.0, mode="cpu", meta=m),
        row("ceiling", "read", "f32", 1 << 26, 2000.0, 2000.0, mode="cpu", meta=m),
        row("foldkit", "max", "f32", 1 << 26, 4000.0, 4100.0, mode="cpu", check="ok",
            config=busy, meta=m),
        row("loop-1t", "max", "f32", 1 << 26, 40000.0, 40000.0, mode="cpu", meta=m),
    ]
    write_csv(res / "cpu-busy.csv", BASE + META, busy_rows)

    def lrow(seed, table, variant, rung, n, nbytes, med, resident="0"):
        r = {k: "" for k in LADDER}
        r.update(gpu=GPU, date=DATE, seed=seed, table=table, variant=variant, element="f32",
                 rung=rung, n=str(n), bytes_moved=str(nbytes), l2_resident=resident,
                 shape="256/auto/1", median_us="" if med is None else f"{med:.3f}",
                 check="ok" if med is not None and variant != "ceiling" else "")
        return r
    n, b = 1 << 28, 1 << 30
    ladder_rows = [
        lrow("000", "seed_size", "ceiling", "", 1 << 22, 1 << 24, 5.0, "1"),
        lrow("000", "seed_size", "Serial", "0", 1 << 22, 1 << 24, 100000.0, "1"),
        lrow("000", "seed_size", "Fast", "1", 1 << 22, 1 << 24, 10.0, "1"),
        lrow("000", "seed_size", "foldkit", "", 1 << 22, 1 << 24, 6.0, "1"),
        lrow("000", "dram_size", "ceiling", "", n, b, 350.0),
        lrow("000", "dram_size", "Serial", "0", n, b, None),   # skipped at this size
        lrow("000", "dram_size", "Fast", "1", n, b, 700.0),
        lrow("000", "dram_size", "Faster", "2", n, b, 400.0),
        lrow("000", "dram_size", "cub", "", n, b, 355.0),
        lrow("000", "dram_size", "foldkit", "", n, b, 350.0),
    ]
    write_csv(res / "ladder.csv", LADDER + META,
              [dict(r, **NEW_META) for r in ladder_rows])
    latest = ["# test run", "reduce bench/results/reduce.csv", "scan   bench/results/scan.csv",
              "cpu bench/results/cpu.csv"]
    if with_busy:
        latest.append("cpu-busy bench/results/cpu-busy.csv  # under load")
    latest.append("ladder bench/results/ladder.csv")
    (res / "LATEST").write_text("\n".join(latest) + "\n")
    (root / "docs" / "perf.md").write_text(
        "# perf\n\nhand text\n\n<!-- current-results:begin -->\nstale\n"
        "<!-- current-results:end -->\n\n## Method\nhand text\n")
    (root / "docs" / "ladder.md").write_text(
        "# ladder\n\n<!-- ladder-tables:begin -->\n<!-- ladder-tables:end -->\n\nprose\n")


AXES = ["gpu_or_cpu_name", "date", "mode", "section", "case", "impl", "op", "shape", "axes",
        "dtype", "bytes", "read_bytes", "written_bytes", "median_us", "batch_mean_us",
        "gbps_median", "gbps_batch", "ceiling_bytes", "ceiling_median_us", "ceiling_batch_us",
        "pct_of_ceiling_median", "pct_of_ceiling_batch", "ratio_to_ceiling_median",
        "cub_median_us", "ratio_to_cub_median", "bar", "bar_met", "plan", "config", "check"]
TORCH = ["gpu", "date", "torch", "cuda", "case", "section", "op", "shape", "axes", "dtype",
         "bytes", "median_us", "batch_mean_us", "gbps_median", "reps", "gate", "note", "memory"]


def axes_rows(mode, section, op, dtype, shape, axes, read, written, fk_med, ceil_med, bar,
              check="ok", plan="", cub_med=None, ceil_bytes=None):
    """foldkit, (cub,) ceiling rows of one foldkit-bench axes case, as the bench writes them."""
    name = f"{op} {dtype} {shape} axes={axes}"
    ceil_bytes = ceil_bytes or read
    base = {k: "" for k in AXES}
    base.update(gpu_or_cpu_name=GPU if mode == "gpu" else "Test CPU", date=DATE, mode=mode,
                section=section, case=name, op=op, shape=shape, axes=axes, dtype=dtype,
                ceiling_bytes=str(ceil_bytes), **NEW_META)
    pct = 100.0 * ((read + written) / fk_med) / (ceil_bytes / ceil_med)
    fk = dict(base, impl="foldkit", bytes=str(read + written), read_bytes=str(read),
              written_bytes=str(written), median_us=f"{fk_med:.3f}", ceiling_median_us=f"{ceil_med:.3f}",
              pct_of_ceiling_median=f"{pct:.2f}", ratio_to_ceiling_median=f"{fk_med / ceil_med:.4f}",
              bar=bar, plan=plan, check=check)
    rows = [fk]
    if cub_med is not None:
        fk["cub_median_us"] = f"{cub_med:.3f}"
        rows.append(dict(base, impl="cub", median_us=f"{cub_med:.3f}", check="ok"))
    rows.append(dict(base, impl="ceiling", op="read", median_us=f"{ceil_med:.3f}"))
    return rows


def make_axes_tree(root: Path, with_torch=True):
    """make_tree plus a GPU and a CPU `foldkit-bench axes` CSV and a torch_axes.py CSV."""
    make_tree(root)
    res = root / "bench" / "results"
    mat, rep = "Matrices", "Reported shapes"
    gpu = (axes_rows("gpu", mat, "sum", "f32", "16777216x4", "1", 1 << 28, 1 << 26, 100.0, 90.0,
                     ">=90%", plan="short-rows", cub_med=20000.0)
           + axes_rows("gpu", mat, "argmax", "f32", "16x4194304", "0", 1 << 28, (1 << 22) * 8, 200.0,
                       90.0, ">=85%", plan="outer",
                       check="MISMATCH 1 of 8 sampled outputs: output 3 is 7, expected 2")
           + axes_rows("gpu", rep, "sum", "f32", "1000000x2", "-1", 8000000, 4000000, 6.0, 5.0,
                       "<=1.3x", plan="short-rows"))
    for r in gpu:  # what the bench writes in bar_met
        if r["impl"] == "foldkit":
            r["bar_met"] = "no" if r["op"] == "argmax" else "yes"
    write_csv(res / "axes.csv", AXES + META, gpu)
    cpu = axes_rows("cpu", "cpu", "sum", "f32", "16777216x4", "0", 1 << 28, 16, 12000.0, 10000.0,
                    ">=80%", plan="outer")
    write_csv(res / "axes-cpu.csv", AXES + META, cpu)

    def trow(op, shape, axes, med, note=""):
        r = {k: "" for k in TORCH}
        r.update(gpu=GPU, date=DATE, torch="2.11.0", cuda="13.0", case=f"{op} f32 {shape} axes={axes}",
                 op=op, shape=shape, axes=axes, dtype="f32", median_us="" if med is None else f"{med:.3f}",
                 note=note)
        return r
    write_csv(res / "axes-torch.csv", TORCH,
              [trow("sum", "16777216x4", "1", 400.0), trow("argmax", "16x4194304", "0", 150.0),
               trow("sum", "1000000x2", "-1", 22.7),
               trow("segmented_sum", "2^22segs_U0-128", "-", None, note="SKIPPED: RuntimeError")])
    latest = res / "LATEST"
    extra = "axes bench/results/axes.csv\naxes bench/results/axes-cpu.csv\n"
    if with_torch:
        extra += "axes-torch bench/results/axes-torch.csv\n"
    latest.write_text(latest.read_text() + extra)


def run(root, *args):
    p = subprocess.run([sys.executable, str(SCRIPT), "--root", str(root), *args],
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def table_row(text, label):
    """The cells of the first table row whose first cell is `label`."""
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == label:
            return cells
    raise AssertionError(f"no row {label!r} in:\n{text}")


def section(text, title):
    i = text.index(title)
    j = text.find("\n### ", i + 1)
    return text[i: j if j >= 0 else len(text)]


class PerfReportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        make_tree(self.root)
        rc, _, err = run(self.root)
        self.assertEqual(rc, 0, err)
        self.perf = (self.root / "docs" / "perf.md").read_text()
        self.ladder = (self.root / "docs" / "ladder.md").read_text()

    def tearDown(self):
        self.tmp.cleanup()

    def test_hand_written_parts_survive(self):
        self.assertTrue(self.perf.startswith("# perf\n\nhand text\n\n<!-- current-results:begin -->\n"))
        self.assertTrue(self.perf.endswith("<!-- current-results:end -->\n\n## Method\nhand text\n"))
        self.assertNotIn("stale", self.perf)
        self.assertTrue(self.ladder.rstrip().endswith("prose"))

    def test_reduction_numbers(self):
        red = section(self.perf, "### Reductions")
        # sum f32 2^20: 4.0 against CUB 5.0 and its own ceiling 3.0 (not the max case's 3.2).
        cells = table_row(red, "sum f32 2^20")
        self.assertEqual(cells[1:], ["4.00", "0.80", "1.33", "75.0", "0.50", "1.50"])
        # max f32 2^20 pairs with the ceiling after it (3.2), CUB 1.6.
        cells = table_row(red, "max f32 2^20")
        self.assertEqual(cells[1:], ["2.00", "1.25", "0.62", "160.0", "0.99", "0.99"])
        self.assertEqual(table_row(red, "sum f64 2^28")[1], "700.0")  # 1 decimal from 100 µs
        self.assertIn("**2 of 3** cases by per-call median; over: max f32 2^20 1.250", red)
        self.assertIn("3 of 3 by batch", red)
        self.assertIn("Result checks: 3 ok, 0 failed", red)

    def test_ceiling_beaten(self):
        red = section(self.perf, "### Reductions")
        line = next(l for l in red.splitlines() if l.startswith("- Ceiling beaten"))
        # max f32 2^20 is 0.62 of its ceiling by median and 0.993 by batch (2.98 / 3.0: under 1 %
        # below); sum f64 2^28 is 0.3 % under: within the margin too.
        self.assertIn("by median: **1**: max f32 2^20 (0.62)", line)
        self.assertIn("by batch: none", line)
        self.assertNotIn("sum f64", line)
        # sum f32 2^20 batch 3.0 against the ceiling's 2.0 is slower, not beaten.
        self.assertNotIn("sum f32", line)

    def test_metadata_and_old_csvs(self):
        red = section(self.perf, "### Reductions")
        self.assertIn(f"GPU: {GPU}; 2026-11-27 10:00 UTC; commit `0123456789ab-dirty` "
                      "(the tree had uncommitted changes)", red)
        self.assertIn("5 warm-ups; per-call median of 50 (gated); batch of 200; rivals "
                      "interleaved; memory: inputs rotated over 1024 MiB (4 copies)", red)
        scan = section(self.perf, "### Scans")
        self.assertIn("commit not recorded", scan)
        self.assertIn("Method: not recorded in this CSV", scan)

    def test_scan_numbers(self):
        scan = section(self.perf, "### Scans")
        cells = table_row(scan, "incl_sum i32 -> i64 2^26")
        self.assertEqual(cells[1:], ["300.0", "95.0", "95.0", "0.91", "0.91"])
        cells = table_row(scan, "blocked incl_sum i32 -> i64 2^30, blocks of 256")
        self.assertEqual(cells[1:], ["4400.0", "98.0", "98.0", "-", "-"])
        cells = table_row(scan, "segmented incl_sum f32, 2^20 segments (n = 268,696,768)")
        self.assertEqual(cells[2], "97.1")
        self.assertIn("**1 of 1** cases by per-call median", scan)
        self.assertIn("1 not checked by the bench", scan)
        self.assertNotIn("100.0", scan)  # the sweep variant row is not a case

    def test_cpu_and_busy(self):
        cpu = section(self.perf, "### CPU backend\n")
        self.assertEqual(table_row(cpu, "sum f32 2^26")[1:],
                         ["2.60", "52.00", "2.57", "99.0", "0.050", "16 team x48, 15 team x2"])
        busy = section(self.perf, "### CPU backend under load")
        self.assertIn("Load (the rows' config): busy: 2 spinning threads per core.", busy)
        self.assertEqual(table_row(busy, "sum f32 2^26")[-1], "1 x20")
        self.assertEqual(table_row(busy, "sum f32 2^26")[3:], ["3.00", "75.0", "0.067", "1 x20"])
        self.assertEqual(table_row(busy, "max f32 2^26")[3:], ["2.00", "50.0", "0.10", "1 x20"])

    def test_ladder(self):
        # perf.md: the DRAM-size table only; speedup against the first timed rung (rung 1).
        lad = section(self.perf, "### The seeds' ladder")
        self.assertIn("speedup vs rung 1 (rung 0 not timed at this size)", lad)
        self.assertNotIn("seed size", lad)
        self.assertEqual(table_row(lad, "2")[1:], ["Faster", "400.0", "2684", "87.5", "1.75"])
        self.assertEqual(table_row(lad, "0")[1:], ["Serial", "-", "-", "-", "-"])
        # foldkit then CUB last.
        rows = [l for l in lad.splitlines() if l.startswith("|  |")]
        self.assertEqual([r.split("|")[2].strip() for r in rows], ["ceiling", "foldkit", "cub"])
        # ladder.md: both sizes, with shapes.
        self.assertIn("seed 000, f32, n = 2^22 (seed size; one input reused, L2-resident", self.ladder)
        self.assertIn("seed 000, f32, n = 2^28 (DRAM size", self.ladder)
        self.assertEqual(table_row(self.ladder, "1")[1:5], ["Fast", "256/auto/1", "10.00", "1678"])

    def test_idempotent_and_check(self):
        rc, _, err = run(self.root)
        self.assertEqual(rc, 0, err)
        self.assertEqual((self.root / "docs" / "perf.md").read_text(), self.perf)
        self.assertEqual((self.root / "docs" / "ladder.md").read_text(), self.ladder)
        self.assertEqual(run(self.root, "--check")[0], 0)
        # A number altered by hand is caught, and --check writes nothing.
        p = self.root / "docs" / "perf.md"
        altered = self.perf.replace("| sum f32 2^20 | 4.00 |", "| sum f32 2^20 | 4.01 |")
        self.assertNotEqual(altered, self.perf)
        p.write_text(altered)
        rc, _, err = run(self.root, "--check")
        self.assertEqual(rc, 1)
        self.assertIn("docs/perf.md is out of date", err)
        self.assertEqual(p.read_text(), altered)
        # A stale CSV list is caught too.
        run(self.root)
        latest = self.root / "bench" / "results" / "LATEST"
        latest.write_text(latest.read_text().replace("cpu-busy", "# cpu-busy"))
        self.assertEqual(run(self.root, "--check")[0], 1)

    def test_stdout_writes_nothing(self):
        p = self.root / "docs" / "perf.md"
        p.write_text(p.read_text().replace("4.00", "9.99"))
        before = p.read_text()
        rc, out, _ = run(self.root, "--stdout")
        self.assertEqual(rc, 0)
        self.assertIn("| sum f32 2^20 | 4.00 |", out)
        self.assertEqual(p.read_text(), before)

    def test_errors(self):
        latest = self.root / "bench" / "results" / "LATEST"
        latest.write_text("reduce bench/results/missing.csv\n")
        rc, _, err = run(self.root, "--check")
        self.assertEqual(rc, 2)
        self.assertIn("missing.csv does not exist", err)
        latest.write_text("bogus bench/results/reduce.csv\n")
        self.assertEqual(run(self.root)[0], 2)
        make_tree_root = Path(tempfile.mkdtemp(dir=self.tmp.name))
        make_tree(make_tree_root)
        (make_tree_root / "docs" / "perf.md").write_text("# no markers\n")
        rc, _, err = run(make_tree_root)
        self.assertEqual(rc, 2)
        self.assertIn("markers", err)


class AxesReportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        make_axes_tree(self.root)
        rc, _, self.err = run(self.root)
        self.assertEqual(rc, 0, self.err)
        self.perf = (self.root / "docs" / "perf.md").read_text()
        self.gpu = section(self.perf, "### Tensors along axes\n")
        self.cpu = section(self.perf, "### Tensors along axes, CPU backend")

    def tearDown(self):
        self.tmp.cleanup()

    def test_gpu_numbers(self):
        # 2^28 read + 2^26 written in 100 us against a 2^28 read in 90 us: 112.5 % (GB/s ratio).
        self.assertEqual(table_row(self.gpu, "sum f32 16777216x4 axes=1")[1:],
                         ["100.0", "112.5", "1.11", "20000.0", "0.005", "400.0", "0.25", "≥ 90%",
                          "yes", "short-rows"])
        cells = table_row(self.gpu, "argmax f32 16x4194304 axes=0")
        self.assertEqual(cells[2], "50.6")
        self.assertEqual(cells[5:], ["-", "150.0", "1.33", "≥ 85%", "**no**", "outer"])
        # The reported shapes' bar is the time ratio: 6.0 / 5.0 = 1.2 <= 1.3.
        cells = table_row(self.gpu, "sum f32 1000000x2 axes=-1")
        self.assertEqual(cells[3], "1.20")
        self.assertEqual(cells[-3:], ["≤ 1.3x", "yes", "short-rows"])
        self.assertIn("#### Matrices", self.gpu)
        self.assertIn("#### Reported shapes", self.gpu)

    def test_gpu_summary(self):
        self.assertIn("- Bars met: **2 of 3** cases; below: argmax f32 16x4194304 axes=0 (50.6 %).",
                      self.gpu)
        self.assertIn("- At least as fast as PyTorch per call: **2 of 3** cases; slower: argmax f32 "
                      "16x4194304 axes=0 1.33.", self.gpu)
        self.assertIn("DeviceSegmentedReduce`'s time: 1 of 1 cases", self.gpu)
        self.assertIn("- Result checks: 2 ok, **1 failed**: argmax f32 16x4194304 axes=0.", self.gpu)
        self.assertIn("PyTorch: torch 2.11.0 on Test GPU 80GB; 2026-11-27 10:00 UTC; "
                      "`bench/results/axes-torch.csv` (3 cases timed, 1 skipped).", self.gpu)
        self.assertNotIn("warning", self.err)  # the CSV's own percentages and bar_met agree

    def test_cpu_section(self):
        cells = table_row(self.cpu, "sum f32 16777216x4 axes=0")
        self.assertEqual(cells[1:], ["12000.0", "83.3", "1.20", "≥ 80%", "yes", "outer"])
        self.assertNotIn("torch", self.cpu)
        self.assertIn("CPU: Test CPU", self.cpu)

    def test_check_and_torch_without_axes(self):
        self.assertEqual(run(self.root, "--check")[0], 0)
        latest = self.root / "bench" / "results" / "LATEST"
        latest.write_text("\n".join(l for l in latest.read_text().splitlines()
                                    if not l.startswith("axes ")) + "\n")
        rc, _, err = run(self.root, "--check")
        self.assertEqual(rc, 2)
        self.assertIn("axes-torch CSV is listed without the axes CSV", err)

    def test_without_torch(self):
        root = Path(tempfile.mkdtemp(dir=self.tmp.name))
        make_axes_tree(root, with_torch=False)
        rc, out, err = run(root, "--stdout")
        self.assertEqual(rc, 0, err)
        gpu = section(out, "### Tensors along axes\n")
        self.assertEqual(table_row(gpu, "sum f32 16777216x4 axes=1")[6:8], ["-", "-"])
        self.assertIn("**0 of 0** cases (no axes-torch CSV listed)", gpu)

    def test_bar_met_disagreement_warns(self):
        p = self.root / "bench" / "results" / "axes.csv"
        p.write_text(p.read_text().replace(",>=85%,no,", ",>=85%,yes,"))
        rc, _, err = run(self.root)
        self.assertEqual(rc, 0, err)
        self.assertIn("bar >=85% computed missed, the CSV says yes", err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
