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
  - at entry, thread 0 of each block reads %globaltimer;
  - kfuse's reads it again after kf_grid_dep_sync (the programmatic
    dependent launch wait), and there loads its block's run counter;
  - at the end, after a block barrier, thread 0 reads the timer again and
    stores the block's times for that run and the counter plus one: plain
    stores to addresses no other block writes, no atomics (atomics on
    shared slots, tried first, contend in one L2 slice).
kfuse's kernel comes from its own templates with horizontal.cu (the entry)
patched, through KFUSE_TEMPLATE_DIR, and runs through kfuse's own launch
path (a bound plan). Inductor's kernel is the one torch.compile chose: its
Triton source (CachingAutotuner.fn.src) with the same lines added, compiled
by Triton with the autotuner's chosen config and launched on the arguments
Inductor passed (captured from its run call).

Printed per side and timing: the event pair (ms; the uninstrumented kernel's
too, to show what the instrumentation costs), the span from
the first block's start to the last block's end (us), the tail (the last
block's start to the end), the gap from one
run's last block end to the next run's first block start (us), the grid's
launch spread (last block start - first block start), the mean block
life and, for kfuse, the time blocks wait in griddepcontrol.wait. --dump
DIR keeps every block's times and SM of four runs (.npz, for numpy).
Workloads whose kfuse plan or torch.compile code has more than one kernel
are refused. Needs a GPU, PyTorch with Triton, KFUSE_LIB
(scripts/gpu-perf.sh's environment).
"""
import argparse
import atexit
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

# The trace: a run counter per block, then each block's start, start after
# the dependency wait, end and SM (plus one) for each run, as plain stores
# at addresses no other block touches (atomics on shared slots contended in
# one L2 slice and slowed the kernels they measured by 5-17%).
MAX_RUNS = 240
MAX_BLOCKS = 16384
BIG = (1 << 63) - 1


def new_trace():
    return torch.zeros(MAX_BLOCKS * (1 + 4 * MAX_RUNS), dtype=torch.int64, device="cuda")


def per_run(t):
    """The trace's arrays: [start, start after the wait, end, SM + 1][run][block]."""
    return t[MAX_BLOCKS:].view(4, MAX_RUNS, MAX_BLOCKS)


def reset(t):
    torch.cuda.synchronize()
    t.zero_()
    torch.cuda.synchronize()


def read(t, runs):
    """Per run, in us: the span from the first block's start to the last
    block's end, the wait in griddepcontrol.wait (kfuse; empty otherwise),
    the launch spread (last block start - first block start), the mean
    block lifetime, and the gaps from one run's end to the next's start."""
    torch.cuda.synchronize()
    v = per_run(t)[:, :runs]
    t0, t1, t2 = v[0], v[1], v[2]
    has = t2 > 0
    start = torch.where(has, t0, BIG).min(1).values
    last = torch.where(has, t0, 0).max(1).values
    end = t2.max(1).values
    waited = torch.where(has & (t1 > 0), t1, BIG).min(1).values
    life = ((t2 - t0) * has).sum(1) / has.sum(1).clamp(min=1)
    start, last, end, waited = (x.tolist() for x in (start, last, end, waited))
    span = [(e - s) / 1000.0 for s, e in zip(start, end)]
    wait = [(w - s) / 1000.0 for s, w in zip(start, waited) if w != BIG]
    spread = [(la - s) / 1000.0 for s, la in zip(start, last)]
    gaps = [(b - a) / 1000.0 for a, b in zip(end, start[1:])]
    return span, wait, spread, (life / 1000.0).tolist(), gaps


# ---- kfuse: the entry template patched ----------------------------------------

# Thread 0 of each block reads its block's run counter after the dependency
# wait and keeps it in a register until the end (a load whose value is used
# only there does not stall the block); the block's times and its counter
# are stored at the end, after a block barrier.
KF_START = """  __shared__ unsigned long long kf_tr_t0, kf_tr_t1;
  unsigned long long kf_tr_c = ~0ull;
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
    if (blockIdx.x < KF_B) kf_tr_c = *(volatile unsigned long long *)(KF_TR + blockIdx.x);
  }
"""
KF_FOLD = """  __syncthreads();
  if (threadIdx.x == 0 && kf_tr_c < KF_R) {
    unsigned long long t2;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t2));
    unsigned long long *s = KF_TR + KF_B + kf_tr_c * KF_B + blockIdx.x;
    s[0] = kf_tr_t0;
    s[KF_R * KF_B] = kf_tr_t1;
    s[2 * KF_R * KF_B] = t2;
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    s[3 * KF_R * KF_B] = sm + 1;
    KF_TR[blockIdx.x] = kf_tr_c + 1;
  }
"""


def kf_fill(text, addr):
    return (text.replace("KF_TR", "((unsigned long long *)0x%xull)" % addr)
            .replace("KF_B", "%dull" % MAX_BLOCKS).replace("KF_R", "%dull" % MAX_RUNS))


def kfuse_templates(addr):
    """A copy of kfuse's templates whose kernel entry records the trace at
    device address addr (baked in: the entry's parameters stay kfuse's)."""
    # the build's complete template folder (templates/ and the common.cuh it
    # generates from ops.def), next to the library KFUSE_LIB names
    src = os.path.join(os.path.dirname(os.path.abspath(os.environ["KFUSE_LIB"])), "templates")
    if not os.path.isfile(os.path.join(src, "common.cuh")):
        sys.exit("kernel_spans: no %s/common.cuh: KFUSE_LIB must be a build's libkfuse.so" % src)
    dst = tempfile.mkdtemp(prefix="kf_spans_")
    for f in os.listdir(src):
        shutil.copy(os.path.join(src, f), dst)
    path = os.path.join(dst, "horizontal.cu")
    text = open(path).read()
    hole = "{{dep}}{{route}}}"
    if text.count(hole) != 1:
        sys.exit("kernel_spans: horizontal.cu has no single '%s'; update the patch" % hole)
    text = text.replace(hole, KF_START + "{{dep}}" + kf_fill(KF_AFTER_DEP, addr) +
                        "{{route}}" + kf_fill(KF_FOLD, addr) + "}")
    open(path, "w").write(text)
    return dst


# ---- Inductor: its chosen kernel, patched ---------------------------------------

# The same for Triton: inline PTX run by every thread, the counter's load
# and the stores predicated on thread 0 (and on the run fitting the trace);
# kf_trace is the trace's address as an integer.
TR_TIME = ('tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l,r", '
           '[tl.program_id(0)], dtype=tl.int64, is_pure=False, pack=1)')
TR_SMID = ('tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r,r", [tl.program_id(0)], '
           'dtype=tl.int32, is_pure=False, pack=1)')
TR_T0 = ("{ .reg .pred kp; .reg .u32 kt; mov.u32 kt, %tid.x; setp.eq.u32 kp, kt, 0; ")
TR_COUNT = ('tl.inline_asm_elementwise("' + TR_T0 + 'mov.u64 $0, 0xFFFFFFFFFFFFFFFF; '
            '@kp ld.volatile.global.u64 $0, [$1]; }", "=l,l", [kf_trace + 8 * kf_pid], '
            'dtype=tl.int64, is_pure=False, pack=1)')


def tr_st(addr, val):
    return ('tl.inline_asm_elementwise("' + TR_T0 + '.reg .pred kq; setp.ne.u32 kq, $3, 0; '
            'and.pred kp, kp, kq; @kp st.global.u64 [$1], $2; mov.u32 $0, 0; }", '
            '"=r,l,l,r", [%s, %s, kf_ok], dtype=tl.int32, is_pure=False, pack=1)' % (addr, val))


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
        "kf_pid = tl.program_id(0).to(tl.int64)",
        "kf_c = " + TR_COUNT)) + "\n"
    post = "\n".join(ind + s for s in (
        "tl.debug_barrier()",
        "kf_t2 = " + TR_TIME,
        "kf_ok = ((kf_c >= 0) & (kf_c < %d) & (kf_pid < %d)).to(tl.int32)" % (MAX_RUNS, MAX_BLOCKS),
        "kf_s = kf_trace + 8 * (%d + kf_c * %d + kf_pid)" % (MAX_BLOCKS, MAX_BLOCKS),
        tr_st("kf_s", "kf_t0"),
        tr_st("kf_s + %d" % (16 * MAX_RUNS * MAX_BLOCKS), "kf_t2"),
        tr_st("kf_s + %d" % (24 * MAX_RUNS * MAX_BLOCKS), TR_SMID + ".to(tl.int64) + 1"),
        tr_st("kf_trace + 8 * kf_pid", "kf_c + 1"))) + "\n"
    new = ("%s\n@triton.jit\ndef %s(kf_trace, %s):\n%s%s%s" %
           (head, name, m.group(2), pre, body.rstrip() + "\n", post))
    d = tempfile.mkdtemp(prefix="kf_spans_ind_")
    atexit.register(shutil.rmtree, d, True)
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


def stats(v):
    q = statistics.quantiles(v, n=10)
    return "%.2f us (p10 %.2f p90 %.2f)" % (med(v), q[0], q[-1])


def dump(trace, runs, path):
    """Every block's start, start after the wait and end (ns from its run's
    first start; -1 where not recorded) and SM, for the middle four runs,
    to an .npz file: where in the grid the time goes."""
    import numpy as np
    torch.cuda.synchronize()
    v = per_run(trace)[:, runs // 2:runs // 2 + 4]
    has = v[2] > 0
    base = torch.where(has, v[0], BIG).min(1).values[:, None]
    t = torch.where(has.unsqueeze(0) & (v[:3] > 0), v[:3] - base, torch.full_like(v[:3], -1))
    np.savez_compressed(path, start=t[0].cpu().numpy(), waited=t[1].cpu().numpy(),
                        end=t[2].cpu().numpy(), sm=(v[3] - 1).cpu().numpy())


def report(label, timing, spans):
    span, wait, spread, life, gaps = spans
    print("  %-22s %-15s %s | span %s | gap %.2f us | launch spread %.2f us | tail %.2f us"
          " | block life %.2f us | dep wait %s" %
          (label, timing[0], timing[1], stats(span), med(gaps), med(spread),
           med([a - b for a, b in zip(span, spread)]), med(life),
           "%.2f us" % med(wait) if wait else "-"))


def measure(label, fn, trace, runs, dump_to=None):
    """Per-run pairs, then a loop, each with the trace read back."""
    for _ in range(5):
        fn()
    reset(trace)
    pairs = event_times(fn, warmup=0, iters=runs)
    if dump_to:
        dump(trace, runs, dump_to)
    report(label, ("per-run pairs:", "pair %.4f ms" % med(pairs)), read(trace, runs))
    reset(trace)
    per_run_ms = loop_us(fn, n=runs)[0] / 1000.0
    # loop_us runs 20 warm-up calls first: they take the first 20 runs
    report(label, ("loop of %d:" % runs, "%.4f ms/run" % per_run_ms),
           [x[20:] for x in read(trace, runs + 20)])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", default="layernorm_f32")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=2, help="rounds of the four timings")
    ap.add_argument("--source", help="write Inductor's patched kernel source here")
    ap.add_argument("--dump", metavar="DIR",
                    help="write every block's times of four per-run-pair runs (first round) "
                         "to DIR/<workload>-kfuse.npz and -inductor.npz")
    args = ap.parse_args()
    if args.runs + 20 > MAX_RUNS or args.runs < 10:
        ap.error("--runs from 10 to %d" % (MAX_RUNS - 20))
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
    tdir = kfuse_templates(trace.data_ptr())
    os.environ["KFUSE_TEMPLATE_DIR"] = tdir
    try:
        tplan = kfuse.compile_yaml(graph)
    finally:
        del os.environ["KFUSE_TEMPLATE_DIR"]
        shutil.rmtree(tdir, True)
    if tplan.launches != 1:
        ap.error("%s: kfuse's plan has %d launches; the trace counts one kernel's blocks" %
                 (name, tplan.launches))
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
    for rnd in range(max(args.rounds, 1)):
        print("round %d" % (rnd + 1))
        for label, f in (("kfuse (uninstrumented)", lambda: bound.run(stream)),
                         ("torch.compile (uninstr.)", lambda: cfn(*ins))):
            print("  %-22s per-run pairs: pair %.4f ms; loop %.4f ms/run" %
                  (label, med(event_times(f, iters=args.runs)),
                   loop_us(f, n=args.runs)[0] / 1000.0))
        where = (lambda who: os.path.join(args.dump, "%s-%s.npz" % (name, who))
                 if args.dump and rnd == 0 else None)
        measure("kfuse", lambda: tbound.run(stream), trace, args.runs, where("kfuse"))
        measure("Inductor", ilaunch, trace, args.runs, where("inductor"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
