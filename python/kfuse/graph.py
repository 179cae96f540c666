"""graph.py - the graph builder, one method per builder of kfuse.h, and
graphs loaded from YAML (a path or a string):

    g = kfuse.Graph()
    x = g.input("x", "bf16", [8192, 8192])
    g.output(g.softmax(x, -1))
    plan = g.compile()              # or g.plan() without NVRTC, for describe()

A builder's error is raised at once as KfuseError (the C library's sticky
message, naming the node, op and shapes); the graph keeps that error, so a
graph that raised is not compiled. Values support + - * / ** @, unary -,
abs(), < <= > >= and & | ~ (on bool); == and != stay Python's identity so
that values can be dict keys (use g.eq / g.ne). A Python number operand
becomes a scalar constant of the other operand's dtype.
"""
import ctypes
import os

from . import _native as N
from . import plan as P
from ._native import DTYPES, KfuseError

_lib = N.lib
_P = ctypes.c_void_p


def _ints(seq, ctype=ctypes.c_int64):
    seq = [int(s) for s in seq]
    return len(seq), (ctype * max(len(seq), 1))(*seq)


class Value:
    """A value of a Graph: an input, a constant or the result of an op."""
    __slots__ = ("graph", "id")

    def __init__(self, graph, vid):
        self.graph = graph
        self.id = vid

    dtype = property(lambda self: DTYPES[_lib.kf_value_dtype(self.graph.h, self.id)])
    rank = property(lambda self: _lib.kf_value_rank(self.graph.h, self.id))
    numel = property(lambda self: _lib.kf_value_numel(self.graph.h, self.id))
    op = property(lambda self: N.cstr(_lib.kf_value_op(self.graph.h, self.id)))

    @property
    def shape(self):
        s = _lib.kf_value_shape(self.graph.h, self.id)
        return tuple(s[k] for k in range(self.rank))

    @property
    def name(self):
        n = _lib.kf_value_name(self.graph.h, self.id)
        return n.decode() if n else None

    @name.setter
    def name(self, name):
        self.graph.set_name(self, name)

    def __repr__(self):
        return "<kfuse.Value %%%d %s: %s%s = %s>" % (self.id, self.name or "", self.dtype,
                                                   list(self.shape), self.op)

    def _bin(name, swap=False):
        def f(self, other):
            return getattr(self.graph, name)(other, self) if swap else \
                getattr(self.graph, name)(self, other)
        return f

    __add__, __radd__ = _bin("add"), _bin("add", True)
    __sub__, __rsub__ = _bin("sub"), _bin("sub", True)
    __mul__, __rmul__ = _bin("mul"), _bin("mul", True)
    __truediv__, __rtruediv__ = _bin("div"), _bin("div", True)
    __pow__, __rpow__ = _bin("pow"), _bin("pow", True)
    __matmul__ = _bin("matmul")
    __lt__, __le__, __gt__, __ge__ = _bin("lt"), _bin("le"), _bin("gt"), _bin("ge")
    __and__, __rand__ = _bin("logical_and"), _bin("logical_and", True)
    __or__, __ror__ = _bin("logical_or"), _bin("logical_or", True)
    __neg__ = lambda self: self.graph.neg(self)  # noqa: E731
    __abs__ = lambda self: self.graph.abs(self)  # noqa: E731
    __invert__ = lambda self: self.graph.logical_not(self)  # noqa: E731
    del _bin


class Graph:
    """A kf_graph under construction. ctx: a kfuse.Context (default: the
    module's shared one), needed to compile or to load YAML."""

    def __init__(self, name=None, ctx=None, _handle=None):
        self.ctx = ctx or P.default_context()
        self.h = _handle
        if self.h is None:
            h = _P()
            st = _lib.kf_graph_create(self.ctx.h, ctypes.byref(h))
            if st != 0:
                raise self.ctx.error("kf_graph_create", st)
            self.h = h
        if name is not None:
            self.name = name

    def __del__(self):
        if getattr(self, "h", None) and _lib is not None:
            _lib.kf_graph_destroy(self.h)
            self.h = None

    # ---- errors and checks ----------------------------------------------------
    def _raise(self, what, st=None):
        st = _lib.kf_graph_status(self.h) if st is None else st
        raise N.error(what, st or 1, N.cstr(_lib.kf_graph_errmsg(self.h)))

    def _made(self, what, vid):
        if vid < 0:
            self._raise(what)
        return Value(self, vid)

    def _v(self, x, like=None):
        """An operand: a Value of this graph, or a number as a scalar constant
        of `like`'s dtype (f32 when there is none)."""
        if isinstance(x, Value):
            if x.graph is not self:
                raise KfuseError("a value of another graph", "ERR_INVALID_ARG")
            return x.id
        if isinstance(x, (bool, int, float)):
            dt = like.dtype if isinstance(like, Value) else "f32"
            return self.scalar(x, dt).id
        raise KfuseError("not a kfuse value or a number: %r" % (x,), "ERR_INVALID_ARG")

    @property
    def status(self):
        """The sticky status name ("OK", "ERR_SHAPE", ...)."""
        return N.status_name(_lib.kf_graph_status(self.h))

    @property
    def errmsg(self):
        return N.cstr(_lib.kf_graph_errmsg(self.h))

    # ---- inputs, constants, outputs, names ------------------------------------
    def input(self, name, dtype, shape):
        n, sh = _ints(shape)
        return self._made("kf_input", _lib.kf_input(self.h, name.encode(), N.dtype_code(dtype),
                                                    n, sh))

    def scalar(self, value, dtype="f32"):
        return self._made("kf_scalar", _lib.kf_scalar(self.h, float(value), N.dtype_code(dtype)))

    def output(self, *values):
        """Marks each value as the next graph output (in order)."""
        for v in values:
            st = _lib.kf_set_output(self.h, self._v(v))
            if st != 0:
                self._raise("kf_set_output", st)

    def set_name(self, v, name):
        st = _lib.kf_set_name(self.h, self._v(v), name.encode())
        if st != 0:
            self._raise("kf_set_name", st)

    @property
    def name(self):
        n = _lib.kf_graph_name(self.h)
        return n.decode() if n else None

    @name.setter
    def name(self, name):
        st = _lib.kf_graph_set_name(self.h, name.encode() if name is not None else None)
        if st != 0:
            self._raise("kf_graph_set_name", st)

    def find(self, name):
        vid = _lib.kf_graph_find(self.h, name.encode())
        return Value(self, vid) if vid >= 0 else None

    @property
    def inputs(self):
        return [Value(self, _lib.kf_graph_input(self.h, i))
                for i in range(_lib.kf_graph_num_inputs(self.h))]

    @property
    def outputs(self):
        return [Value(self, _lib.kf_graph_output(self.h, i))
                for i in range(_lib.kf_graph_num_outputs(self.h))]

    @property
    def num_values(self):
        return _lib.kf_graph_num_values(self.h)

    # ---- ops --------------------------------------------------------------
    def where(self, cond, a, b):
        like = a if isinstance(a, Value) else b
        return self._made("kf_where", _lib.kf_where(self.h, self._v(cond), self._v(a, like),
                                                    self._v(b, like)))

    def clamp(self, x, lo=None, hi=None):
        """min(max(x, lo), hi); None: no bound on that side."""
        lo = float("-inf") if lo is None else float(lo)
        hi = float("inf") if hi is None else float(hi)
        return self._made("kf_clamp", _lib.kf_clamp(self.h, self._v(x), lo, hi))

    def cast(self, x, dtype):
        return self._made("kf_cast", _lib.kf_cast(self.h, self._v(x), N.dtype_code(dtype)))

    def reshape(self, x, shape):
        n, sh = _ints(shape)
        return self._made("kf_reshape", _lib.kf_reshape(self.h, self._v(x), n, sh))

    def transpose(self, x, perm):
        n, p = _ints(perm, ctypes.c_int)
        if n != Value(self, self._v(x)).rank:
            raise KfuseError("kf_transpose: perm %s has %d entries, the value has rank %d"
                             % (list(perm), n, x.rank), "ERR_INVALID_ARG")
        return self._made("kf_transpose", _lib.kf_transpose(self.h, self._v(x), p))

    def broadcast_to(self, x, shape):
        n, sh = _ints(shape)
        return self._made("kf_broadcast_to", _lib.kf_broadcast_to(self.h, self._v(x), n, sh))

    def slice(self, x, axis, start=0, stop=None, step=1):
        """x[start:stop:step] along axis, by Python's rules (None: the end)."""
        stop = (1 << 63) - 1 if stop is None else int(stop)
        return self._made("kf_slice", _lib.kf_slice(self.h, self._v(x), int(axis), int(start),
                                                    stop, int(step)))

    def concat(self, xs, axis=0):
        vs = [self._v(x) for x in xs]
        arr = (ctypes.c_int32 * max(len(vs), 1))(*vs)
        return self._made("kf_concat", _lib.kf_concat(self.h, len(vs), arr, int(axis)))

    def gather(self, x, index, axis=0):
        """numpy.take along axis; out-of-range indices clamp into [0, n-1]."""
        return self._made("kf_gather", _lib.kf_gather(self.h, self._v(x), self._v(index),
                                                      int(axis)))

    def iota(self, dtype, shape, axis=-1):
        n, sh = _ints(shape)
        return self._made("kf_iota", _lib.kf_iota(self.h, N.dtype_code(dtype), n, sh, int(axis)))

    def softmax(self, x, axis=-1):
        return self._made("kf_softmax", _lib.kf_softmax(self.h, self._v(x), int(axis)))

    def log_softmax(self, x, axis=-1):
        return self._made("kf_log_softmax", _lib.kf_log_softmax(self.h, self._v(x), int(axis)))

    def logsumexp(self, x, axis=-1):
        return self._made("kf_logsumexp", _lib.kf_logsumexp(self.h, self._v(x), int(axis)))

    def layernorm(self, x, weight=None, bias=None, eps=1e-5):
        w = -1 if weight is None else self._v(weight)
        b = -1 if bias is None else self._v(bias)
        return self._made("kf_layernorm", _lib.kf_layernorm(self.h, self._v(x), w, b, eps))

    def rmsnorm(self, x, weight=None, eps=1e-6):
        w = -1 if weight is None else self._v(weight)
        return self._made("kf_rmsnorm", _lib.kf_rmsnorm(self.h, self._v(x), w, eps))

    def matmul(self, a, b):
        return self._made("kf_matmul", _lib.kf_matmul(self.h, self._v(a), self._v(b)))

    # ---- what a graph becomes -------------------------------------------------
    def compile(self, **kw):
        """A Plan compiled with NVRTC (arch="sm_90" where there is no GPU).
        Keywords as Plan (kf_options' fields): fusion, horizontal, mode, arch,
        pdl, occupancy_drop, streams, math; and check (the torch path's policy)."""
        return P.Plan(self.ctx, self.h, **kw)

    def plan(self, **kw):
        """A Plan fused and laid out but not compiled (no NVRTC, no GPU):
        for describe(), source() and the launch counts."""
        return P.Plan(self.ctx, self.h, compile=False, **kw)

    def run_reference(self, *inputs):
        """The CPU reference interpreter on numpy arrays (see reference.py)."""
        from . import reference
        return reference.run(self, inputs)

    def check(self, inputs, outputs, rtol=0.0, atol=0.0):
        """outputs against the CPU reference on inputs, within its error bound
        (see reference.check): one result dict per output."""
        from . import reference
        return reference.check(self, inputs, outputs, rtol, atol)

    def dump(self):
        return N.take_string(_lib.kf_graph_dump(self.h)) or ""

    def hash(self):
        """The 128-bit structural hash as an int."""
        h = _lib.kf_graph_hash(self.h)
        return (h.hi << 64) | h.lo

    def to_yaml(self):
        s = N.take_string(_lib.kf_graph_to_yaml(self.h))
        if s is None:
            self._raise("kf_graph_to_yaml")
        return s

    def save_yaml(self, path):
        st = _lib.kf_graph_save_yaml(self.h, os.fsencode(path))
        if st != 0:
            self._raise("kf_graph_save_yaml", st)


def _unary(name):
    def f(self, x):
        return self._made("kf_" + name, getattr(_lib, "kf_" + name)(self.h, self._v(x)))
    f.__name__ = name
    f.__doc__ = "kf_%s (kfuse.h)." % name
    return f


def _binary(name):
    def f(self, a, b):
        return self._made("kf_" + name, getattr(_lib, "kf_" + name)(
            self.h, self._v(a, b), self._v(b, a)))
    f.__name__ = name
    f.__doc__ = "kf_%s (kfuse.h); broadcasts as NumPy does." % name
    return f


def _reduce(name):
    def f(self, x, axes=None, keepdim=False):
        """Over `axes` (an int or a sequence; None: every axis)."""
        axes = [] if axes is None else [axes] if isinstance(axes, int) else list(axes)
        n, ax = _ints(axes, ctypes.c_int)
        return self._made("kf_" + name, getattr(_lib, "kf_" + name)(
            self.h, self._v(x), n, ax, bool(keepdim)))
    f.__name__ = name
    return f


for _n in N.UNARY:
    setattr(Graph, _n, _unary(_n))
for _n in N.BINARY:
    setattr(Graph, _n, _binary(_n))
for _n in N.REDUCE:
    setattr(Graph, _n, _reduce(_n))


# ---- YAML ---------------------------------------------------------------------
def load_yaml(path, ctx=None):
    """A Graph from a graph file (a str or os.PathLike path)."""
    ctx = ctx or P.default_context()
    g = _P()
    st = _lib.kf_graph_load_yaml(ctx.h, os.fsencode(path), ctypes.byref(g))
    if st != 0:
        raise ctx.error("kf_graph_load_yaml", st)
    return Graph(ctx=ctx, _handle=g)


def load_yaml_string(text, filename=None, ctx=None):
    """A Graph from YAML text (str or bytes); messages name `filename`,
    "<string>" by default, as "<string>:LINE:COL: ..."."""
    ctx = ctx or P.default_context()
    data = text.encode() if isinstance(text, str) else bytes(text)
    g = _P()
    st = _lib.kf_graph_load_yaml_string(ctx.h, data, len(data),
                                        filename.encode() if filename else None, ctypes.byref(g))
    if st != 0:
        raise ctx.error("kf_graph_load_yaml_string", st)
    return Graph(ctx=ctx, _handle=g)


def compile_yaml(path, ctx=None, **kw):
    """Loads a graph file (str or os.PathLike) and compiles it for the
    current GPU, or for arch="sm_90" (any sm_XX) where there is none. Other
    keywords go to Plan: fusion, horizontal, mode, check, pdl, math ("strict",
    "default" or "fast")."""
    return load_yaml(path, ctx).compile(**kw)


def compile_yaml_string(text, filename=None, ctx=None, **kw):
    """compile_yaml for YAML text."""
    return load_yaml_string(text, filename, ctx).compile(**kw)
