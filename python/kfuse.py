"""kfuse.py - Python bindings of kfuse through ctypes, for embedding kfuse in
PyTorch programs (and for the benchmark suite).

    import torch, kfuse
    plan = kfuse.compile_yaml("examples/graphs/softmax.yaml")
    (y,) = plan(x)                      # allocates outputs with torch.empty
    plan.run([x], [y])                  # or into your own tensors

Tensors are borrowed by address; the run goes on torch's current stream and
never synchronizes. A run hands the C library only the tensors' addresses
(kf_plan_run_ptrs: dtypes and shapes are the plan's own), so its host cost
is one data_ptr() per tensor and one ctypes call. The dtype, shape and
contiguity of the torch tensors are checked in Python according to the
plan's `check` setting (Plan(..., check=...), default from KFUSE_CHECK):
"new" (default) when the tuple of addresses differs from the last one
checked, "always" (debugging), or "never" (hot loops whose tensors are known
right; a wrong dtype or shape then goes unnoticed). For tensors that never
move, `plan.bind(inputs, outputs)` checks them once and its `run()` passes
the addresses taken then: no per-tensor Python work per run (200 updates
of 400 inputs from Python: see docs/performance.md). The C library checks the
counts, NULL, alignment, device memory and overlaps either way (the last
two when an address changes). The library is found through KFUSE_LIB, else next to this
file's repository build (build/libkfuse.so), else the system loader.
"""
import ctypes
import os

_here = os.path.dirname(os.path.abspath(__file__))

KF_MAX_RANK = 8
DTYPES = ["f16", "bf16", "f32", "f64", "i32", "i64", "bool"]
MODES = {"plain": 0, "streams": 1, "graph": 2}


class KfuseError(RuntimeError):
    pass


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("shape", ctypes.c_int64 * KF_MAX_RANK)]


class _Options(ctypes.Structure):
    _fields_ = [("fusion", ctypes.c_bool), ("horizontal", ctypes.c_bool),
                ("arch", ctypes.c_char_p), ("mode", ctypes.c_int),
                ("occupancy_drop", ctypes.c_double), ("streams", ctypes.c_int),
                ("pdl", ctypes.c_bool)]


def _find_library():
    cands = [os.environ.get("KFUSE_LIB"),
             os.path.join(_here, "..", os.environ.get("KFUSE_BUILD", "build"), "libkfuse.so"),
             "libkfuse.so.0", "libkfuse.so"]
    for c in cands:
        if not c:
            continue
        try:
            return ctypes.CDLL(c)
        except OSError:
            continue
    raise KfuseError("libkfuse.so not found: set KFUSE_LIB or build the project")


_lib = _find_library()
_P = ctypes.c_void_p


def _sig(name, res, *args):
    f = getattr(_lib, name)
    f.restype = res
    f.argtypes = list(args)
    return f


_sig("kf_ctx_create", ctypes.c_int, ctypes.POINTER(_P))
_sig("kf_ctx_destroy", None, _P)
_sig("kf_ctx_errmsg", ctypes.c_char_p, _P)
_sig("kf_graph_destroy", None, _P)
_sig("kf_graph_load_yaml", ctypes.c_int, _P, ctypes.c_char_p, ctypes.POINTER(_P))
_sig("kf_graph_num_inputs", ctypes.c_int, _P)
_sig("kf_graph_num_outputs", ctypes.c_int, _P)
_sig("kf_graph_input", ctypes.c_int32, _P, ctypes.c_int)
_sig("kf_graph_output", ctypes.c_int32, _P, ctypes.c_int)
_sig("kf_value_dtype", ctypes.c_int, _P, ctypes.c_int32)
_sig("kf_value_rank", ctypes.c_int, _P, ctypes.c_int32)
_sig("kf_value_shape", ctypes.POINTER(ctypes.c_int64), _P, ctypes.c_int32)
_sig("kf_options_init", None, ctypes.POINTER(_Options))
_sig("kf_compile", ctypes.c_int, _P, _P, ctypes.POINTER(_Options), ctypes.POINTER(_P))
_sig("kf_plan_destroy", None, _P)
_sig("kf_plan_errmsg", ctypes.c_char_p, _P)
_sig("kf_plan_load", ctypes.c_int, _P)
_sig("kf_plan_set_mode", ctypes.c_int, _P, ctypes.c_int)
_sig("kf_plan_num_launches", ctypes.c_int, _P)
_sig("kf_plan_describe", _P, _P, ctypes.c_int)
_sig("kf_free", None, _P)
_sig("kf_status_str", ctypes.c_char_p, ctypes.c_int)
_sig("kf_graph_io", ctypes.c_int, _P, ctypes.POINTER(_Tensor), ctypes.c_int,
     ctypes.POINTER(_Tensor), ctypes.c_int)
_sig("kf_plan_run", ctypes.c_int, _P, ctypes.POINTER(_Tensor), ctypes.c_int,
     ctypes.POINTER(_Tensor), ctypes.c_int, _P)
_sig("kf_plan_run_ptrs", ctypes.c_int, _P, ctypes.POINTER(_P), ctypes.c_int,
     ctypes.POINTER(_P), ctypes.c_int, _P)

CHECKS = ("new", "always", "never")
TORCH_DTYPES = {"f16": "torch.float16", "bf16": "torch.bfloat16", "f32": "torch.float32",
                "f64": "torch.float64", "i32": "torch.int32", "i64": "torch.int64",
                "bool": "torch.bool"}


class Context:
    def __init__(self):
        self.h = _P()
        st = _lib.kf_ctx_create(ctypes.byref(self.h))
        if st != 0:
            raise KfuseError("kf_ctx_create: %s" % _lib.kf_status_str(st).decode())

    def error(self, what, st):
        msg = _lib.kf_ctx_errmsg(self.h).decode(errors="replace")
        return KfuseError("%s: %s: %s" % (what, _lib.kf_status_str(st).decode(), msg))

    def __del__(self):
        # at interpreter exit the module's globals may already be None
        if getattr(self, "h", None) and _lib is not None:
            _lib.kf_ctx_destroy(self.h)
            self.h = None


_default_ctx = None


def default_context():
    global _default_ctx
    if _default_ctx is None:
        _default_ctx = Context()
    return _default_ctx


class Plan:
    """A compiled graph; call it with torch tensors."""

    def __init__(self, ctx, graph, fusion=True, horizontal=True, mode="plain", arch=None,
                 check=None, pdl=None):
        self.ctx = ctx
        self.check = check or os.environ.get("KFUSE_CHECK") or "new"
        if self.check not in CHECKS:
            raise KfuseError("check must be one of %s, not %r" % (", ".join(CHECKS), self.check))
        opt = _Options()
        _lib.kf_options_init(ctypes.byref(opt))
        opt.fusion = fusion
        opt.horizontal = horizontal
        opt.mode = MODES[mode]
        if pdl is not None:  # None: kf_options_init's default (on unless KFUSE_PDL=0)
            opt.pdl = bool(pdl)
        if arch:
            opt.arch = arch.encode()
        self.h = _P()
        st = _lib.kf_compile(ctx.h, graph, ctypes.byref(opt), ctypes.byref(self.h))
        if st != 0:
            raise ctx.error("kf_compile", st)
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

    @property
    def launches(self):
        return _lib.kf_plan_num_launches(self.h)

    def describe(self, fmt=0):
        p = _lib.kf_plan_describe(self.h, fmt)
        if not p:
            return ""
        s = ctypes.cast(p, ctypes.c_char_p).value.decode()
        _lib.kf_free(p)
        return s

    def set_mode(self, mode):
        st = _lib.kf_plan_set_mode(self.h, MODES[mode])
        if st != 0:
            raise KfuseError(_lib.kf_plan_errmsg(self.h).decode())

    def _check_counts(self, what, inputs, outputs):
        if len(inputs) != len(self.inputs) or len(outputs) != len(self.outputs):
            raise KfuseError("%s: %d inputs and %d outputs given, the plan has %d and %d"
                             % (what, len(inputs), len(outputs), len(self.inputs),
                                len(self.outputs)))

    def bind(self, inputs, outputs):
        """The plan with these tensors fixed (checked once, here): Bound.run()
        then hands the C library the addresses taken now, with no data_ptr()
        per tensor per run. For loops over tensors that stay where they are:
        an optimizer's parameters and states, static buffers. The Bound keeps
        the tensors alive."""
        return Bound(self, inputs, outputs)

    def run(self, inputs, outputs, stream=None):
        """Runs on `stream` (an int CUstream handle; default: torch's current
        stream). Tensors must be contiguous CUDA tensors of the plan's dtypes
        and shapes (checked as `check` says; see the module's docstring)."""
        self._check_counts("run", inputs, outputs)
        pin = [t.data_ptr() for t in inputs]
        pout = [t.data_ptr() for t in outputs]
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
            raise KfuseError("kf_plan_run_ptrs: %s: %s" % (_lib.kf_status_str(st).decode(),
                                                           _lib.kf_plan_errmsg(self.h).decode()))

    def _check_tensors(self, inputs, outputs):
        """dtype, shape and contiguity: what the addresses alone do not say."""
        for what, ts, specs in (("inputs", inputs, self.inputs),
                                ("outputs", outputs, self.outputs)):
            for i, (t, (dt, shape)) in enumerate(zip(ts, specs)):
                if str(t.dtype) != TORCH_DTYPES[dt]:
                    raise KfuseError("run: %s[%d]: dtype %s, the plan expects %s"
                                     % (what, i, t.dtype, TORCH_DTYPES[dt]))
                if tuple(t.shape) != shape:
                    raise KfuseError("run: %s[%d]: shape %s, the plan expects %s"
                                     % (what, i, list(t.shape), list(shape)))
                if not t.is_contiguous():
                    raise KfuseError("run: %s[%d]: not contiguous (kfuse takes dense "
                                     "row-major tensors: call .contiguous())" % (what, i))

    def empty_outputs(self, device="cuda"):
        import torch
        return [torch.empty(shape, dtype=torch_dtype(dt), device=device)
                for dt, shape in self.outputs]

    def __call__(self, *inputs):
        outs = self.empty_outputs()
        self.run(list(inputs), outs)
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


def compile_yaml(path, ctx=None, **kw):
    """Loads a graph file and compiles it for the current GPU, or for
    arch="sm_90" (any sm_XX) where there is none. Other keywords go to Plan:
    fusion, horizontal, mode, check, pdl."""
    ctx = ctx or default_context()
    g = _P()
    st = _lib.kf_graph_load_yaml(ctx.h, path.encode(), ctypes.byref(g))
    if st != 0:
        raise ctx.error("kf_graph_load_yaml", st)
    try:
        return Plan(ctx, g, **kw)
    finally:
        _lib.kf_graph_destroy(g)
