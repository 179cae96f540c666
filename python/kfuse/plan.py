"""plan.py - contexts, compiled plans and their runs (the former
python/kfuse.py), for embedding kfuse in PyTorch, CuPy or JAX programs.

    import torch, kfuse
    plan = kfuse.compile_yaml("examples/graphs/softmax.yaml")
    (y,) = plan(x)                      # allocates outputs with torch.empty
    plan.run([x], [y])                  # or into your own tensors

Tensors are borrowed by address; the run goes on the tensors' framework's
current stream (or `stream=`) and never synchronizes.

Torch tensors take the fast path: a run hands the C library only their
addresses (kf_plan_run_ptrs: dtypes and shapes are the plan's own), so its
host cost is one data_ptr() per tensor and one ctypes call. Their dtype,
shape and contiguity are checked in Python according to the plan's `check`
setting (Plan(..., check=...), default from KFUSE_CHECK): "new" (default)
when the tuple of addresses differs from the last one checked, "always"
(debugging), or "never" (hot loops whose tensors are known right; a wrong
dtype or shape then goes unnoticed). For tensors that never move,
`plan.bind(inputs, outputs)` checks them once and its `run()` passes the
addresses taken then (200 updates of 400 inputs from Python: see
docs/performance.md). Any other tensor (CuPy, JAX, anything with
`__dlpack__` or `__cuda_array_interface__`) goes through
kf_plan_run_dlpack, where the C library checks everything (tensors.py).
The C library checks the counts, NULL, alignment, device memory and
overlaps either way (the last two when an address changes).
"""
import ctypes
import json
import os
import threading

from . import _native as N
from . import tensors as T
from ._native import (DTYPES, ORIGINS, KfuseError, _CompileStats, _LaunchCompile, _Options,
                      _Tensor)

_lib = N.lib
_P = ctypes.c_void_p
MODES = {"plain": 0, "streams": 1, "graph": 2}
FORMATS = {"text": 0, "json": 1, "dot": 2}
CHECKS = ("new", "always", "never")
TORCH_DTYPES = {"f16": "torch.float16", "bf16": "torch.bfloat16", "f32": "torch.float32",
                "f64": "torch.float64", "i32": "torch.int32", "i64": "torch.int64",
                "bool": "torch.bool"}


class Context:
    """A kf_ctx: kernel caches (memory and disk), device state, logging."""

    def __init__(self):
        self.h = _P()
        st = _lib.kf_ctx_create(ctypes.byref(self.h))
        if st != 0:
            self.h = None
            raise N.error("kf_ctx_create", st, "")

    def error(self, what, st):
        return N.error(what, st, N.cstr(_lib.kf_ctx_errmsg(self.h)))

    def __del__(self):
        # at interpreter exit the module's globals may already be None
        if getattr(self, "h", None) and _lib is not None:
            _lib.kf_ctx_destroy(self.h)
            self.h = None


_default_ctx = None
_default_lock = threading.Lock()


def default_context():
    """The process's one context. Locked: threads that build their first
    graphs at once (the torch backend's compile pool) made one context
    each (kf_ctx_create releases the GIL), so one kernel compiled once per
    context, not once per process (the memory cache is a context's)."""
    global _default_ctx
    if _default_ctx is None:
        with _default_lock:
            if _default_ctx is None:
                _default_ctx = Context()
    return _default_ctx


MATHS = {"default": 0, "strict": 1, "fast": 2}  # kf_math (docs/codegen.md, "Math policy")


def make_options(fusion=True, horizontal=True, mode="plain", arch=None, pdl=None,
                 occupancy_drop=None, streams=None, math=None):
    """A kf_options from keywords (kfuse.h's fields; None: kf_options_init's
    default); the arch string is kept alive by the caller."""
    if mode not in MODES:
        raise KfuseError("mode must be one of %s, not %r" % (", ".join(MODES), mode),
                         "ERR_INVALID_ARG")
    opt = _Options()
    _lib.kf_options_init(ctypes.byref(opt))
    opt.fusion = fusion
    opt.horizontal = horizontal
    opt.mode = MODES[mode]
    if pdl is not None:  # None: kf_options_init's default (on unless KFUSE_PDL=0)
        opt.pdl = bool(pdl)
    if arch:
        opt.arch = str(arch).encode()
    if occupancy_drop is not None:
        opt.occupancy_drop = float(occupancy_drop)
    if streams is not None:
        opt.streams = int(streams)
    if math is not None:  # None: kf_options_init's (KFUSE_MATH, else "default")
        if math not in MATHS:
            raise KfuseError("math must be one of %s, not %r" % (", ".join(MATHS), math),
                             "ERR_INVALID_ARG")
        opt.math = MATHS[math]
    return opt


class Plan:
    """A fused graph, compiled for a GPU (compile=False: planned only, for
    describe() and source() without NVRTC); call it with tensors."""

    def __init__(self, ctx, graph, fusion=True, horizontal=True, mode="plain", arch=None,
                 check=None, pdl=None, compile=True, occupancy_drop=None, streams=None,
                 math=None):
        self.ctx = ctx
        self.h = None
        self.check = check or os.environ.get("KFUSE_CHECK") or "new"
        if self.check not in CHECKS:
            raise KfuseError("check must be one of %s, not %r" % (", ".join(CHECKS), self.check),
                             "ERR_INVALID_ARG")
        opt = make_options(fusion, horizontal, mode, arch, pdl, occupancy_drop, streams, math)
        self.options = {k: getattr(opt, k) for k, _ in _Options._fields_ if k != "arch"}
        self.options["arch"] = opt.arch.decode() if opt.arch else None
        h = _P()
        what = "kf_compile" if compile else "kf_plan_create"
        st = getattr(_lib, what)(ctx.h, graph, ctypes.byref(opt), ctypes.byref(h))
        if st != 0:
            raise ctx.error(what, st)
        self.h = h
        # every input and output spec in one call (three calls per tensor
        # were 2 ms of a 600-tensor warm start)
        n_in, n_out = _lib.kf_graph_num_inputs(graph), _lib.kf_graph_num_outputs(graph)
        ins, outs = (_Tensor * max(n_in, 1))(), (_Tensor * max(n_out, 1))()
        st = _lib.kf_graph_io(graph, ins, n_in, outs, n_out)
        if st != 0:
            raise ctx.error("kf_graph_io", st)
        self.inputs = [self._spec(t) for t in ins[:n_in]]
        self.outputs = [self._spec(t) for t in outs[:n_out]]
        # The address arrays handed to kf_plan_run_ptrs, filled by one slice
        # assignment per run; _checked: the addresses last checked ("new").
        self._pin = (_P * len(self.inputs))()
        self._pout = (_P * len(self.outputs))()
        self._checked = None

    @staticmethod
    def _spec(t):
        return DTYPES[t.dtype], tuple(t.shape[:t.rank])

    def _error(self, what, st):
        return N.error(what, st, N.cstr(_lib.kf_plan_errmsg(self.h)))

    @property
    def launches(self):
        return _lib.kf_plan_num_launches(self.h)

    @property
    def kernels(self):
        return _lib.kf_plan_num_kernels(self.h)

    @property
    def workspace_bytes(self):
        return _lib.kf_plan_workspace_size(self.h)

    def describe(self, fmt="text"):
        """The plan as "text", "json" or "dot" (Graphviz; each launch a cluster)."""
        code = FORMATS.get(fmt, fmt)
        if code not in FORMATS.values():
            raise KfuseError("describe: format must be one of %s, not %r"
                             % (", ".join(FORMATS), fmt), "ERR_INVALID_ARG")
        s = N.take_string(_lib.kf_plan_describe(self.h, code))
        if s is None:
            raise KfuseError("kf_plan_describe: out of memory", "ERR_OUT_OF_MEMORY")
        return s

    def to_json(self):
        """describe("json") parsed: launches, kernels, bytes_fused, ..."""
        return json.loads(self.describe("json"))

    def source(self, launch=0, arch=None):
        """The generated CUDA C of one launch (needs neither GPU nor NVRTC)."""
        p = _lib.kf_plan_source(self.h, launch, arch.encode() if arch else None)
        if not p:
            msg = N.cstr(_lib.kf_plan_errmsg(self.h))
            raise KfuseError("kf_plan_source: " + msg, None, msg)
        return N.take_string(p)

    def compile_stats(self):
        """What the last compile did: kernels, compiled, cache_hits, ... (a dict)."""
        s = _CompileStats()
        st = _lib.kf_plan_compile_stats(self.h, ctypes.byref(s))
        if st != 0:
            raise self._error("kf_plan_compile_stats", st)
        d = {k: getattr(s, k) for k, _ in _CompileStats._fields_}
        d["arch"] = s.arch.decode()
        return d

    def launch_compiles(self):
        """Per launch of the last compile (a list of dicts): origin ("compiled",
        "memory", "disk" or "library"), emit_ms, compile_ms, source_bytes and
        key (the kernel cache key: equal keys, identical kernels)."""
        out = []
        for i in range(self.launches):
            s = _LaunchCompile()
            st = _lib.kf_plan_launch_compile(self.h, i, ctypes.byref(s))
            if st != 0:
                raise self._error("kf_plan_launch_compile", st)
            out.append({"origin": ORIGINS[s.origin], "emit_ms": s.emit_ms,
                        "compile_ms": s.compile_ms, "source_bytes": s.source_bytes,
                        "key": "%016x%016x" % (s.key_hi, s.key_lo)})
        return out

    def load(self):
        """Loads the kernels into the CUDA context now (before a CUDA Graph capture)."""
        st = _lib.kf_plan_load(self.h)
        if st != 0:
            raise self._error("kf_plan_load", st)

    def set_workspace(self, dptr, nbytes):
        """Hands the plan a caller-owned device workspace (at least
        workspace_bytes, 256-byte aligned) that must outlive its runs; 0
        returns to one kfuse allocates (kf_plan_set_workspace)."""
        st = _lib.kf_plan_set_workspace(self.h, dptr or None, nbytes)
        if st != 0:
            raise self._error("kf_plan_set_workspace", st)

    def set_mode(self, mode):
        if mode not in MODES:
            raise KfuseError("mode must be one of %s, not %r" % (", ".join(MODES), mode),
                             "ERR_INVALID_ARG")
        st = _lib.kf_plan_set_mode(self.h, MODES[mode])
        if st != 0:
            raise self._error("kf_plan_set_mode", st)

    def _check_counts(self, what, inputs, outputs):
        if len(inputs) != len(self.inputs) or len(outputs) != len(self.outputs):
            raise KfuseError("%s: %d inputs and %d outputs given, the plan has %d and %d"
                             % (what, len(inputs), len(outputs), len(self.inputs),
                                len(self.outputs)), "ERR_INVALID_ARG")

    def bind(self, inputs, outputs):
        """The plan with these torch tensors fixed (checked once, here):
        Bound.run() then hands the C library the addresses taken now, with
        no data_ptr() per tensor per run. For loops over tensors that stay
        where they are: an optimizer's parameters and states, static
        buffers. The Bound keeps the tensors alive."""
        return Bound(self, inputs, outputs)

    def run(self, inputs, outputs, stream=None):
        """Runs on `stream` (an int CUstream handle; default: the current
        stream of the tensors' framework, torch's or CuPy's, else the legacy
        default stream 0). Torch tensors must be contiguous CUDA tensors of
        the plan's dtypes and shapes (checked as `check` says; see the
        module's docstring); other tensors are checked by the C library."""
        self._check_counts("run", inputs, outputs)
        try:
            pin = [t.data_ptr() for t in inputs]
            pout = [t.data_ptr() for t in outputs]
        except AttributeError:  # not torch: DLPack or __cuda_array_interface__
            return T.run_generic(self, inputs, outputs, stream)
        if self.check != "never" and (self.check == "always" or
                                      (pin, pout) != self._checked):
            self._check_tensors(inputs, outputs)
            self._checked = (pin, pout)
        self._pin[:] = pin
        self._pout[:] = pout
        self._run_ptrs(self._pin, self._pout, stream)

    def _run_ptrs(self, pin, pout, stream):
        """One kf_plan_run_ptrs call on address arrays; None: torch's stream."""
        if stream is None:
            import torch
            stream = torch.cuda.current_stream().cuda_stream
        st = _lib.kf_plan_run_ptrs(self.h, pin, len(pin), pout, len(pout), stream)
        if st != 0:
            raise self._error("kf_plan_run_ptrs", st)

    def _check_tensors(self, inputs, outputs):
        """dtype, shape and contiguity: what the addresses alone do not say."""
        for what, ts, specs in (("inputs", inputs, self.inputs),
                                ("outputs", outputs, self.outputs)):
            for i, (t, (dt, shape)) in enumerate(zip(ts, specs)):
                if str(t.dtype) != TORCH_DTYPES[dt]:
                    raise KfuseError("run: %s[%d]: dtype %s, the plan expects %s"
                                     % (what, i, t.dtype, TORCH_DTYPES[dt]), "ERR_INVALID_ARG")
                if tuple(t.shape) != shape:
                    raise KfuseError("run: %s[%d]: shape %s, the plan expects %s"
                                     % (what, i, list(t.shape), list(shape)), "ERR_INVALID_ARG")
                if not t.is_contiguous():
                    raise KfuseError("run: %s[%d]: not contiguous (kfuse takes dense "
                                     "row-major tensors: call .contiguous())" % (what, i),
                                     "ERR_INVALID_ARG")

    def empty_outputs(self, device="cuda", like=None):
        """Fresh output tensors: torch's (default), or CuPy's when `like` is
        a CuPy array."""
        if like is not None and type(like).__module__.split(".")[0] == "cupy":
            import cupy
            return [cupy.empty(shape, dtype=T.numpy_dtype(dt)) for dt, shape in self.outputs]
        import torch
        return [torch.empty(shape, dtype=torch_dtype(dt), device=device)
                for dt, shape in self.outputs]

    def __call__(self, *inputs, stream=None):
        outs = self.empty_outputs(like=inputs[0] if inputs else None)
        self.run(list(inputs), outs, stream=stream)
        return outs

    def __del__(self):
        # at interpreter exit the module's globals may already be None
        if getattr(self, "h", None) and _lib is not None:
            _lib.kf_plan_destroy(self.h)
            self.h = None


class Bound:
    """A plan and the tensors of its runs, fixed by Plan.bind: run() is one
    ctypes call (the C library still checks counts, NULL, alignment, device
    memory and overlaps as for any run)."""

    def __init__(self, plan, inputs, outputs):
        plan._check_counts("bind", inputs, outputs)
        plan._check_tensors(inputs, outputs)
        self.plan = plan
        self._tensors = (list(inputs), list(outputs))  # kept alive
        self._pin = (_P * len(inputs))(*[t.data_ptr() for t in inputs])
        self._pout = (_P * len(outputs))(*[t.data_ptr() for t in outputs])

    def run(self, stream=None):
        """Runs on `stream` (default: torch's current stream)."""
        self.plan._run_ptrs(self._pin, self._pout, stream)


def torch_dtype(name):
    import torch
    return {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
            "f64": torch.float64, "i32": torch.int32, "i64": torch.int64,
            "bool": torch.bool}[name]
