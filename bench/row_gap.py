#!/usr/bin/env python3
"""row_gap.py - where kfuse's row kernels lose to torch.compile's between
runs: one row workload of the suite (default layernorm_f32) timed by
kfuse (a bound plan) and torch.compile on the same tensors, in several
ways, so that a gap seen in one timing can be told from the kernels
themselves (performance.md, session 7: layernorm_f32 0.1319 ms against
Inductor's 0.1305 by per-run event pairs, 0.1283 against 0.1299 back to
back, and kfuse's kernel the shorter one under CUPTI).

  python3 bench/row_gap.py [--workload layernorm_f32] [--runs 20000]

Prints, for kfuse and torch.compile:
  - per-run event pairs, each side timed alone (the suite's way): mean,
    10th percentile, median and 90th percentile of 200 runs;
  - the same with the two interleaved run by run (any drift of clocks or
    temperature hits both alike);
  - the time per run of 100 back-to-back runs under one event pair, ten
    times, alternating;
  - kfuse writing into outputs at 8 other addresses (100-run loops): how
    much the placement of the written rows moves the time;
  - with --partners, instead of the above: kfuse alone, then interleaved
    with torch.compile's, eager's and a copy kernel on the same input, and
    with Triton copies whose loads are evict_last or evict_first in L2;
  - with --cupti, instead of the above: the kernels' own start and end
    on the GPU (CUPTI, through torch.profiler) under per-run pairs and in
    a loop, so that a gap in event timing is placed in the kernel or
    between kernels;
  - a long loop of --runs runs under one event pair, with the SM clock,
    memory clock, power and temperature sampled by nvidia-smi every 50 ms
    during it (medians), to see whether one side runs at lower clocks.
Needs a GPU, PyTorch with Triton and KFUSE_LIB (scripts/gpu-perf.sh's
environment).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch

try:
    import triton
    import triton.language as tl
except ImportError:  # the Triton copies among --partners are left out
    triton = None

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import kfuse  # noqa: E402
import suite  # noqa: E402
from timing import event_times, loop_us  # noqa: E402


def spread(ts):
    """mean, p10, median, p90 of a list of times (ms)."""
    q = statistics.quantiles(ts, n=10)
    return "mean %.4f  p10 %.4f  median %.4f  p90 %.4f" % (statistics.fmean(ts), q[0],
                                                            statistics.median(ts), q[-1])


def interleaved(fa, fb, iters=200):
    """Per-run event pairs, a and b alternating run by run: both lists."""
    for _ in range(5):
        fa()
        fb()
    torch.cuda.synchronize()
    ev = [[torch.cuda.Event(enable_timing=True) for _ in range(4)] for _ in range(iters)]
    for e in ev:
        e[0].record()
        fa()
        e[1].record()
        e[2].record()
        fb()
        e[3].record()
    torch.cuda.synchronize()
    return ([e[0].elapsed_time(e[1]) for e in ev], [e[2].elapsed_time(e[3]) for e in ev])


def sampled_loop(fn, runs):
    """ms per run of `runs` back-to-back runs, and nvidia-smi's medians of
    SM clock, memory clock, power and temperature while they ran."""
    q = "clocks.sm,clocks.mem,power.draw,temperature.gpu"
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=" + q, "--format=csv,noheader,nounits",
                            "-lms", "50"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True)
    time.sleep(0.3)
    ms = loop_us(fn, n=runs)[0] / 1000.0
    smi.terminate()
    out, _ = smi.communicate()
    rows = []
    for line in out.splitlines():
        try:
            rows.append([float(v) for v in line.split(",")])
        except ValueError:
            pass
    med = [statistics.median(c) for c in zip(*rows)] if rows else []
    return ms, med, len(rows)


def launcher_line():
    """The versions, and whether Inductor launches its kernels with
    programmatic dependent launch (which lets a kernel start while the
    one before it drains: a difference in launch gaps, not in kernels)."""
    import triton
    from torch._inductor import config as ic
    pdl = getattr(getattr(ic, "triton", None), "enable_pdl", "absent")
    return "  torch %s, triton %s, inductor config.triton.enable_pdl=%s" % (
        torch.__version__, triton.__version__, pdl)


def kernel_spans(fn, runs, pairs):
    """The GPU's own start and end of each kernel (CUPTI through
    torch.profiler), for `runs` back-to-back calls of fn, each between its
    own event pair when `pairs`: the kernels' durations, the idle gaps
    between consecutive kernels, and the event pairs' times, all in us.
    Tells whether a difference in event timing sits in the kernel or
    between kernels."""
    from torch.profiler import ProfilerActivity, profile
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
          for _ in range(runs if pairs else 1)]
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        if pairs:
            for s, e in ev:
                s.record()
                fn()
                e.record()
        else:
            ev[0][0].record()
            for _ in range(runs):
                fn()
            ev[0][1].record()
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        trace = json.load(open(f.name))
    ks = sorted((float(e["ts"]), float(e["dur"])) for e in trace.get("traceEvents", [])
                if e.get("cat") == "kernel")
    durs = [d for _, d in ks]
    gaps = [b[0] - (a[0] + a[1]) for a, b in zip(ks, ks[1:])]
    evs = [s.elapsed_time(e) * 1000.0 for s, e in ev]
    if not pairs:
        evs = [evs[0] / runs]
    return durs, gaps, evs


def spans_line(label, mode, durs, gaps, evs):
    def st(v):
        if len(v) < 2:
            return "%.2f" % v[0] if v else "-"
        q = statistics.quantiles(v, n=10)
        return "median %.2f p10 %.2f p90 %.2f" % (statistics.median(v), q[0], q[-1])
    return ("  CUPTI %-13s %-5s %d kernels: duration %s | gap to next %s | event pair us %s" %
            (label, mode, len(durs), st(durs), st(gaps), st(evs)))


# Copies whose loads carry one L2 eviction policy each (--partners): does a
# kernel that leaves lines marked evict_last in L2 (as Inductor's first
# pass over a row does) slow the L2 prefetch of the kfuse kernel after it?
if triton is not None:
    @triton.jit
    def _copy(src, dst, n, BLOCK: tl.constexpr, POLICY: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(dst + offs, tl.load(src + offs, mask=m, eviction_policy=POLICY), mask=m)


def triton_copies(src, dst):
    """(label, function) for each Triton copy of src into dst."""
    if triton is None:
        return ()
    n, block = src.numel(), 4096
    grid = (triton.cdiv(n, block),)
    return tuple(("Triton copy, %s" % p,
                  lambda p=p: _copy[grid](src, dst, n, BLOCK=block, POLICY=p))
                 for p in ("evict_last", "evict_first"))


def partners(kf, compiled, eager, ins):
    """kfuse's per-run pairs alone, then interleaved run by run with each
    of three other kernels reading the same input: whether a kernel ahead
    of kfuse's (and the L2 state it leaves) moves kfuse's time, and
    whether that depends on which kernel it is."""
    tmp = torch.empty_like(ins[0])
    others = (("torch.compile", compiled), ("eager", lambda: eager(*ins)),
              ("copy of input 0", lambda: tmp.copy_(ins[0]))) + triton_copies(ins[0], tmp)
    print("  alone, 200 per-run event pairs: kfuse %s" % spread(event_times(kf, iters=200)))
    for label, f in others:
        ta, tb = interleaved(kf, f)
        print("  interleaved with %-25s kfuse %s | %s median %.4f" %
              (label + ":", spread(ta), label, statistics.median(tb)))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", default="layernorm_f32")
    ap.add_argument("--runs", type=int, default=20000)
    ap.add_argument("--mode", default="plain", choices=("plain", "streams", "graph"),
                    help="kfuse's launch mode")
    ap.add_argument("--quick", action="store_true",
                    help="only the per-run pairs and the alternating loops")
    ap.add_argument("--partners", action="store_true",
                    help="only kfuse's per-run pairs alone and interleaved with other "
                         "kernels: torch.compile's, eager's and a copy of the first input")
    ap.add_argument("--cupti", action="store_true",
                    help="only the kernels' own start and end times (torch.profiler), "
                         "per-run pairs against a loop")
    args = ap.parse_args()
    found = [w for w in suite.workloads() if w[0] == args.workload]
    if not found:
        ap.error("no workload %s" % args.workload)
    name, make, fn, _ = found[0]
    ins = make()
    plan = kfuse.compile_yaml(os.path.join(suite.GRAPHS, name + ".yaml"), mode=args.mode)
    outs = plan.empty_outputs()
    bound = plan.bind(ins, outs)
    stream = torch.cuda.current_stream().cuda_stream
    cfn = torch.compile(fn)
    ref = cfn(*ins)
    plan.run(ins, outs)
    torch.cuda.synchronize()
    err = max(suite.rel_err(o, r) for o, r in zip(outs, ref))
    mb = suite.nbytes(ins) + suite.nbytes(outs)
    sides = (("kfuse", lambda: bound.run(stream)), ("torch.compile", lambda: cfn(*ins)))
    knobs = " ".join("%s=%s" % kv for kv in sorted(os.environ.items()) if kv[0].startswith("KFUSE_ROW"))
    print("%s: %.1f MB moved, max rel err kfuse vs torch.compile %.2e; kfuse mode %s %s" %
          (name, mb / 1e6, err, args.mode, knobs))
    print(launcher_line())
    if args.partners:
        return partners(sides[0][1], sides[1][1], fn, ins)
    if args.cupti:
        for _ in range(2):
            for label, f in sides:
                for pairs in (True, False):
                    print(spans_line(label, "pairs" if pairs else "loop",
                                     *kernel_spans(f, 200, pairs)))
        return 0
    for label, f in sides:
        times = event_times(f, iters=200)
        print("  alone, 200 per-run event pairs: %-13s %s" % (label, spread(times)))
    ta, tb = interleaved(sides[0][1], sides[1][1])
    print("  interleaved, 200 per-run event pairs each: kfuse         %s" % spread(ta))
    print("  interleaved, 200 per-run event pairs each: torch.compile %s" % spread(tb))
    a, b = statistics.median(ta), statistics.median(tb)
    loops = {label: [] for label, _ in sides}
    for _ in range(10):
        for label, f in sides:
            loops[label].append(loop_us(f, n=100)[0] / 1000.0)
    for label, _ in sides:
        print("  100 back-to-back runs, one event pair (10 times, alternating): %-13s "
              "median %.4f: %s" % (label, statistics.median(loops[label]),
                                   " ".join("%.4f" % v for v in loops[label])))
    if args.quick:
        return 0
    # kfuse writing to outputs at other addresses: DRAM placement of the
    # written rows against the read ones (torch.compile's output moves with
    # the caching allocator; kfuse's stays where plan.empty_outputs put it)
    sweep, keep = [], []
    for k in range(8):
        keep.append(torch.empty((k * 3 + 1) << 20, dtype=torch.uint8, device="cuda"))
        o = plan.empty_outputs()
        keep.append(o)
        b2 = plan.bind(ins, o)
        f2 = lambda b2=b2: b2.run(stream)  # noqa: E731
        t = statistics.median(loop_us(f2, n=100)[0] / 1000.0 for _ in range(3))
        sweep.append((t, o[0].data_ptr() % (1 << 30)))
    print("  kfuse, 100 back-to-back runs into outputs at 8 other addresses (ms per run, "
          "address mod 1 GiB): " + ", ".join("%.4f @%#x" % v for v in sweep))
    print("  kfuse over those addresses: min %.4f, median %.4f, max %.4f" %
          (min(v[0] for v in sweep), statistics.median(v[0] for v in sweep),
           max(v[0] for v in sweep)))
    del keep
    for label, f in sides:
        ms, med, n = sampled_loop(f, args.runs)
        print("  %d back-to-back runs: %-13s %.4f ms/run; nvidia-smi medians of %d samples: "
              "SM %s MHz, mem %s MHz, %s W, %s C" %
              (args.runs, label, ms, n, *(("%.0f" % v) for v in med)) if med else
              "  %d back-to-back runs: %-13s %.4f ms/run (no nvidia-smi samples)" %
              (args.runs, label, ms))
    print("  GB/s at the interleaved medians: kfuse %.0f, torch.compile %.0f" %
          (mb / a / 1e6, mb / b / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
