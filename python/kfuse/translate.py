"""translate.py - aten graphs (torch.fx, functionalized, from AOTAutograd)
into kfuse graphs, with PyTorch's semantics where they differ from kfuse's:

- type promotion: each op's result dtype is the one PyTorch computes (the
  node's fake tensor, meta["val"]); operands are cast to it first (exp of
  an i32 tensor computes in f32; sum of an integer tensor in i64), and
  comparisons cast both sides to their promoted dtype (torch.result_type);
- sign(NaN) = 0 (torch's (x > 0) - (x < 0), not kfuse's sign);
- broadcasting as NumPy's (kfuse's rule too); expand's -1 keeps a size;
- shapes are the tensors' at call time (a plan per concrete signature).
why_not(node) says why a node is not translated (None: it is); the
partitioner keeps those nodes as aten ops. Importing this imports torch.
"""
import operator
import os

import torch

from .graph import Graph
from ._native import KfuseError

aten = torch.ops.aten
prims = torch.ops.prims
KF = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32",
      torch.float64: "f64", torch.int32: "i32", torch.int64: "i64", torch.bool: "bool"}
TORCH = {v: k for k, v in KF.items()}
FLOATING = {"f16", "bf16", "f32", "f64"}
NUMBER = (bool, int, float)


def op_name(target):
    """"exp.default" for aten ops, "prims.sum.default" for others."""
    if isinstance(target, torch._ops.OpOverload):
        name = "%s.%s" % (target.overloadpacket.__name__, target._overloadname)
        ns = target.namespace
        return name if ns == "aten" else "%s.%s" % (ns, name)
    return getattr(target, "__name__", str(target))


def _meta(n):
    v = n.meta.get("val") if hasattr(n, "meta") else None
    return v if isinstance(v, torch.Tensor) else None


def _kdt(n):
    return KF[_meta(n).dtype]


class T:
    """The translation of one graph: fx nodes to kfuse values."""

    def __init__(self, g):
        self.g = g
        self.env = {}

    def v(self, a, dtype=None):
        """Operand a (an fx node or a number) as a value of dtype."""
        if isinstance(a, NUMBER):
            return self.g.scalar(a, dtype or ("f32" if isinstance(a, float) else "i64"))
        x = self.env[a]
        return x if dtype is None or x.dtype == dtype else self.g.cast(x, dtype)


def _common(args):
    """The dtype PyTorch promotes these operands to (tensors and numbers)."""
    ops = [torch.empty((1,) * min(_meta(a).dim(), 1), dtype=_meta(a).dtype, device="meta")
           if not isinstance(a, NUMBER) else a for a in args]
    if all(isinstance(o, NUMBER) for o in ops):
        return None
    r = ops[0]
    for o in ops[1:]:
        dt = torch.result_type(r, o)
        r = torch.empty((1,) * max(getattr(r, "ndim", 0), getattr(o, "ndim", 0)), dtype=dt,
                        device="meta")
    return KF.get(r.dtype) if isinstance(r, torch.Tensor) else None


# ---- translations: f(t, node, *args, **kwargs) -> kfuse value ---------------------
def _unary(name, floating=False):
    def f(t, n, x, *rest, **kw):
        out = _kdt(n)
        return getattr(t.g, name)(t.v(x, out))
    f.floating = floating
    return f


def _identity_int(name):
    """floor / ceil: the identity on integers, as in PyTorch."""
    def f(t, n, x):
        out = _kdt(n)
        v = t.v(x, out)
        return v if out not in FLOATING else getattr(t.g, name)(v)
    return f


def _sign(t, n, x):
    out = _kdt(n)
    v = t.v(x, out)
    if out not in FLOATING:
        return t.g.sign(v) if out != "bool" else v
    # (x > 0) - (x < 0): 0 for NaN, as PyTorch; kfuse's sign keeps NaN
    return t.g.sub(t.g.cast(t.g.gt(v, 0.0), out), t.g.cast(t.g.lt(v, 0.0), out))


def _gelu(t, n, x, approximate="none"):
    v = t.v(x, _kdt(n))
    return t.g.gelu_tanh(v) if approximate == "tanh" else t.g.gelu(v)


def _binary(name, alpha=False):
    def f(t, n, a, b, alpha=1, **kw):
        out = _kdt(n)
        vb = t.v(b, out)
        if alpha != 1:
            vb = t.g.mul(vb, t.g.scalar(alpha, out))
        return getattr(t.g, name)(t.v(a, out), vb)
    return f


def _compare(name):
    def f(t, n, a, b):
        dt = _common([a, b])
        return getattr(t.g, name)(t.v(a, dt), t.v(b, dt))
    return f


def _logical(name):
    def f(t, n, a, b):
        return getattr(t.g, name)(t.v(a, "bool"), t.v(b, "bool"))
    return f


def _where(t, n, c, a, b):
    out = _kdt(n)
    return t.g.where(t.v(c, "bool"), t.v(a, out), t.v(b, out))


def _masked_fill(t, n, x, mask, value):
    out = _kdt(n)
    return t.g.where(t.v(mask, "bool"), t.g.scalar(value, out), t.v(x, out))


def _clamp(t, n, x, lo=None, hi=None):
    return t.g.clamp(t.v(x, _kdt(n)), lo, hi)


def _cast(t, n, x, *a, **kw):
    return t.v(x, _kdt(n))


def _axes(dim, rank):
    if dim is None:
        return None
    dims = [dim] if isinstance(dim, int) else list(dim)
    return [d % rank if rank else 0 for d in dims] or None


def _reduce(name):
    def f(t, n, x, dim=None, keepdim=False, **kw):
        out = _kdt(n)
        v = t.v(x, out)
        ax = _axes(dim, v.rank)
        if v.rank == 0:
            return v
        return getattr(t.g, name)(v, ax, keepdim)
    return f


def _full_reduce(name):
    def f(t, n, x, **kw):
        v = t.v(x, _kdt(n))
        return getattr(t.g, name)(v) if v.rank else v
    return f


def _softmax(name):
    def f(t, n, x, dim, half_to_float=False):
        return getattr(t.g, name)(t.v(x, _kdt(n)), dim)
    return f


def _view(t, n, x, shape):
    v = t.v(x)
    return t.g.reshape(v, list(shape)) if v.rank or list(shape) else v


def _permute(t, n, x, dims):
    v = t.v(x)
    return t.g.transpose(v, [d % v.rank for d in dims]) if v.rank else v


def _transpose(t, n, x, d0, d1):
    v = t.v(x)
    if v.rank < 2:
        return v
    p = list(range(v.rank))
    d0, d1 = d0 % v.rank, d1 % v.rank
    p[d0], p[d1] = p[d1], p[d0]
    return t.g.transpose(v, p)


def _t(t, n, x):
    return _transpose(t, n, x, 0, 1)


def _expand(t, n, x, size, implicit=False):
    v = t.v(x)
    off = len(size) - v.rank
    shape = [v.shape[i - off] if s == -1 else s for i, s in enumerate(size)]
    return t.g.broadcast_to(v, shape) if tuple(shape) != v.shape else v


def _unsqueeze(t, n, x, dim):
    v = t.v(x)
    shape = list(v.shape)
    shape.insert(dim % (v.rank + 1), 1)
    return t.g.reshape(v, shape)


def _squeeze(t, n, x, dim=None):
    v = t.v(x)
    dims = range(v.rank) if dim is None else [d % max(v.rank, 1) for d in
                                              ([dim] if isinstance(dim, int) else dim)]
    shape = [s for i, s in enumerate(v.shape) if not (i in dims and s == 1)]
    return t.g.reshape(v, shape) if len(shape) != v.rank else v


def _same(t, n, x, *a, **kw):
    return t.v(x)


def _broadcast_in_dim(t, n, x, shape, bdims):
    """prims.broadcast_in_dim: x's axes go to bdims of shape, the rest are new."""
    v = t.v(x)
    mid = [1] * len(shape)
    for i, d in enumerate(bdims):
        mid[d] = v.shape[i]
    r = t.g.reshape(v, mid) if tuple(mid) != v.shape else v
    return t.g.broadcast_to(r, list(shape)) if tuple(mid) != tuple(shape) else r


def _prims_sum(t, n, x, dims, output_dtype=None):
    v = t.v(x, _kdt(n))
    return t.g.sum(v, list(dims), False) if dims and v.rank else v


def _prims_var(t, n, x, dims, correction=1, output_dtype=None):
    """sum((x - mean)^2) / (N - correction) over dims."""
    v = t.v(x, _kdt(n))
    dims = list(dims) if dims is not None else list(range(v.rank))
    count = 1
    for d in dims:
        count *= v.shape[d]
    d = t.g.sub(v, t.g.mean(v, dims, True))
    return t.g.div(t.g.sum(t.g.mul(d, d), dims, False),
                   t.g.scalar(max(count - correction, 0), v.dtype))


def _full_like(fill=None):
    def f(t, n, x, *args, **kw):
        out = _kdt(n)
        value = args[0] if fill is None else fill
        v = t.v(x)
        s = t.g.scalar(value, out)
        return t.g.broadcast_to(s, list(v.shape)) if v.rank else t.g.cast(s, out)
    return f


def _scalar_tensor(t, n, value, **kw):
    """aten.scalar_tensor: a rank-0 tensor of the result dtype."""
    return t.g.scalar(value, _kdt(n))


def _new_full(fill=None):
    """x.new_zeros/new_ones/new_full(size): a fill of the result's shape."""
    def f(t, n, x, size, *args, **kw):
        out = _kdt(n)
        s = t.g.scalar(fill if fill is not None else args[0], out)
        return t.g.broadcast_to(s, list(size)) if len(size) else s
    return f


def _addmm(t, n, bias, a, b, beta=1, alpha=1):
    out = _kdt(n)
    m = t.g.matmul(t.v(a, out), t.v(b, out))
    if alpha != 1:
        m = t.g.mul(m, alpha)
    c = t.v(bias, out)
    return t.g.add(t.g.mul(c, beta) if beta != 1 else c, m)


def _matmul(t, n, a, b):
    out = _kdt(n)
    return t.g.matmul(t.v(a, out), t.v(b, out))


def _slice(t, n, x, dim=0, start=None, end=None, step=1):
    v = t.v(x)
    if v.rank == 0:
        return v
    return t.g.slice(v, dim, 0 if start is None else start, end, step)


def _select(t, n, x, dim, index):
    """x.select(dim, index): a slice of one, the axis dropped."""
    v = t.v(x)
    dim %= v.rank
    i = index + v.shape[dim] if index < 0 else index
    s = t.g.slice(v, dim, i, i + 1, 1)
    return t.g.reshape(s, [d for k, d in enumerate(v.shape) if k != dim])


def _cat(t, n, xs, dim=0):
    out = _kdt(n)
    return t.g.concat([t.v(x, out) for x in xs], dim)


def _take(t, x, idx, axis):
    """numpy.take (kfuse's gather: indices clamped, where PyTorch raises)."""
    i = t.v(idx)
    if i.dtype not in ("i32", "i64"):
        i = t.g.cast(i, "i64")
    return t.g.gather(t.v(x), i, axis)


def _index_select(t, n, x, dim, index):
    i = t.v(index)
    if i.rank == 0:  # index_select keeps the axis (size 1)
        i = t.g.reshape(i, [1])
    return t.g.gather(t.v(x), i, dim % max(t.v(x).rank, 1))


def _embedding(t, n, weight, indices, *rest, **kw):
    return _take(t, weight, indices, 0)


def _index(t, n, x, indices):
    k = next(i for i, a in enumerate(indices) if a is not None)
    return _take(t, x, indices[k], k)


def _gather_along(t, n, x, dim, index, sparse_grad=False):
    """torch.gather (take_along_axis) as one gather of x flattened: the linear
    index is the clamped index times x's stride at dim plus every other
    axis's coordinate (an iota) times its stride."""
    v, i = t.v(x), t.g.cast(t.v(index), "i64")
    dim %= v.rank
    shape, xs = list(i.shape), v.shape
    strides = [1] * v.rank
    for d in range(v.rank - 2, -1, -1):
        strides[d] = strides[d + 1] * xs[d + 1]
    lin = t.g.mul(t.g.clamp(i, 0, xs[dim] - 1), t.g.scalar(strides[dim], "i64"))
    for d in range(v.rank):
        if d != dim and shape[d] > 1:
            lin = t.g.add(lin, t.g.mul(t.g.iota("i64", shape, d), t.g.scalar(strides[d], "i64")))
    flat = t.g.reshape(v, [-1]) if v.rank != 1 else v
    return t.g.gather(flat, lin, 0)


def _arange(t, n, *a, **kw):
    """arange(end), arange(start, end[, step]): start + step * iota."""
    nums = [x for x in a if isinstance(x, NUMBER)]
    start, step = (nums[0], nums[2] if len(nums) > 2 else 1) if len(nums) > 1 else (0, 1)
    out = _kdt(n)
    length = _meta(n).shape[0]
    wide = "f64" if out in FLOATING else "i64"
    r = t.g.iota(wide, [length], 0)
    if step != 1:
        r = t.g.mul(r, t.g.scalar(step, wide))
    if start != 0:
        r = t.g.add(r, t.g.scalar(start, wide))
    return t.g.cast(r, out) if out != wide else r


def _prims_iota(t, n, length, *, start, step, dtype, device, requires_grad):
    return _arange(t, n, start, start + step * length, step)


TABLE = {}
for _op, _k in [("neg", "neg"), ("abs", "abs"), ("relu", "relu"), ("logical_not", "logical_not")]:
    TABLE[getattr(aten, _op).default] = _unary(_k)
for _op in ["exp", "log", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tanh", "sigmoid",
            "erf", "silu"]:
    TABLE[getattr(aten, _op).default] = _unary(_op, floating=True)
TABLE[aten.floor.default] = _identity_int("floor")
TABLE[aten.ceil.default] = _identity_int("ceil")
TABLE[aten.sign.default] = _sign
TABLE[aten.gelu.default] = _gelu
TABLE[aten.bitwise_not.default] = _unary("logical_not")  # bool only (why_not)
for _op, _k in [("add", "add"), ("sub", "sub"), ("mul", "mul"), ("div", "div"),
                ("pow", "pow"), ("maximum", "maximum"), ("minimum", "minimum")]:
    for _ov in ("Tensor", "Scalar", "Tensor_Tensor", "Tensor_Scalar", "default"):
        if hasattr(getattr(aten, _op), _ov):
            TABLE[getattr(getattr(aten, _op), _ov)] = _binary(_k)
for _op in ["eq", "ne", "lt", "le", "gt", "ge"]:
    TABLE[getattr(aten, _op).Tensor] = _compare(_op)
    TABLE[getattr(aten, _op).Scalar] = _compare(_op)
TABLE[aten.logical_and.default] = _logical("logical_and")
TABLE[aten.logical_or.default] = _logical("logical_or")
TABLE[aten.where.self] = _where
TABLE[aten.masked_fill.Scalar] = _masked_fill
TABLE[aten.clamp.default] = _clamp
TABLE[aten._to_copy.default] = _cast
TABLE[prims.convert_element_type.default] = _cast
TABLE[aten.sum.dim_IntList] = _reduce("sum")
TABLE[aten.mean.dim] = _reduce("mean")
TABLE[aten.sum.default] = _full_reduce("sum")
TABLE[aten.mean.default] = _full_reduce("mean")
TABLE[aten.amax.default] = _reduce("max")
TABLE[aten.amin.default] = _reduce("min")
TABLE[aten._softmax.default] = _softmax("softmax")
TABLE[aten._log_softmax.default] = _softmax("log_softmax")
for _op in (aten.view.default, aten._unsafe_view.default, aten.reshape.default):
    TABLE[_op] = _view
TABLE[aten.permute.default] = _permute
TABLE[aten.transpose.int] = _transpose
TABLE[aten.t.default] = _t
TABLE[aten.expand.default] = _expand
TABLE[aten.unsqueeze.default] = _unsqueeze
TABLE[aten.squeeze.dim] = _squeeze
TABLE[aten.squeeze.default] = _squeeze
if hasattr(aten.squeeze, "dims"):
    TABLE[aten.squeeze.dims] = _squeeze
TABLE[aten.clone.default] = _same
TABLE[aten.alias.default] = _same
TABLE[prims.broadcast_in_dim.default] = _broadcast_in_dim
TABLE[prims.sum.default] = _prims_sum
TABLE[prims.var.default] = _prims_var
TABLE[prims.div.default] = _binary("div")  # floating only (_op_check)
TABLE[aten.zeros_like.default] = _full_like(0)
TABLE[aten.ones_like.default] = _full_like(1)
TABLE[aten.full_like.default] = _full_like()
TABLE[aten.scalar_tensor.default] = _scalar_tensor
TABLE[aten.new_zeros.default] = _new_full(0)
TABLE[aten.new_ones.default] = _new_full(1)
TABLE[aten.new_full.default] = _new_full()
TABLE[aten.detach.default] = _same
TABLE[aten.slice.Tensor] = _slice
TABLE[aten.cat.default] = _cat
TABLE[aten.select.int] = _select
TABLE[aten.index_select.default] = _index_select
TABLE[aten.embedding.default] = _embedding
TABLE[aten.index.Tensor] = _index
TABLE[aten.gather.default] = _gather_along
for _ov in ("default", "start", "start_step"):
    TABLE[getattr(aten.arange, _ov)] = _arange
if hasattr(prims, "iota"):
    TABLE[prims.iota.default] = _prims_iota
MATMUL = {aten.mm.default: _matmul, aten.bmm.default: _matmul, aten.addmm.default: _addmm}
VIEWS = {aten.view.default, aten._unsafe_view.default, aten.reshape.default,
         aten.permute.default, aten.transpose.int, aten.t.default, aten.expand.default,
         aten.unsqueeze.default, aten.squeeze.dim, aten.squeeze.default, aten.clone.default,
         aten.alias.default, aten.detach.default, operator.getitem,
         prims.broadcast_in_dim.default}


def is_view(node):
    return node.op == "call_function" and node.target in VIEWS


def _table():
    # matrix products run as cuBLASLt calls in kfuse plans (docs/matmul.md);
    # KFUSE_TORCH_MATMUL=0 leaves them to PyTorch
    if os.environ.get("KFUSE_TORCH_MATMUL") == "0":
        return TABLE
    return {**TABLE, **MATMUL}  # aten op keys: not keywords


def _flat(a):
    if isinstance(a, (list, tuple)):
        for x in a:
            yield from _flat(x)
    else:
        yield a


def _op_check(node):
    """Op-specific limits: what the translation does not cover."""
    t, args, kw = node.target, node.args, node.kwargs
    out = _kdt(node)
    if t.namespace == "aten" and t.overloadpacket in (aten.pow, aten.div) and \
            out not in FLOATING:
        return "integer pow/div"
    if t.namespace == "aten" and out == "bool" and t.overloadpacket in (
            aten.add, aten.sub, aten.mul, aten.maximum, aten.minimum, aten.neg, aten.abs,
            aten.clamp):
        return "arithmetic on bool"
    if t == aten.bitwise_not.default and out != "bool":
        return "bitwise_not on integers"
    if t == prims.div.default and out not in FLOATING:
        return "integer division (prims.div truncates)"
    if t in (aten.new_zeros.default, aten.new_ones.default, aten.new_full.default):
        if any(kw.get(k) is not None for k in ("layout", "device")):
            return "a layout or device"
        if any(not isinstance(d, int) for d in args[1]) or \
                (t == aten.new_full.default and not isinstance(args[2], NUMBER)):
            return "a symbolic size or fill value"
    if t in (aten.zeros_like.default, aten.ones_like.default, aten.full_like.default):
        if any(kw.get(k) is not None for k in ("layout", "device", "memory_format")
               if k != "memory_format" or kw.get(k) != torch.preserve_format):
            return "a layout, device or memory format"
        if t == aten.full_like.default and not isinstance(args[1], NUMBER):
            return "a symbolic fill value"
    if t == aten.scalar_tensor.default and (not isinstance(args[0], NUMBER) or
                                            kw.get("layout") not in (None, torch.strided)):
        return "a symbolic value or a layout"
    if t == aten._to_copy.default and any(kw.get(k) not in (None, torch.strided)
                                          for k in ("layout",)):
        return "a layout change"
    if t == aten._to_copy.default and kw.get("device") is not None and \
            torch.device(kw["device"]) != _meta(args[0]).device:
        return "a device copy"
    if t == aten.clamp.default:
        lo = args[1] if len(args) > 1 else kw.get("min")
        hi = args[2] if len(args) > 2 else kw.get("max")
        if any(b is not None and not isinstance(b, NUMBER) for b in (lo, hi)):
            return "tensor clamp bounds"
        if lo is not None and hi is not None and lo > hi:
            return "clamp with min > max"
        if any(b is not None and b != b for b in (lo, hi)):
            return "a NaN clamp bound"
    if t == aten.select.int and not isinstance(args[2], int):
        return "a symbolic index"
    if t == aten.index.Tensor:
        idx = [a for a in args[1] if a is not None]
        if len(idx) != 1 or _meta(idx[0]) is None or _meta(idx[0]).dtype == torch.bool:
            return "an index other than one integer tensor"
    if t in (aten.index_select.default, aten.embedding.default, aten.index.Tensor,
             aten.gather.default):
        i = args[2] if t in (aten.index_select.default, aten.gather.default) else \
            args[1] if t == aten.embedding.default else [a for a in args[1] if a][0]
        if _meta(i) is None or _meta(i).dtype not in (torch.int32, torch.int64):
            return "a non-integer index"
    if t == aten.embedding.default and any(bool(a) for a in args[3:5]):
        return "embedding with scale_grad_by_freq or sparse"
    if t == aten.gather.default and _meta(args[0]).dim() != _meta(args[2]).dim():
        return "gather with index rank != input rank"
    if t == aten.gather.default and _meta(args[0]).dim() == 0:
        return "gather of a scalar"
    if getattr(t, "overloadpacket", None) == aten.arange and any(not isinstance(a, NUMBER) for a in args):
        return "arange with symbolic bounds"
    if getattr(t, "overloadpacket", None) == aten.arange and kw.get("layout") not in (None, torch.strided):
        return "a layout"
    if t in (aten.sum.dim_IntList, aten.sum.default) and \
            _meta(args[0]).dtype == torch.bool and out == "bool":
        return "a bool result"
    return None


def why_not(node, allow_cpu=False):
    """Why kfuse does not take this aten node (None: it does)."""
    table = _table()
    if node.target not in table:
        return "no kfuse translation"
    m = _meta(node)
    if m is None:
        return "not a single tensor result"
    for v in [m] + [_meta(a) for a in _flat(list(node.args) + list(node.kwargs.values()))
                    if hasattr(a, "meta")]:
        if v is None:
            return "a symbolic or non-tensor argument"
        if v.dtype not in KF:
            return "dtype %s" % v.dtype
        if v.device.type != "cuda" and not (allow_cpu and v.device.type == "cpu"):
            return "a %s tensor" % v.device.type
        if v.dim() > 8:
            return "rank %d (kfuse takes at most 8)" % v.dim()
        if any(not isinstance(s, int) for s in v.shape):
            pass  # symbolic sizes: the plan is made for the call's concrete shape
        elif v.numel() == 0:
            return "an empty tensor"
    for a in _flat(list(node.args) + list(node.kwargs.values())):
        if isinstance(a, torch.SymInt) or (hasattr(a, "meta") and _meta(a) is None):
            return "a symbolic or non-tensor argument"
    return _op_check(node)


class Layout:
    """How one partition output becomes the tensor PyTorch's trace has (the
    node's fake tensor: its strides, not only its shape). kfuse writes its
    outputs dense and row-major; downstream aten ops (a view after a
    layout-keeping op, an attention kernel whose output follows its input's
    stride order, AOTAutograd's view replay) were traced with the fake
    tensor's strides and may fail or misread with others. So a dense
    permuted layout is written by kfuse in that order (a transpose fused
    into the producer, broadcast axes left at size 1) and handed out as
    `buf.as_strided(size, stride)`: the very strides of the trace, with no
    copy. Any other layout (gaps, an offset, overlaps) is copied into
    `torch.empty_strided`; contiguous outputs are the buffer itself."""

    __slots__ = ("size", "stride", "mode")

    def __init__(self, size, stride, mode):
        self.size, self.stride, self.mode = size, stride, mode  # mode: view|copy

    def apply(self, buf):
        if self.mode == "view":
            return buf.as_strided(self.size, self.stride)
        out = torch.empty_strided(self.size, self.stride, dtype=buf.dtype, device=buf.device)
        return out.copy_(buf.reshape(self.size))


def _permuted(want):
    """(broadcast axes, axis order outermost first) when want's strides are a
    dense row-major layout of its axes in some order, with stride-0 axes
    (expanded); None otherwise."""
    size, stride = tuple(want.shape), tuple(want.stride())
    live = [d for d in range(len(size)) if size[d] > 1]
    bcast = [d for d in live if stride[d] == 0]
    order = sorted((d for d in live if stride[d] != 0), key=lambda d: -stride[d])
    step = 1
    for d in reversed(order):
        if stride[d] != step:
            return None
        step *= size[d]
    return (bcast, order) if want.storage_offset() == 0 else None


def _shape_output(t, v, want):
    """v (want's logical shape) as kfuse should write it, and the Layout
    that turns that buffer into want's strides (None: contiguous)."""
    size = tuple(want.shape)
    if not all(isinstance(s, int) for s in size + tuple(want.stride())) or \
            want.is_contiguous() or want.numel() <= 1:
        return v, None  # symbolic sizes: the call's concrete, contiguous layout
    p = _permuted(want)
    if p is None:
        return v, Layout(size, tuple(want.stride()), "copy")
    bcast, order = p
    for d in bcast:  # written once, read back with stride 0
        v = t.g.slice(v, d, 0, 1, 1)
    perm = order + [d for d in range(len(size)) if d not in order]
    if perm != list(range(len(size))):
        v = t.g.transpose(v, perm)
    return v, Layout(size, tuple(want.stride()), "view")


def translate(gm, args):
    """The kfuse Graph of an fx subgraph for these concrete input tensors,
    and per output its Layout (None: the buffer as it is); outputs checked
    against what PyTorch would give (dtype, shape)."""
    g = Graph()
    t = T(g)
    table = _table()
    phs = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(phs) != len(args):
        raise KfuseError("partition: %d inputs, %d given" % (len(phs), len(args)))
    for i, (n, a) in enumerate(zip(phs, args)):
        t.env[n] = g.input("in%d" % i, KF[a.dtype], list(a.shape))
    outs = None
    for n in gm.graph.nodes:
        if n.op == "call_function":
            t.env[n] = table[n.target](t, n, *n.args, **n.kwargs)
        elif n.op == "output":
            outs = list(_flat(n.args[0]))
    marked = set()
    inputs = {v.id for v in g.inputs}
    layouts = []
    for o in outs:
        v = t.env[o]
        want = _meta(o)
        if v.dtype != KF[want.dtype] or (all(isinstance(s, int) for s in want.shape) and
                                         v.shape != tuple(want.shape)):
            raise KfuseError("partition: %s gives %s%s, PyTorch %s%s" % (
                o.name, v.dtype, list(v.shape), KF[want.dtype], list(want.shape)))
        v, lay = _shape_output(t, v, want)
        if v.id in marked or v.id in inputs:  # a second output of one value: its own node
            v = g.cast(v, v.dtype)
        marked.add(v.id)
        g.output(v)
        layouts.append(lay)
    return g, layouts


def lay_out(outs, layouts):
    """The partition's outputs with the trace's strides (Layout.apply)."""
    return [b if lay is None else lay.apply(b) for b, lay in zip(outs, layouts)]


def _to_numpy(x):
    import numpy as np
    x = x.detach().cpu().contiguous()
    if x.dtype == torch.bfloat16:
        return x.view(torch.int16).numpy().view(np.uint16)
    return x.numpy()


def _from_numpy(a, dtype):
    import numpy as np
    if dtype == "bf16":
        return torch.from_numpy(np.asarray(a, order="C").view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def run_reference(g, ins):
    """A partition on kfuse's CPU reference interpreter (CPU tensors)."""
    outs = g.run_reference(*[_to_numpy(x) for x in ins])
    return [_from_numpy(o, v.dtype) for o, v in zip(outs, g.outputs)]
