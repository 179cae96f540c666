#!/usr/bin/env python3
"""kernel_spans.py - each kernel's own span on the GPU, read from
%globaltimer inside the kernel, without a profiler: kfuse's row kernel and
torch.compile's (Inductor's Triton kernel), both instrumented, under the
suite's per-run event pairs and in a back-to-back loop.

  python3 bench/kernel_spans.py [--workload layernorm_f32] [--runs 200]

Why: under CUPTI kfuse's layernorm_f32 kernel is the shorter of the two,
yet without a profiler torch.compile's per-run event pairs are 1% shorter
(performance.md, session 7). A profiler changes what it measures; this
script reads the GPU's global timer from inside both kernels instead.

How each side is instrumented (same scheme on both):
  - at entry, one thread of each block takes a ticket (an atomic add on a
    counter; run = ticket / blocks per grid) and reads %globaltimer;
  - kfuse also reads it again after kf_grid_dep_sync (the programmatic
    dependent launch wait);
  - at the end, after a block barrier, one thread reads it again and
    folds the block into its run's slots: earliest start, latest end,
    latest start.
kfuse's kernel comes from its own templates with horizontal.cu (the entry)
patched, through KFUSE_TEMPLATE_DIR, and runs through kfuse's own launch
path (a bound plan). Inductor's kernel is the one torch.compile chose: its
Triton source (CachingAutotuner.fn.src) with the same lines added, compiled
by Triton with the autotuner's chosen config and launched on the arguments
Inductor passed (captured from its run call).

Printed per side and timing: the event pair (ms; the uninstrumented kernel's
too, to show the instrumentation costs nothing measurable), the span from
the first block's start to the last block's end (us), the gap from one
run's last block end to the next run's first block start (us), the grid's
launch spread (last block start - first block start) and, for kfuse, the
time blocks wait in griddepcontrol.wait. Needs a GPU, PyTorch with Triton,
KFUSE_LIB (scripts/gpu-perf.sh's environment).
"""
import argparse
import gc
import importlib.util
import inspect
import os
import re
import shutil
import statistics
import sys
import tempfile

import torch
import triton
import triton.language as tl  # noqa: F401  (the patched Inductor source uses it)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import kfuse  # noqa: E402
import suite  # noqa: E402
from timing import event_times, loop_us  # noqa: E402

MAX_RUNS = 4096
SLOTS = 4  # per run: min start, min start after the dependency wait, max end, max start
BIG = (1 << 63) - 1


def new_trace():
    t = torch.zeros(1 + SLOTS * MAX_RUNS, dtype=torch.int64, device="cuda")
    reset(t)
    return t


def reset(t):
    torch.cuda.synchronize()
    v = t[1:].view(MAX_RUNS, SLOTS)
    t[0] = 0
    v[:, 0] = BIG
    v[:, 1] = BIG
    v[:, 2] = 0
    v[:, 3] = 0
    torch.cuda.synchronize()


def read(t, runs):
    """Per run: (span, wait, spread) in us, and the gaps between runs."""
    torch.cuda.synchronize()
    v = t[1:1 + SLOTS * runs].view(runs, SLOTS).cpu().tolist()
    span = [(r[2] - r[0]) / 1000.0 for r in v]
    wait = [(r[1] - r[0]) / 1000.0 for r in v if r[1] != BIG]
    spread = [(r[3] - r[0]) / 1000.0 for r in v]
    gaps = [(b[0] - a[2]) / 1000.0 for a, b in zip(v, v[1:])]
    return span, wait, spread, gaps


# ---- kfuse: the entry template patched ----------------------------------------

# Thread 0 of each block reads the run counter after the dependency wait
# and keeps it in a register until the end (a load whose value is used only
# there does not stall the block); every write is a fire-and-forget
# reduction (red.global in PTX, no result to wait for), so a block retires
# as soon as its work is done.
KF_START = """  __shared__ unsigned long long kf_tr_t0, kf_tr_t1;
  unsigned long long kf_tr_c = 0;
  if (threadIdx.x == 0) {
    unsigned long long t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    kf_tr_t0 = t0;
  }
"""
KF_AFTER_DEP = """  if (threadIdx.x == 0) {
    unsigned long long t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    kf_tr_t1 = t1;
    asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(kf_tr_c) : "l"(KF_TR));
  }
"""
KF_FOLD = """  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long t2;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t2));
    unsigned long long *s = KF_TR + 1 + 4 * (kf_tr_c / gridDim.x);
    asm volatile("red.global.min.u64 [%0], %1;" :: "l"(s), "l"(kf_tr_t0) : "memory");
    asm volatile("red.global.min.u64 [%0], %1;" :: "l"(s + 1), "l"(kf_tr_t1) : "memory");
    asm volatile("red.global.max.u64 [%0], %1;" :: "l"(s + 2), "l"(t2) : "memory");
    asm volatile("red.global.max.u64 [%0], %1;" :: "l"(s + 3), "l"(kf_tr_t0) : "memory");
    asm volatile("red.global.add.u64 [%0], 1;" :: "l"(KF_TR) : "memory");
  }
"""


def kfuse_templates(addr):
    """A copy of kfuse's templates whose kernel entry records the trace at
    device address addr (baked in: the entry's parameters stay kfuse's)."""
    src = os.path.join(HERE, "..", "templates")
    dst = tempfile.mkdtemp(prefix="kf_spans_")
    for f in os.listdir(src):
        shutil.copy(os.path.join(src, f), dst)
    path = os.path.join(dst, "horizontal.cu")
    text = open(path).read()
    hole = "{{dep}}{{route}}}"
    if text.count(hole) != 1:
        sys.exit("kernel_spans: horizontal.cu has no single '%s'; update the patch" % hole)
    tr = "((unsigned long long *)0x%xull)" % addr
    text = text.replace(hole, KF_START + "{{dep}}" + KF_AFTER_DEP.replace("KF_TR", tr) +
                        "{{route}}" + KF_FOLD.replace("KF_TR", tr) + "}")
    open(path, "w").write(text)
    return dst


# ---- Inductor: its chosen kernel, patched ---------------------------------------

# The same for Triton: inline PTX, run by every thread, the reductions
# predicated on thread 0; kf_trace is the trace's address as an integer.
TR_TIME = ('tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l,r", '
           '[tl.program_id(0)], dtype=tl.int64, is_pure=False, pack=1)')
TR_COUNT = ('tl.inline_asm_elementwise("ld.volatile.global.u64 $0, [$1];", "=l,l", '
            '[kf_trace], dtype=tl.int64, is_pure=False, pack=1)')


def tr_red(op, addr, val):
    return ('tl.inline_asm_elementwise("{ .reg .pred kp; .reg .u32 kt; mov.u32 kt, %%tid.x; '
            'setp.eq.u32 kp, kt, 0; @kp red.global.%s.u64 [$1], $2; mov.u32 $0, 0; }", '
            '"=r,l,l", [%s, %s], dtype=tl.int32, is_pure=False, pack=1)' % (op, addr, val))


def inductor_kernel(cfn, ins):
    """torch.compile's single Triton kernel for cfn: (autotuner, the
    arguments Inductor passed it, the outputs of that call). Exits when the
    compiled code has more than one kernel."""
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner
    # type(), not isinstance(): the heap holds weak proxies to freed objects
    tuned = [o for o in gc.get_objects()
             if issubclass(type(o), CachingAutotuner) and getattr(o, "launchers", None)]
    if len(tuned) != 1:
        sys.exit("kernel_spans: torch.compile ran %d Triton kernels (%s); one is needed" %
                 (len(tuned), ", ".join(getattr(o.fn, "__name__", "?") for o in tuned)))
    k = tuned[0]
    cap = []
    orig = k.run

    def spy(*args, **kw):
        cap.append((args, kw))
        return orig(*args, **kw)
    k.run = spy
    res = cfn(*ins)
    torch.cuda.synchronize()
    k.run = orig
    if not cap:
        sys.exit("kernel_spans: Inductor's kernel was not called through run()")
    return k, cap[0][0], res


def patch_inductor(k, keep=None):
    """Inductor's kernel source with the trace added, imported from a file
    (Triton reads a kernel's source from its file): the JIT function. The
    patched source is also written to `keep` when given."""
    src = getattr(k.fn, "src", None) or inspect.getsource(k.fn.fn)
    src = src[re.search(r"^def ", src, re.M).start():]
    if re.search(r"^\s+return\b", src, re.M):
        sys.exit("kernel_spans: Inductor's kernel returns early; the end timer would miss it")
    head = open(inspect.getsourcefile(k.fn.fn)).read()
    head = head[:re.search(r"^@", head, re.M).start()]
    m = re.search(r"^def (\w+)\((.*?)\):\n", src, re.M | re.S)
    name = m.group(1)
    body = src[m.end():]
    ind = re.search(r"^([ \t]+)\S", body, re.M).group(1)
    pre = "\n".join(ind + s for s in (
        "kf_t0 = " + TR_TIME,
        "kf_c = " + TR_COUNT)) + "\n"
    post = "\n".join(ind + s for s in (
        "tl.debug_barrier()",
        "kf_t2 = " + TR_TIME,
        "kf_s = kf_trace + 8 * (1 + 4 * (kf_c // tl.num_programs(0)))",
        tr_red("min", "kf_s", "kf_t0"),
        tr_red("max", "kf_s + 16", "kf_t2"),
        tr_red("max", "kf_s + 24", "kf_t0"),
        tr_red("add", "kf_trace", "kf_t0 * 0 + 1"))) + "\n"
    new = ("%s\n@triton.jit\ndef %s(kf_trace, %s):\n%s%s%s" %
           (head, name, m.group(2), pre, body.rstrip() + "\n", post))
    d = tempfile.mkdtemp(prefix="kf_spans_ind_")
    path = os.path.join(d, "kf_spans_inductor.py")
    open(path, "w").write(new)
    if keep:
        open(keep, "w").write(new)
    spec = importlib.util.spec_from_file_location("kf_spans_inductor", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def inductor_launch(k, jit, args, trace):
    """A function launching the patched kernel as Inductor launched its own."""
    cfg = getattr(k.launchers[0], "config", None) or k.configs[0]
    kw = dict(cfg.kwargs)
    ints = [a for a in args if isinstance(a, int)]
    grid = (triton.cdiv(ints[0], kw.get("XBLOCK", 1)),)
    opts = dict(num_warps=cfg.num_warps, num_stages=cfg.num_stages)
    addr = trace.data_ptr()
    return (lambda: jit[grid](addr, *args, **kw, **opts)), cfg, grid


# ---- timing ------------------------------------------------------------------------

def med(v):
    return statistics.median(v) if v else float("nan")


def measure(label, fn, trace, runs):
    """Per-run pairs, then a loop, each with the trace read back."""
    for _ in range(5):
        fn()
    reset(trace)
    pairs = event_times(fn, warmup=0, iters=runs)
    span, wait, spread, gaps = read(trace, runs)
    print("  %-22s per-run pairs: pair %.4f ms | span %.2f us (p10 %.2f p90 %.2f) | gap %.2f us"
          " | launch spread %.2f us | dep wait %s" %
          (label, med(pairs), med(span), *statistics.quantiles(span, n=10)[0:9:8], med(gaps),
           med(spread), "%.2f us" % med(wait) if wait else "-"))
    reset(trace)
    per_run = loop_us(fn, n=runs)[0] / 1000.0
    # loop_us runs 20 warm-up calls first: they hold the first 20 tickets
    span, wait, spread, gaps = read(trace, runs + 20)
    span, spread, gaps = span[20:], spread[20:], gaps[20:]
    wait = wait[20:] if wait else wait
    print("  %-22s loop of %d:     %.4f ms/run | span %.2f us (p10 %.2f p90 %.2f) | gap %.2f us"
          " | launch spread %.2f us | dep wait %s" %
          (label, runs, per_run, med(span), *statistics.quantiles(span, n=10)[0:9:8],
           med(gaps), med(spread), "%.2f us" % med(wait) if wait else "-"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", default="layernorm_f32")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--source", help="write Inductor's patched kernel source here")
    args = ap.parse_args()
    if args.runs + 20 > MAX_RUNS:
        ap.error("--runs at most %d" % (MAX_RUNS - 20))
    found = [w for w in suite.workloads() if w[0] == args.workload]
    if not found:
        ap.error("no workload %s" % args.workload)
    name, make, fn, _ = found[0]
    ins = make()
    graph = os.path.join(suite.GRAPHS, name + ".yaml")
    stream = torch.cuda.current_stream().cuda_stream
    trace = new_trace()

    plan = kfuse.compile_yaml(graph)
    outs = plan.empty_outputs()
    bound = plan.bind(ins, outs)
    os.environ["KFUSE_TEMPLATE_DIR"] = kfuse_templates(trace.data_ptr())
    tplan = kfuse.compile_yaml(graph)
    del os.environ["KFUSE_TEMPLATE_DIR"]
    touts = tplan.empty_outputs()
    tbound = tplan.bind(ins, touts)

    cfn = torch.compile(fn)
    ref = cfn(*ins)
    k, kargs, kres = inductor_kernel(cfn, ins)
    jit = patch_inductor(k, args.source)
    ilaunch, cfg, grid = inductor_launch(k, jit, kargs, trace)

    # every output element written, by all four kernels
    for o in outs + touts:
        o.fill_(float("nan"))
    bound.run(stream)
    tbound.run(stream)
    outs_ind = [r for r in kres if any(isinstance(a, torch.Tensor) and
                                       a.data_ptr() == r.data_ptr() for a in kargs)]
    if len(outs_ind) != len(ref):
        print("kernel_spans: not every output of torch.compile is written by its kernel")
        return 1
    for o in outs_ind:
        o.fill_(float("nan"))
    ilaunch()
    torch.cuda.synchronize()
    errs = [suite.rel_err(o, r) for o, r in zip(outs + touts, list(ref) * 2)]
    errs += [suite.rel_err(o, r) for o, r in zip(outs_ind, ref)]
    print("%s: kfuse and instrumented kfuse, instrumented Inductor against torch.compile: "
          "max rel err %s" % (name, ", ".join("%.1e" % e for e in errs)))
    print("  Inductor kernel %s: config %s, num_warps %d, num_stages %d, grid %s, "
          "registers %s" % (jit.__name__, cfg.kwargs, cfg.num_warps, cfg.num_stages, grid,
                            getattr(k.launchers[0], "n_regs", "?")))
    if max(errs) > 1e-4:
        print("kernel_spans: outputs differ; the timings below are not of the same work")
        return 1
    for rnd in range(2):
        print("round %d" % (rnd + 1))
        for label, f in (("kfuse (uninstrumented)", lambda: bound.run(stream)),
                         ("torch.compile (uninstr.)", lambda: cfn(*ins))):
            print("  %-22s per-run pairs: pair %.4f ms; loop %.4f ms/run" %
                  (label, med(event_times(f, iters=args.runs)),
                   loop_us(f, n=args.runs)[0] / 1000.0))
        measure("kfuse", lambda: tbound.run(stream), trace, args.runs)
        measure("Inductor", ilaunch, trace, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
