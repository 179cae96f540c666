"""torch.py - kfuse as a torch.compile backend:

    model = torch.compile(model, backend="kfuse")     # or backend=kfuse.torch.backend
    print(kfuse.torch.explain(model, x))              # partitions, fallbacks, launches

Dynamo hands each captured graph to `backend`, which goes through
AOTAutograd (forward and backward graphs, functionalized aten, with
DECOMPOSITIONS turning composites kfuse has no op for into primitives).
Each aten graph is split by torch's CapabilityBasedPartitioner into the
largest subgraphs whose every node translates to kfuse (Support, with the
reason for each node that does not); each becomes a Partition module that
compiles one kfuse plan per concrete input signature (dtypes, shapes,
device), cached in memory (kfuse's kernel caches add the disk), and runs it
on torch's current stream with outputs and workspace from torch's caching
allocator. Everything else runs as the original aten ops, and a partition
that kfuse fails to translate, compile or run falls back to its aten ops
with one warning. Semantics are PyTorch's (translate.py: type promotion,
integer sums in int64, sign(NaN) = 0, broadcasting); non-contiguous inputs
are copied to contiguous ones first.

mm/bmm/addmm (and linear, which decomposes into them) go to kfuse, whose
plans run them as cuBLASLt calls; KFUSE_TORCH_MATMUL=0 leaves them to
PyTorch. Without a GPU (debugging, tests),
KFUSE_TORCH_DEVICE=reference (or `backend_with(reference=True)`) takes CPU
tensors and runs each partition on kfuse's CPU reference interpreter, with
the partitioning and translation of the GPU path; `reference:sm_90` (any
arch) also compiles each partition's plan with NVRTC for that arch, as the
GPU path does (a compile failure falls back the same way), so the compile
work of a model is measured and checked on a CPU.
"""
import logging
import operator
import os
import time
import warnings

import torch
from torch._dynamo.backends.common import aot_autograd
from torch._decomp import get_decompositions
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupport

from . import translate as TR
from ._native import KfuseError

log = logging.getLogger("kfuse.torch")
aten = torch.ops.aten

# Composites kfuse has no op for, decomposed by AOTAutograd into primitives
# that it fuses (the rest of the graph keeps its aten ops as they are).
DECOMPOSITIONS = get_decompositions([
    aten.native_layer_norm, aten.native_layer_norm_backward, aten._softmax_backward_data,
    aten._log_softmax_backward_data, aten.gelu_backward, aten.silu_backward,
    aten.sigmoid_backward, aten.tanh_backward, aten.threshold_backward, aten.rsub,
    aten.addcmul, aten.addcdiv, aten.lerp, aten.hardtanh, aten.leaky_relu, aten.elu,
    aten.softplus, aten.mse_loss, aten.mse_loss_backward, aten.var_mean, aten.var,
    aten.rms_norm, aten.hardsigmoid, aten.hardswish, aten.mish, aten.logsumexp,
    # inference batch norm: a per-channel scale and shift that fuses with
    # the activation after it (ResNet's 20 batch norms fell back)
    # (its decomposition calls _native_batch_norm_legit, a mutable op that
    # AOTAutograd refuses in a functional graph unless it is decomposed too)
    aten._native_batch_norm_legit_no_training, aten._native_batch_norm_legit,
])

_collector = None  # the Report of a running explain()
_threads = None


def _pool():
    global _threads
    if _threads is None:
        from concurrent.futures import ThreadPoolExecutor
        _threads = ThreadPoolExecutor(max_workers=min(32, os.cpu_count() or 1),
                                      thread_name_prefix="kfuse-compile")
    return _threads


class Support(OperatorSupport):
    """Which nodes kfuse takes; the reasons for the others go to `rejected`."""

    def __init__(self, reference=False):
        super().__init__()
        self.reference = reference
        self.rejected = {}  # (op, reason) -> count

    def is_node_supported(self, submodules, node):
        if node.op != "call_function":
            return False
        if node.target is operator.getitem:  # a tuple's item, no aten op: not counted
            return False
        why = TR.why_not(node, self.reference)
        if why:
            key = (TR.op_name(node.target), why)
            self.rejected[key] = self.rejected.get(key, 0) + 1
            return False
        return True


class Partition(torch.nn.Module):
    """One kfuse plan per input signature for an aten subgraph; its aten ops
    (the submodule) where kfuse fails, with one warning."""

    def __init__(self, sub, name, reference=False, arch=None):
        super().__init__()
        self.sub = sub
        self.pname = name
        self.reference = reference
        self.arch = arch  # reference mode: also compile for this arch
        self.plans = {}  # signature -> (plan, graph, workspace, layouts) or None (falls back)
        self.pending = {}  # signature -> Future of _translate_compile (precompile)
        self.ops = [TR.op_name(n.target) for n in sub.graph.nodes if n.op == "call_function"]
        self.compile_ms = 0.0  # translate + plan + NVRTC (+ load), all signatures
        self.translate_ms = 0.0  # of which the aten -> kfuse translation
        self.launches = 0
        self.profile = []  # per signature compiled: a dict (Report.first_call)
        self.warned = False
        outs = [n for n in sub.graph.nodes if n.op == "output"][0].args[0]
        self.tuple_out = isinstance(outs, (tuple, list))

    def _fallback(self, why, args):
        if not self.warned:
            warnings.warn("kfuse: partition %s (%d ops) runs as aten ops: %s"
                          % (self.pname, len(self.ops), why), stacklevel=3)
            self.warned = True
        log.info("partition %s falls back: %s", self.pname, why)
        return self.sub(*args)

    def _translate_compile(self, args, device=None):
        """Translation and NVRTC: no device work, so it may run on a worker
        thread (precompile; device: the caller's CUDA device). What _finish
        needs, with the times."""
        t0 = time.perf_counter()
        g, layouts = TR.translate(self.sub, args)
        t1 = time.perf_counter()
        plan = None
        if not self.reference:
            dev = args[0].device if args else device
            if dev is not None and dev.type == "cuda":
                torch.cuda.set_device(dev)  # this thread's context: the device's arch and SMs
            plan = g.compile(check="never")
        elif self.arch:  # the GPU path's compile, unloaded (no device)
            plan = g.compile(arch=self.arch, check="never")
        t2 = time.perf_counter()
        prof = {"translate_ms": (t1 - t0) * 1e3, "start": t0, "end": t2}
        if plan is not None:
            st = plan.compile_stats()
            prof["compile_ms"] = st["compile_ms"]  # emit + cache lookups + NVRTC
            prof["plan_ms"] = (t2 - t1) * 1e3 - st["compile_ms"]  # fusion, buffers
            prof["launches"] = plan.launch_compiles()
        return g, layouts, plan, prof, (t2 - t0) * 1e3

    def _finish(self, built, device):
        """The cache entry from _translate_compile's result (on the calling
        thread: loading and the workspace touch the device)."""
        g, layouts, plan, prof, ms = built
        t0 = time.perf_counter()
        self.translate_ms += prof["translate_ms"]
        if plan is not None:
            self.launches = plan.launches
        if self.reference:
            entry = (None, g, None, layouts)
        else:
            # loaded now, before any CUDA Graph capture; loading may split a
            # kernel and so change the launches and the workspace size
            plan.load()
            ws = None
            if plan.workspace_bytes > 0:  # from torch's caching allocator
                ws = torch.empty(plan.workspace_bytes, dtype=torch.uint8, device=device)
                plan.set_workspace(ws.data_ptr(), plan.workspace_bytes)
            entry = (plan, g, ws, layouts)
            self.launches = plan.launches
        prof["load_ms"] = (time.perf_counter() - t0) * 1e3
        if plan is not None:  # loading may re-plan (a matmul choice): its kernels count too
            prof["launches"] = plan.launch_compiles()
            if not self.reference:  # the load's matmul choice: its counters (docs/matmul.md)
                prof["matmul_choice"] = plan.to_json().get("matmul_choice")
        self.profile.append(prof)
        ms += prof["load_ms"]
        self.compile_ms += ms
        log.info("partition %s: %d ops, compiled in %.1f ms", self.pname, len(self.ops), ms)
        return entry

    @staticmethod
    def signature(args):
        return tuple((a.dtype, tuple(a.shape), a.device) if isinstance(a, torch.Tensor) else a
                     for a in args)

    def precompile(self, pool):
        """Starts translating and compiling this partition for the signature
        of its traced inputs on pool (a thread pool: NVRTC releases the GIL
        and is thread-safe, and kfuse's caches share one compile of a kernel
        among its waiters), so that a graph's partitions compile at once;
        forward() takes the result. Symbolic shapes wait for the call."""
        phs = [n for n in self.sub.graph.nodes if n.op == "placeholder"]
        fake = [n.meta.get("val") for n in phs]
        if not all(isinstance(v, torch.Tensor) and all(isinstance(d, int) for d in v.shape)
                   for v in fake):
            return
        dev = None  # a partition with no inputs compiles for the caller's device
        if not fake and not self.reference and torch.cuda.is_available():
            dev = torch.device("cuda", torch.cuda.current_device())
        self.pending[self.signature(fake)] = pool.submit(self._translate_compile, fake, dev)

    def _build(self, key, args):
        fut = self.pending.pop(key, None)
        t0 = time.perf_counter()
        built = fut.result() if fut is not None else self._translate_compile(args)
        built[3]["wait_ms"] = (time.perf_counter() - t0) * 1e3  # the caller blocked this long
        return self._finish(built, args[0].device if args else torch.device("cuda"))

    def forward(self, *args):
        key = self.signature(args)
        first = key not in self.plans
        if first:
            try:
                self.plans[key] = self._build(key, args)
            except KfuseError as e:
                self.plans[key] = None
                return self._fallback(str(e), args)
        entry = self.plans[key]
        if entry is None:
            return self.sub(*args)
        t0 = time.perf_counter()
        try:
            outs = self._run(entry, args)
        except KfuseError as e:
            self.plans[key] = None
            return self._fallback(str(e), args)
        if first and self.profile:  # the first run (the reference's, or the launches')
            self.profile[-1]["run_ms"] = (time.perf_counter() - t0) * 1e3
        return tuple(outs) if self.tuple_out else outs[0]

    def _run(self, entry, args):
        plan, g, _, layouts = entry
        ins = [a if a.is_contiguous() else a.contiguous() for a in args]
        if plan is None:
            return TR.lay_out(TR.run_reference(g, ins), layouts)
        dev = ins[0].device if ins else torch.device("cuda")
        outs = [torch.empty(shape, dtype=TR.TORCH[dt], device=dev) for dt, shape in plan.outputs]
        plan.run(ins, outs, stream=torch.cuda.current_stream(dev).cuda_stream)
        return TR.lay_out(outs, layouts)


def _useful(partition):
    """A partition worth a launch: at least one node that computes."""
    return any(not TR.is_view(n) for n in partition.nodes)


def partition(gm, reference=False, arch=None):
    """gm with each kfuse-supported subgraph replaced by a Partition module;
    also the Support (its `rejected` reasons) and the Partitions."""
    support = Support(reference)
    cbp = CapabilityBasedPartitioner(gm, support, allows_single_node_partition=True)
    parts = [p for p in cbp.propose_partitions() if _useful(p)]
    fused = cbp.fuse_partitions(parts)
    mods = []
    for node in fused.graph.nodes:
        if node.op == "call_module" and node.target.startswith("fused_"):
            m = Partition(getattr(fused, node.target), node.target, reference, arch)
            setattr(fused, node.target, m)
            mods.append(m)
    fused.recompile()
    # KFUSE_TORCH_PRECOMPILE=0: each partition compiles at its first call,
    # one after the other; by default a graph's partitions compile at once
    if os.environ.get("KFUSE_TORCH_PRECOMPILE", "1") != "0":
        pool = _pool()
        for m in sorted(mods, key=lambda m: -len(m.ops)):  # the longest first
            m.precompile(pool)
    return fused, support, mods


def _compiler(reference, arch):
    def compile_graph(gm, example_inputs):
        from functorch.compile import make_boxed_func
        t0 = time.perf_counter()
        n_ops = sum(1 for n in gm.graph.nodes if n.op == "call_function"
                    and n.target is not operator.getitem)
        fused, support, mods = partition(gm, reference, arch)
        log.info("graph of %d ops: %d kfuse partitions (%d ops), %d ops fall back",
                 n_ops, len(mods), sum(len(m.ops) for m in mods),
                 n_ops - sum(len(m.ops) for m in mods))
        if _collector is not None:
            _collector.graphs.append(GraphReport(n_ops, fused, support, mods,
                                                 (time.perf_counter() - t0) * 1e3))
        return make_boxed_func(fused.forward)
    return compile_graph


def backend_with(reference=False, arch=None):
    """A torch.compile backend; reference=True takes CPU tensors and runs
    the partitions on kfuse's CPU reference (tests without a GPU); with
    arch (reference mode only) each partition's plan is also compiled for
    that arch, unloaded."""
    c = _compiler(reference, arch if reference else None)
    return aot_autograd(fw_compiler=c, bw_compiler=c, decompositions=DECOMPOSITIONS)


_backend = backend_with()
_reference_backends = {}


def device_mode():
    """KFUSE_TORCH_DEVICE: (False, None) for the GPU ("" or "cuda"), (True,
    arch) for "reference" or "reference:ARCH". Read at each compile."""
    v = os.environ.get("KFUSE_TORCH_DEVICE", "").strip()
    if v in ("", "cuda"):
        return False, None
    kind, _, arch = v.partition(":")
    if kind != "reference":
        raise KfuseError("KFUSE_TORCH_DEVICE must be cuda, reference or reference:ARCH, not %r"
                         % v, "ERR_INVALID_ARG")
    return True, arch or None


def _cudagraph_backend(gm, example_inputs):
    """mode="reduce-overhead": the partitioned graphs replayed as CUDA Graph
    trees, as Dynamo's own "cudagraphs" backend does (its helpers: input
    mutations and CPU tensors skip graphs with a logged reason), with the
    partitioning step in front."""
    from torch._dynamo.backends.cudagraphs import (check_for_skip, find_input_mutations,
                                                   get_device_index, get_stack_traces)
    from torch._dynamo.backends.debugging import boxed_nop
    from torch._inductor.cudagraph_trees import cudagraphify_impl
    from torch._inductor.cudagraph_utils import get_placeholder_info
    from torch._inductor.utils import count_tangents, num_fw_fixed_arguments

    state = {"graphs": True}  # a forward without graphs: its backward has none either

    def compile_graph(aot_model, aot_inputs, backward=False, is_inference=False):
        # what CUDA Graph trees need to know, read from the aten graph
        # before partitioning replaces its nodes with Partition modules
        fixed = count_tangents(aot_model) if backward else \
            num_fw_fixed_arguments(len(example_inputs), len(aot_inputs))
        why = check_for_skip(aot_model, fixed)
        if backward and not state["graphs"]:
            why = why or "its forward graph has none"
        elif not backward and why:
            state["graphs"] = False
        facts = dict(device_index=None if why else get_device_index(aot_model),
                     stack_traces=get_stack_traces(aot_model),
                     placeholders=get_placeholder_info(aot_model.graph),
                     mutated_input_idxs=find_input_mutations(aot_model.graph))
        fused, _, _ = partition(aot_model)
        interp = boxed_nop(fused, aot_inputs)
        if why:
            log.info("no CUDA Graph for this graph: %s", why)
            return interp
        out = cudagraphify_impl(interp, aot_inputs, range(fixed), is_backward=backward,
                                is_inference=is_inference, **facts)
        out._boxed_call = True
        return out

    import functools
    return aot_autograd(fw_compiler=compile_graph,
                        bw_compiler=functools.partial(compile_graph, backward=True),
                        inference_compiler=functools.partial(compile_graph, is_inference=True),
                        decompositions=DECOMPOSITIONS)(gm, example_inputs)


def backend(gm, example_inputs, mode=None, **kwargs):
    """The torch.compile backend "kfuse" (the torch_dynamo_backends entry
    point). mode="reduce-overhead" replays each graph as a CUDA Graph."""
    reference, arch = device_mode()
    if reference:  # no CUDA Graphs on the CPU reference
        if arch not in _reference_backends:
            _reference_backends[arch] = backend_with(True, arch)
        return _reference_backends[arch](gm, example_inputs, **kwargs)
    if mode == "reduce-overhead":
        try:
            return _cudagraph_backend(gm, example_inputs)
        except ImportError as e:  # a torch whose CUDA Graph tree helpers moved
            warnings.warn("kfuse: mode=\"reduce-overhead\" without CUDA Graphs: %s" % e)
    return _backend(gm, example_inputs, **kwargs)


def register():
    """Registers backend as "kfuse" with Dynamo (idempotent)."""
    from torch._dynamo.backends import registry
    if "kfuse" not in getattr(registry, "_BACKENDS", {}):
        registry.register_backend(backend, name="kfuse")


class GraphReport:
    def __init__(self, n_ops, fused, support, mods, partition_ms):
        self.ops = n_ops
        self.fused = fused
        self.rejected = dict(support.rejected)
        self.partitions = mods
        self.partition_ms = partition_ms

    def aten_calls(self):
        """Nodes left to aten that launch work (views and getitem do not)."""
        return sum(1 for n in self.fused.graph.nodes
                   if n.op == "call_function" and not TR.is_view(n)
                   and TR.op_name(n.target) != "getitem")


class Report:
    """What explain() found: per graph (forward, backward, each graph break),
    the partitions, the ops that fell back and why, launches and compile time."""

    def __init__(self):
        self.graphs = []

    @property
    def fallbacks(self):
        out = {}
        for g in self.graphs:
            for k, v in g.rejected.items():
                out[k] = out.get(k, 0) + v
        return out

    def first_call(self):
        """Where the first call's kfuse time went, summed over graphs and
        partitions (a dict of ms and counts; docs/python.md, "First-call
        profile"). Worker threads overlap: compile_span_ms is the wall time
        from the first partition's translation start to the last compile's
        end; the per-kernel sums are CPU time on the workers."""
        out = dict(graphs=len(self.graphs), backend_ms=0.0, partitions=0, translate_ms=0.0,
                   plan_ms=0.0, emit_ms=0.0, lookup_ms=0.0, nvrtc_ms=0.0, nvrtc_max_ms=0.0,
                   wait_ms=0.0, load_ms=0.0, run_ms=0.0, launches=0, library=0, compiled=0,
                   memory_hits=0, disk_hits=0, distinct_kernels=0, compiled_twice=0,
                   source_kb=0.0, template_timed=0, template_skipped=0, choices=0,
                   choices_cached=0, choose_ms=0.0, template_choice_ms=0.0,
                   template_ahead_ms=0.0, calls=0,
                   calls_timed=0, calls_known=0)
        keys, compiled_keys, spans = {}, {}, []
        for g in self.graphs:
            out["backend_ms"] += g.partition_ms
            for m in g.partitions:
                for p in m.profile:
                    out["partitions"] += 1
                    spans.append((p["start"], p["end"]))
                    for k in ("translate_ms", "plan_ms", "wait_ms", "load_ms", "run_ms"):
                        out[k] += p.get(k, 0.0)
                    c = p.get("matmul_choice")
                    if c:  # the load's counters, not the decision's text (docs/matmul.md)
                        out["choices"] += 1
                        out["choices_cached"] += c["how"] == "cached"
                        out["template_timed"] += c["template"] == "timed"
                        out["template_skipped"] += c["template"] in ("cannot win", "cannot pay")
                        out["choose_ms"] += c["choose_ms"]
                        out["template_choice_ms"] += c["template_ms_spent"]
                        # compiled with the plan on the worker (pl_matmul_precompile):
                        # inside g.compile's time, which plan_ms would count
                        ahead = c.get("template_ahead_ms", 0.0)
                        out["template_ahead_ms"] += ahead
                        out["plan_ms"] -= ahead
                        for k in ("calls", "calls_timed", "calls_known"):
                            out[k] += c[k]
                    for L in p.get("launches", []):
                        out["launches"] += 1
                        out["emit_ms"] += L["emit_ms"]
                        if L["origin"] == "library":
                            out["library"] += 1
                            continue
                        keys[L["key"]] = keys.get(L["key"], 0) + 1
                        out["source_kb"] += L["source_bytes"] / 1024.0
                        if L["origin"] == "compiled":
                            out["compiled"] += 1
                            out["nvrtc_ms"] += L["compile_ms"]
                            out["nvrtc_max_ms"] = max(out["nvrtc_max_ms"], L["compile_ms"])
                            compiled_keys[L["key"]] = compiled_keys.get(L["key"], 0) + 1
                        else:
                            out["memory_hits" if L["origin"] == "memory" else "disk_hits"] += 1
                            out["lookup_ms"] += L["compile_ms"]
        out["distinct_kernels"] = len(keys)
        out["compiled_twice"] = sum(n - 1 for n in compiled_keys.values() if n > 1)
        out["compile_span_ms"] = (max(e for _, e in spans) - min(s for s, _ in spans)) * 1e3 \
            if spans else 0.0
        return out

    def first_call_table(self, total_ms=None, steady_ms=None):
        """first_call() as lines of text; with the first call's wall time
        (and a steady call's), the rest is Dynamo + AOTAutograd tracing and
        the aten ops around the partitions."""
        f = self.first_call()
        rows = [("kfuse backend (partitioning, submits)", f["backend_ms"], ""),
                ("  translation (workers)", f["translate_ms"], "%d partitions" % f["partitions"]),
                ("  plan: fusion + buffers (workers)", f["plan_ms"], ""),
                ("  codegen (workers)", f["emit_ms"], "%d launches, %d library calls, %.0f KB"
                 % (f["launches"], f["library"], f["source_kb"])),
                ("  NVRTC (workers, summed)", f["nvrtc_ms"],
                 "%d kernels, mean %.0f ms, max %.0f ms; %d distinct, %d compiled twice"
                 % (f["compiled"], f["nvrtc_ms"] / max(f["compiled"], 1), f["nvrtc_max_ms"],
                    f["distinct_kernels"], f["compiled_twice"])),
                ("  cache hits (workers)", f["lookup_ms"], "%d memory, %d disk"
                 % (f["memory_hits"], f["disk_hits"])),
                ("  template plans compiled ahead (workers)", f["template_ahead_ms"],
                 "for the load's matmul choice"),
                ("  compile span (wall)", f["compile_span_ms"], "first translation to last compile"),
                ("waiting for compiles (caller)", f["wait_ms"], ""),
                ("load + matmul choice (caller)", f["load_ms"], "templates timed %d, skipped %d"
                 % (f["template_timed"], f["template_skipped"])),
                ("  matmul choice", f["choose_ms"],
                 "%d plans (%d read back); %d library calls: %d timed, %d on record, %d first "
                 "only; templates %.0f ms" % (f["choices"], f["choices_cached"], f["calls"],
                                              f["calls_timed"], f["calls_known"],
                                              f["calls"] - f["calls_timed"] - f["calls_known"],
                                              f["template_choice_ms"])),
                ("first runs of partitions", f["run_ms"], "")]
        own = f["backend_ms"] + f["wait_ms"] + f["load_ms"]
        if total_ms is not None:  # a steady call stands for the runs (kfuse's and aten's)
            rest = total_ms - own - (f["run_ms"] if steady_ms is None else steady_ms)
            rows.insert(0, ("first call (wall)", total_ms, ""))
            rows.append(("rest: Dynamo + AOTAutograd + aten", rest,
                         "first call - kfuse's caller-side - a steady call"
                         if steady_ms is not None else "first call - kfuse's caller-side"))
        return "\n".join("  %-40s %9.1f ms  %s" % r for r in rows)

    def launches_per_call(self):
        return sum(sum(m.launches for m in g.partitions) + g.aten_calls() for g in self.graphs)

    def __str__(self):
        lines = ["kfuse.torch.explain: %d graph(s)" % len(self.graphs)]
        for i, g in enumerate(self.graphs):
            kf = sum(len(m.ops) for m in g.partitions)
            lines.append("graph %d: %d aten ops, %d in %d kfuse partition(s), %d left to aten "
                         "(partitioning %.1f ms)" % (i, g.ops, kf, len(g.partitions), g.ops - kf,
                                                     g.partition_ms))
            for m in g.partitions:
                state = "falls back" if any(v is None for v in m.plans.values()) else \
                    "%d launch(es), compiled in %.1f ms" % (m.launches, m.compile_ms)
                lines.append("  %s: %d ops (%s): %s" % (m.pname, len(m.ops),
                                                        ", ".join(sorted(set(m.ops))), state))
            for (op, why), n in sorted(g.rejected.items()):
                lines.append("  fallback %s x%d: %s" % (op, n, why))
        lines.append("launches per call: %d" % self.launches_per_call())
        return "\n".join(lines)


def explain(model, *inputs, reference=False, **compile_kwargs):
    """Compiles model with the kfuse backend (Dynamo reset first), runs it
    once on inputs and returns a Report (print it). reference=True (or an
    arch, "sm_90": compile too) runs on the CPU reference, as
    backend_with(True, arch); else KFUSE_TORCH_DEVICE decides."""
    global _collector
    import torch._dynamo
    torch._dynamo.reset()
    report = Report()
    _collector = report
    try:
        compiled = torch.compile(model, backend=backend_with(True, reference if
                                                             isinstance(reference, str) else None)
                                 if reference else backend, **compile_kwargs)
        compiled(*inputs)
    finally:
        _collector = None
    return report


if os.environ.get("KFUSE_TORCH_REGISTER", "1") != "0":
    try:
        register()
    except Exception as e:  # an older or newer Dynamo: the entry point still works
        log.debug("register_backend failed: %s", e)
