#!/usr/bin/env python3
"""PyTorch on the GPU cases of `foldkit-bench axes` (issue #22), timed the way foldkit-bench
times foldkit, and foldkit/torch per case.

  python3 scripts/torch_axes.py --csv OUT.csv [--foldkit AXES.csv] [--quick] [--only 'SUBSTR|^PREFIX|...']

Cases (the same (op, dtype, shape, axes) as tools/bench/axes_common.cpp, so rows pair up):
  - nine 2^26-element f32 matrices (2^24x4 ... 16x2^22): sum, amax, argmax over dim 1 and dim 0,
    cumsum over dim 1 and dim 0; bf16 sum over dim 1 (dtype=torch.float32: f32 out, as foldkit);
  - 3-D sums over the middle axis and over axes (0, 2): 64x4096x256, 256x256x1024, 4096x64x1024;
  - the reported shapes: 7840000x4 sum(-1), 1000000x2 sum(-1), 32768x32 sum(0), 1000000x2/8/32
    cumsum(0);
  - segmented sums (torch.segment_reduce with offsets, or lengths), on the same segments as
    foldkit-bench (the same xorshift generator and seeds): 2^22 segments of lengths 0..128, and 4
    segments of 2^24 among 2^20 of lengths 0..16, shuffled. Skipped if segment_reduce fails.

Method (as foldkit-bench's): inputs made on the device (uniform in [0.5, 1.5)) and rotated over
>= 1 GiB (max(2, ceil(1 GiB / bytes)) copies, each call reads the next); warm-up calls (5, or 3
with --quick); per-call median of 50 (20) calls, each between its own pair of CUDA events, the
stream held by torch.cuda._sleep while the host records the start event, submits the call and
records the stop event (so the pair times the GPU work, not torch's host overhead; a call whose
host submission outlasted the gate is counted in the note); then a batch: 10 blocks of 20 (10)
back-to-back calls between two events (host submission included). A call slower than 5 ms alone
is timed as the median of 3 single calls (1 when it takes over a second), no batch: torch's
cumsum along dim 0 of a 2^24x4 matrix takes seconds. Outputs are torch's own (allocated by its
caching allocator, as a user's call gets them).

Bytes per call: read + written (segmented: the input only), as foldkit-bench counts them.

With --foldkit AXES.csv (foldkit-bench axes --csv): a table of foldkit's per-call median, torch's,
and foldkit/torch per case; the bar (issue #22) is foldkit at least as fast as torch on every
shape (foldkit/torch <= 1.00).
"""
from __future__ import annotations

import argparse
import csv
import datetime
import math
import statistics
import sys
import time

GIB = 1 << 30
SLOW_US = 5000.0
ONE_CALL_US = 1e6
GATE_US = 500.0

MATRICES = [(1 << 24, 4), (1 << 22, 16), (1 << 20, 64), (1 << 18, 256), (1 << 16, 1024),
            (1 << 14, 4096), (1 << 12, 1 << 14), (1 << 8, 1 << 18), (16, 1 << 22)]
SEGMENTS = {0: "2^22segs_U0-128", 1: "4x2^24+2^20segs_U0-16"}
ESIZE = {"f32": 4, "bf16": 2, "i64": 8}


class Case:
    def __init__(self, section, op, dtype, shape, axes, segments=None):
        self.section, self.op, self.dtype, self.shape, self.axes = section, op, dtype, shape, axes
        self.segments = segments  # 0 or 1 for segmented sums

    @property
    def shape_text(self):
        if self.segments is not None:
            return SEGMENTS[self.segments]
        return "x".join(str(d) for d in self.shape)

    @property
    def name(self):
        return f"{self.op} {self.dtype} {self.shape_text} axes={self.axes}"

    def key(self):
        return (self.op, self.dtype, self.shape_text, self.axes)


def cases() -> list[Case]:
    v = []
    for r, c in MATRICES:
        for d in ("1", "0"):
            for op in ("sum", "max", "argmax"):
                v.append(Case("matrices", op, "f32", (r, c), d))
        v.append(Case("matrices", "cumsum", "f32", (r, c), "1"))
        v.append(Case("matrices", "cumsum", "f32", (r, c), "0"))
    for s in ((64, 4096, 256), (256, 256, 1024), (4096, 64, 1024)):
        v.append(Case("3-D", "sum", "f32", s, "1"))
        v.append(Case("3-D", "sum", "f32", s, "0,2"))
    for r, c in MATRICES:
        v.append(Case("bf16", "sum", "bf16", (r, c), "1"))
    v.append(Case("reported", "sum", "f32", (7840000, 4), "-1"))
    v.append(Case("reported", "sum", "f32", (1000000, 2), "-1"))
    v.append(Case("reported", "sum", "f32", (32768, 32), "0"))
    for c in (2, 8, 32):
        v.append(Case("reported", "cumsum", "f32", (1000000, c), "0"))
    for which in (0, 1):
        v.append(Case("segmented", "segmented_sum", "f32", None, "-", segments=which))
    return v


def segment_offsets(which: int) -> list[int]:
    """tools/bench/axes_common.cpp's segment_offsets: the same xorshift64, seeds and order."""
    mask = (1 << 64) - 1
    x = 0x9E3779B97F4A7C15 if which == 0 else 0xD1B54A32D192ED03

    def nxt():
        nonlocal x
        x ^= (x << 13) & mask
        x ^= x >> 7
        x ^= (x << 17) & mask
        return x

    if which == 0:
        lengths = [nxt() % 129 for _ in range(1 << 22)]
    else:
        lengths = [1 << 24 if i < 4 else nxt() % 17 for i in range((1 << 20) + 4)]
        for i in range(len(lengths), 1, -1):
            j = nxt() % i
            lengths[i - 1], lengths[j] = lengths[j], lengths[i - 1]
    offsets = [0] * (len(lengths) + 1)
    acc = 0
    for i, n in enumerate(lengths):
        acc += n
        offsets[i + 1] = acc
    return offsets


# ----------------------------------------------------------------------------------------------
# Timing (needs torch)

class Timer:
    def __init__(self, torch, quick: bool):
        self.torch = torch
        self.warmup = 3 if quick else 5
        self.reps = 20 if quick else 50
        self.batch = 100 if quick else 200
        self.blocks = 10
        self.sleep = getattr(torch.cuda, "_sleep", None)
        self.gate_cycles = 0
        if self.sleep is not None:
            self.gate_cycles = self._calibrate()

    def event(self):
        return self.torch.cuda.Event(enable_timing=True)

    def _calibrate(self) -> int:
        torch = self.torch
        cycles = 1_000_000
        self.sleep(cycles)
        torch.cuda.synchronize()
        s, e = self.event(), self.event()
        s.record()
        self.sleep(cycles)
        e.record()
        e.synchronize()
        us = s.elapsed_time(e) * 1e3
        return min(10**8, max(10**4, int(cycles * GATE_US / max(us, 1.0))))

    def time(self, fn, inputs) -> dict:
        torch = self.torch
        k = [0]

        def nxt():
            x = inputs[k[0] % len(inputs)]
            k[0] += 1
            return x

        fn(nxt())
        torch.cuda.synchronize()
        s, e = self.event(), self.event()
        s.record()
        fn(nxt())
        e.record()
        e.synchronize()
        probe = s.elapsed_time(e) * 1e3
        if probe > SLOW_US:
            if probe > ONE_CALL_US:
                return dict(median_us=probe, batch_us=None, reps=1, gate="ungated",
                            note=f"slow call ({probe / 1e6:.2f} s): one call timed, no batch")
            v = []
            for _ in range(3):
                s.record()
                fn(nxt())
                e.record()
                e.synchronize()
                v.append(s.elapsed_time(e) * 1e3)
            return dict(median_us=statistics.median(v), batch_us=None, reps=3, gate="ungated",
                        note=f"slow call ({probe / 1e3:.1f} ms alone): median of 3 single calls, no batch")
        for _ in range(self.warmup):
            fn(nxt())
        torch.cuda.synchronize()
        gated = self.gate_cycles > 0
        v, overrun = [], 0
        for _ in range(self.reps):
            t0 = time.perf_counter()
            if gated:
                self.sleep(self.gate_cycles)
            s.record()
            fn(nxt())
            e.record()
            host_us = (time.perf_counter() - t0) * 1e6
            e.synchronize()
            v.append(s.elapsed_time(e) * 1e3)
            if gated and host_us > 0.8 * GATE_US:
                overrun += 1
        per_block = max(1, self.batch // self.blocks)
        pairs = [(self.event(), self.event()) for _ in range(self.blocks)]
        for bs, be in pairs:
            bs.record()
            for _ in range(per_block):
                fn(nxt())
            be.record()
        torch.cuda.synchronize()
        total = sum(bs.elapsed_time(be) for bs, be in pairs) * 1e3
        note = ""
        if overrun:
            note = f"host submission outlasted the gate in {overrun} of {self.reps} calls"
        return dict(median_us=statistics.median(v), batch_us=total / (self.blocks * per_block),
                    reps=self.reps, gate="gated" if gated else "ungated (no torch.cuda._sleep)",
                    note=note)


class Inputs:
    """Copies of one input covering >= 1 GiB, laid out once per (dtype, element count)."""

    def __init__(self, torch):
        self.torch = torch
        self.key = None
        self.pool = None
        self.copies = 0

    def get(self, dtype: str, numel: int):
        torch = self.torch
        if self.key != (dtype, numel):
            self.pool = None
            torch.cuda.empty_cache()
            bytes_ = numel * ESIZE[dtype]
            self.copies = max(2, -(-GIB // bytes_))
            tdt = torch.float32 if dtype == "f32" else torch.bfloat16
            self.pool = torch.empty(self.copies * numel, dtype=tdt, device="cuda")
            self.pool.uniform_(0.5, 1.5)
            torch.cuda.synchronize()
            self.key = (dtype, numel)
        return [self.pool[k * numel:(k + 1) * numel] for k in range(self.copies)]

    def memory_text(self):
        if not self.key:
            return ""
        dtype, numel = self.key
        return f"inputs rotated over {self.copies * numel * ESIZE[dtype] >> 20} MiB ({self.copies} copies)"


def case_call(torch, c: Case):
    """(function of one input, bytes per call, output dtype) for case c."""
    dims = tuple(int(a) for a in c.axes.split(",")) if c.segments is None else ()
    dim = dims[0] if len(dims) == 1 else dims
    if c.op == "sum":
        if c.dtype == "bf16":
            return lambda x: x.sum(dim=dim, dtype=torch.float32), "f32"
        return lambda x: x.sum(dim=dim), "f32"
    if c.op == "max":
        return lambda x: x.amax(dim=dim), "f32"
    if c.op == "argmax":
        return lambda x: x.argmax(dim=dim), "i64"
    if c.op == "cumsum":
        return lambda x: x.cumsum(dim=dim), "f32"
    raise ValueError(c.op)


def out_numel(c: Case) -> int:
    if c.op == "cumsum":
        return math.prod(c.shape)
    dims = {int(a) % len(c.shape) for a in c.axes.split(",")}
    return math.prod(d for i, d in enumerate(c.shape) if i not in dims)


def run_torch(args) -> list[dict]:
    try:
        import torch
    except ImportError:
        print("torch_axes: PyTorch is not installed", file=sys.stderr)
        sys.exit(1)
    if not torch.cuda.is_available():
        print("torch_axes: torch sees no CUDA device", file=sys.stderr)
        sys.exit(1)
    timer = Timer(torch, args.quick)
    inputs = Inputs(torch)
    gpu = torch.cuda.get_device_name(0)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    print(f"torch {torch.__version__} (CUDA {torch.version.cuda}) on {gpu}, {date}")
    print(f"gate: {'torch.cuda._sleep, ~%.0f us (%d cycles)' % (GATE_US, timer.gate_cycles) if timer.gate_cycles else 'none'}; "
          f"{timer.warmup} warm-ups, median of {timer.reps}, batch of {timer.batch}")
    print(f"{'case':44} {'median us':>10} {'batch us':>10} {'GB/s':>7}  note")
    rows = []
    for c in cases():
        if args.only and not any(c.name.startswith(s[1:]) if s.startswith("^") else s in c.name
                                 for s in args.only.split("|") if s):
            continue
        row = dict(gpu=gpu, date=date, torch=torch.__version__, cuda=torch.version.cuda or "",
                   case=c.name, section=c.section, op=c.op, shape=c.shape_text, axes=c.axes,
                   dtype=c.dtype, bytes="", median_us="", batch_mean_us="", gbps_median="",
                   reps="", gate="", note="", memory="")
        try:
            if c.segments is not None:
                offsets = segment_offsets(c.segments)
                n = offsets[-1]
                xs = inputs.get("f32", n)
                d_off = torch.tensor(offsets, dtype=torch.int64, device="cuda")
                lengths = d_off[1:] - d_off[:-1]
                nbytes = n * 4
                try:
                    torch.segment_reduce(xs[0], "sum", offsets=d_off, axis=0, unsafe=True)
                    fn = lambda x: torch.segment_reduce(x, "sum", offsets=d_off, axis=0, unsafe=True)
                    api = "torch.segment_reduce(offsets=, unsafe=True)"
                except Exception:  # older torch: lengths only
                    torch.segment_reduce(xs[0], "sum", lengths=lengths, axis=0, unsafe=True)
                    fn = lambda x: torch.segment_reduce(x, "sum", lengths=lengths, axis=0, unsafe=True)
                    api = "torch.segment_reduce(lengths=, unsafe=True)"
                torch.cuda.synchronize()
            else:
                numel = math.prod(c.shape)
                flat = inputs.get(c.dtype, numel)
                xs = [x.view(c.shape) for x in flat]
                fn, out_dtype = case_call(torch, c)
                nbytes = numel * ESIZE[c.dtype] + out_numel(c) * ESIZE[out_dtype]
                api = ""
            t = timer.time(fn, xs)
            row.update(bytes=str(nbytes), median_us=f"{t['median_us']:.3f}",
                       batch_mean_us="" if t["batch_us"] is None else f"{t['batch_us']:.3f}",
                       gbps_median=f"{nbytes / t['median_us'] / 1e3:.1f}", reps=str(t["reps"]),
                       gate=t["gate"], note="; ".join(p for p in (api, t["note"]) if p),
                       memory=inputs.memory_text())
        except Exception as e:  # noqa: BLE001 -- a case torch cannot run is reported and skipped
            row.update(note=f"SKIPPED: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            torch.cuda.synchronize()
        rows.append(row)
        print(f"{c.name:44} {row['median_us'] or '-':>10} {row['batch_mean_us'] or '-':>10} "
              f"{row['gbps_median'] or '-':>7}  {row['note']}", flush=True)
    return rows


CSV_FIELDS = ["gpu", "date", "torch", "cuda", "case", "section", "op", "shape", "axes", "dtype",
              "bytes", "median_us", "batch_mean_us", "gbps_median", "reps", "gate", "note", "memory"]


def write_csv(path: str, rows: list[dict]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in CSV_FIELDS})


def num(s):
    try:
        x = float(s)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def compare(foldkit_csv: str, torch_rows: list[dict]) -> int:
    """Prints foldkit/torch per case; returns the number of cases below the bar."""
    with open(foldkit_csv, newline="") as f:
        fk = {}
        for r in csv.DictReader(f):
            if r.get("impl") == "foldkit" and r.get("mode", "gpu") == "gpu":
                fk[(r["op"], r["dtype"], r["shape"], r["axes"])] = r
    print(f"\n== foldkit vs torch, per-call median (bar: foldkit/torch <= 1.00 on every shape) ==")
    print(f"{'case':44} {'foldkit us':>11} {'torch us':>11} {'fk/torch':>9}  met")
    met = total = 0
    missing = []
    for t in torch_rows:
        key = (t["op"], t["dtype"], t["shape"], t["axes"])
        f = fk.get(key)
        tf, tt = num(f["median_us"]) if f else None, num(t["median_us"])
        if f is None:
            missing.append(t["case"])
        r = tf / tt if tf is not None and tt else None
        ok = "" if r is None else ("yes" if r <= 1.0 else "NO")
        if r is not None:
            total += 1
            met += r <= 1.0
        print(f"{t['case']:44} {'-' if tf is None else f'{tf:.2f}':>11} "
              f"{'-' if tt is None else f'{tt:.2f}':>11} {'-' if r is None else f'{r:.3f}':>9}  {ok}")
    print(f"\nfoldkit at least as fast as torch in {met} of {total} cases")
    if missing:
        print(f"no foldkit row for {len(missing)} case(s): {', '.join(missing[:6])}"
              + (" ..." if len(missing) > 6 else ""))
    return total - met


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--csv", required=True, help="write torch's rows here")
    ap.add_argument("--foldkit", help="foldkit-bench axes CSV: print foldkit/torch per case")
    ap.add_argument("--quick", action="store_true", help="3 warm-ups, median of 20, batch of 100")
    ap.add_argument("--only", help="only the cases whose name contains one of these |-separated substrings (^x: starts with x)")
    args = ap.parse_args(argv)
    t0 = time.time()
    rows = run_torch(args)
    write_csv(args.csv, rows)
    print(f"\ntorch_axes: {len(rows)} cases in {time.time() - t0:.0f} s; wrote {args.csv}")
    if args.foldkit:
        try:
            compare(args.foldkit, rows)
        except OSError as e:
            print(f"torch_axes: cannot read {args.foldkit}: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
