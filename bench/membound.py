#!/usr/bin/env python3
"""membound.py - runs the memory-bound family (bench/family.py, issue 23)
on the GPU: kfuse (through the Python binding) against torch.compile
(default mode), every output checked, in one run.

  . build-gpu/env.sh && python3 bench/membound.py [--jobs 8] [--only a,b] [--iters 40]

For each graph, on the same fresh random inputs (uniform in [-2, 2), seeded):
  - kfuse's plan (kfuse.compile_yaml) runs into outputs poisoned with NaN;
    each output must match torch eager's within the dtype's tolerance
    (family.TOL, relative to the output's largest magnitude) with the same
    NaN pattern (the family has none: a NaN left is an element never
    written). torch.compile's outputs are compared with eager's too (shown).
  - both are timed: CUDA events around each call, the median of --iters
    calls after a warm-up; a graph whose bytes fit in L2 (under 50 MB)
    rotates through enough input sets (and kfuse output sets) to move 200
    MiB, so that no call finds its inputs in L2.
The copy ceiling is measured in the same run (a torch copy of 1 GiB: bytes
read + written), and for each graph a flat copy of its own bytes (half read,
half written, rotated over the same sets: "% same-bytes copy"). Prints, and writes to $OUT/membound.md and .json, the table
(graph, bytes, kfuse us, % of copy, torch.compile us, ratio = torch.compile
time / kfuse time, errors), the geomean of the ratios, the graphs below
0.95x and the graphs of 64 MiB or more below 85% of copy.

torch.compile's cost is a few seconds per graph; phase 1 pays it in --jobs
worker processes at once (each compiles its graphs with torch.compile and
kfuse, filling Inductor's FX-graph and Triton caches and kfuse's disk cache,
all in one cache folder), so that phase 2, alone on the GPU, finds both
compilers' results cached. Expected wall time on the 16-core H200: about
1.5 min for phase 1 (57 graphs, 8 workers) and 2-3 min for phase 2.
"""
import argparse
import json
import math
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import family  # noqa: E402

L2_BYTES = 50 << 20
ROTATE_BYTES = 200 << 20


def setup_caches(cache_dir, threads=None):
    """One Inductor cache folder for the workers and the timing process, with
    the FX graph cache on: phase 2 then loads what phase 1 compiled."""
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(cache_dir, "inductor"))
    os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(cache_dir, "triton"))
    os.environ.setdefault("TORCHINDUCTOR_FX_GRAPH_CACHE", "1")
    if threads:
        os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = str(threads)


def load_fn(b, path):
    import torch
    import torch.nn.functional as F
    scope = {"torch": torch, "F": F}
    exec(compile(family.render_torch(b), path, "exec"), scope)
    return scope["fn"]


def make_inputs(b, seed):
    import torch
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    out = []
    for v in b.inputs:
        x = torch.rand(v.shape, device="cuda", generator=g, dtype=torch.float32)
        x = x.mul_(family.INPUT_HI - family.INPUT_LO).add_(family.INPUT_LO)
        out.append(x.to(getattr(torch, {"f32": "float32", "f16": "float16",
                                        "bf16": "bfloat16"}[v.dtype])))
    return out


def by_name(names):
    fam = {b.name: b for b in family.family()}
    return [fam[n] for n in names]


# ---- phase 1: compile everything in parallel -----------------------------------

def warm_one(job):
    name, yaml_path, py_path = job
    t0 = time.perf_counter()
    try:
        import torch
        import kfuse
        (b,) = by_name([name])
        ins = make_inputs(b, 0)
        kfuse.compile_yaml(yaml_path)
        tk = time.perf_counter() - t0
        cfn = torch.compile(load_fn(b, py_path))
        cfn(*ins)
        torch.cuda.synchronize()
        return name, tk, time.perf_counter() - t0 - tk, None
    except Exception as e:  # reported; phase 2 compiles it again and says why
        return name, 0.0, time.perf_counter() - t0, "%s: %s" % (type(e).__name__, e)


def warm_init(cache_dir):
    setup_caches(cache_dir, threads=2)


def phase1(jobs, n, cache_dir):
    t0 = time.perf_counter()
    ctx = mp.get_context("spawn")
    with ctx.Pool(n, initializer=warm_init, initargs=(cache_dir,)) as pool:
        for name, tk, tc, err in pool.imap_unordered(warm_one, jobs):
            print("  warm %-34s kfuse %5.2f s  torch.compile %6.2f s%s" % (
                name, tk, tc, "  (%s)" % err if err else ""), flush=True)
    return time.perf_counter() - t0


# ---- phase 2: check and time, one graph at a time -------------------------------

def event_us(calls, iters):
    """Median us of `iters` calls, rotating through `calls`, each between its
    own event pair, after one warm-up pass over every call (at least 5)."""
    import torch
    for i in range(max(5, len(calls))):
        calls[i % len(calls)]()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
          for _ in range(iters)]
    for i, (s, e) in enumerate(ev):
        s.record()
        calls[i % len(calls)]()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in ev) * 1000.0


def copy_gbps():
    """The run's copy ceiling: 1 GiB read and 1 GiB written."""
    return same_bytes_copy_gbps(2 << 30, 1, 30)


def same_bytes_copy_gbps(nbytes, sets, iters):
    """A flat torch copy that reads and writes the graph's bytes (half each,
    whatever the graph's split), over as many buffer sets as kfuse's run
    rotates through: the ceiling of a kernel that moves exactly these bytes,
    where the 1 GiB copy's is a size few graphs have (a copy of 256 MiB ran
    at 94% of the 1 GiB one's bandwidth on the H200, session 14)."""
    import torch
    n = max(1, nbytes // 8)  # f32 elements in each half
    pairs = [(torch.empty(n, device="cuda"), torch.empty(n, device="cuda")) for _ in range(sets)]
    for a, _ in pairs:
        a.uniform_()
    us = event_us([lambda a=a, c=c: c.copy_(a) for a, c in pairs], iters)
    return 2 * n * 4 / us / 1e3


def compare(out, ref, tol):
    """(relative error, problem or None): the largest difference relative to
    the largest magnitude of ref; NaN patterns must be equal."""
    import torch
    if tuple(out.shape) != tuple(ref.shape):
        return float("inf"), "shape %s, torch %s" % (list(out.shape), list(ref.shape))
    o, r = out.double(), ref.double()
    on, rn = torch.isnan(o), torch.isnan(r)
    if not torch.equal(on, rn):
        return float("inf"), "%d NaN, torch %d (NaN left in a poisoned output: an element " \
            "never written)" % (int(on.sum()), int(rn.sum()))
    ok = ~rn
    if not bool(ok.any()):
        return 0.0, None
    scale = r[ok].abs().max().item() or 1.0
    err = (o[ok] - r[ok]).abs().max().item() / scale
    return err, (None if err <= tol else "error %.3g over tolerance %g" % (err, tol))


def run_one(b, d, args, copy):
    import torch
    import kfuse
    yaml_path, py_path = (os.path.join(d, b.name + e) for e in (".yaml", ".py"))
    nbytes = family.io_bytes(b)
    sets = min(64, math.ceil(ROTATE_BYTES / nbytes)) if nbytes < L2_BYTES else 1
    r = {"graph": b.name, "bytes": nbytes, "sets": sets, "notes": b.notes}
    fn = load_fn(b, py_path)
    ins = [make_inputs(b, 1000 * args.seed + s) for s in range(sets)]
    ref = fn(*ins[0])
    t0 = time.perf_counter()
    plan = kfuse.compile_yaml(yaml_path)
    r["kfuse_compile_s"] = time.perf_counter() - t0
    r["launches"] = plan.launches
    outs = [plan.empty_outputs() for _ in range(sets)]
    for o in outs[0]:
        o.fill_(float("nan"))
    stream = torch.cuda.current_stream().cuda_stream
    plan.run(ins[0], outs[0], stream)
    torch.cuda.synchronize()
    tol = family.TOL[b.dtype]
    checks = [compare(o, x, tol) for o, x in zip(outs[0], ref)]
    r["kfuse_err"] = max(c[0] for c in checks)
    r["problems"] = ["kfuse %s: %s" % (n, c[1]) for n, c in zip(b.outputs, checks) if c[1]]
    bound = [plan.bind(i, o) for i, o in zip(ins, outs)]
    r["kfuse_us"] = event_us([lambda x=x: x.run(stream) for x in bound], args.iters)
    r["pct_copy"] = 100.0 * nbytes / r["kfuse_us"] / 1e3 / copy
    r["same_copy_gbps"] = same_bytes_copy_gbps(nbytes, sets, args.iters)
    r["pct_same_copy"] = 100.0 * nbytes / r["kfuse_us"] / 1e3 / r["same_copy_gbps"]
    if not args.no_compile:
        t0 = time.perf_counter()
        cfn = torch.compile(fn)
        cout = cfn(*ins[0])
        torch.cuda.synchronize()
        r["compile_first_s"] = time.perf_counter() - t0
        r["compile_err"] = max(compare(o, x, tol)[0] for o, x in zip(cout, ref))
        del cout
        r["compile_us"] = event_us([lambda i=i: cfn(*i) for i in ins], args.iters)
        r["ratio"] = r["compile_us"] / r["kfuse_us"]
    return r


def fmt(v, f):
    return "-" if v is None else f % v


def table(rows, copy, wall):
    lines = ["Copy ceiling in this run: %.0f GB/s (torch copy of 1 GiB, read + write). "
             "ratio: torch.compile time / kfuse time (above 1: kfuse is faster)." % copy, "",
             "| graph | bytes | launches | kfuse us | % copy | % same-bytes copy | torch.compile us | "
             "ratio | kfuse err | compile err | check |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if "error" in r:
            lines.append("| %s | %s | - | - | - | - | - | - | - | - | FAILED: %s |" % (
                r["graph"], r.get("bytes", "-"), r["error"].replace("|", "/")[:200]))
            continue
        lines.append("| %s | %d | %d | %.1f | %.1f%% | %s | %s | %s | %.1e | %s | %s |" % (
            r["graph"], r["bytes"], r["launches"], r["kfuse_us"], r["pct_copy"],
            fmt(r.get("pct_same_copy"), "%.1f%%"),
            fmt(r.get("compile_us"), "%.1f"), fmt(r.get("ratio"), "%.2fx"), r["kfuse_err"],
            fmt(r.get("compile_err"), "%.1e"), "; ".join(r["problems"]) or "ok"))
    ok = [r for r in rows if "error" not in r]
    ratios = [r["ratio"] for r in ok if r.get("ratio")]
    lines.append("")
    if ratios:
        geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        slow = [r for r in ok if r.get("ratio") and r["ratio"] < 0.95]
        lines.append("geomean ratio over %d graphs: %.3fx; below 0.95x: %d%s" % (
            len(ratios), geo, len(slow), (" (" + ", ".join(
                "%s %.2fx" % (r["graph"], r["ratio"]) for r in slow) + ")") if slow else ""))
    big = [r for r in ok if r["bytes"] >= 64 << 20]
    low = [r for r in big if r["pct_copy"] < 85.0]
    lines.append("graphs of 64 MiB or more: %d; below 85%% of copy: %d%s" % (
        len(big), len(low), (" (" + ", ".join("%s %.1f%%" % (r["graph"], r["pct_copy"])
                                              for r in low) + ")") if low else ""))
    low_same = [r for r in big if r.get("pct_same_copy", 100.0) < 85.0]
    lines.append("graphs of 64 MiB or more below 85%% of a same-bytes copy: %d%s" % (
        len(low_same), (" (" + ", ".join("%s %.1f%%" % (r["graph"], r["pct_same_copy"])
                                         for r in low_same) + ")") if low_same else ""))
    bad = [r for r in rows if "error" in r or r.get("problems")]
    lines.append("check failures: %d%s" % (len(bad), (" (" + ", ".join(
        r["graph"] for r in bad) + ")") if bad else ""))
    lines.append("wall time: %s" % ", ".join("%s %.0f s" % kv for kv in wall.items()))
    return "\n".join(lines) + "\n", len(bad)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=8, help="phase-1 worker processes (0: none)")
    ap.add_argument("--only", default=None, help="comma-separated graph names")
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-compile", action="store_true", help="kfuse only")
    ap.add_argument("--cache-dir", default=None, help="Inductor/Triton caches "
                    "(default: a fresh folder, so every run compiles cold)")
    args = ap.parse_args()
    t_start = time.perf_counter()
    out = os.environ.get("OUT", "out")
    d = os.path.join(out, "membound")
    os.makedirs(d, exist_ok=True)
    cache_dir = args.cache_dir or tempfile.mkdtemp(prefix="membound-")
    setup_caches(cache_dir)
    fam = family.family()
    if args.only:
        keep = set(args.only.split(","))
        fam = [b for b in fam if b.name in keep]
    family.write(fam, d)
    wall = {}
    if args.jobs > 0 and not args.no_compile:
        print("phase 1: compiling %d graphs in %d processes" % (len(fam), args.jobs), flush=True)
        jobs = [(b.name, os.path.join(d, b.name + ".yaml"), os.path.join(d, b.name + ".py"))
                for b in fam]
        wall["phase 1"] = phase1(jobs, args.jobs, cache_dir)
    import torch
    t0 = time.perf_counter()
    copy = copy_gbps()
    print("copy ceiling: %.0f GB/s" % copy, flush=True)
    rows = []
    for b in fam:
        try:
            r = run_one(b, d, args, copy)
        except Exception as e:  # keep going: one failure must not hide the rest
            r = {"graph": b.name, "bytes": family.io_bytes(b),
                 "error": "%s: %s" % (type(e).__name__, e)}
        rows.append(r)
        print(json.dumps(r), flush=True)
        torch.cuda.empty_cache()
    wall["phase 2"] = time.perf_counter() - t0
    wall["total"] = time.perf_counter() - t_start
    md, bad = table(rows, copy, wall)
    with open(os.path.join(out, "membound.md"), "w") as f:
        f.write(md)
    with open(os.path.join(out, "membound.json"), "w") as f:
        json.dump({"copy_gbps": copy, "wall_s": wall, "results": rows}, f, indent=1)
    print(md)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
