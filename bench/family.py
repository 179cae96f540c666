#!/usr/bin/env python3
"""family.py - the memory-bound benchmark family of issue 23: one seeded
generator of graph specs, rendered twice (a kfuse YAML graph, and the Python
source of the equivalent torch function). Imports neither torch nor kfuse;
bench/membound.py runs the family on a GPU, bench/family_selftest.py checks
it on the CPU (make test).

    python3 bench/family.py --out DIR [--tiny]   # writes DIR/NAME.yaml, DIR/NAME.py

A spec is a list of nodes over named values. The generator tracks, for each
value, its dtype, shape, a conservative interval of its elements and whether
it is "exact" (computed only by ops whose result is the same bit for bit in
every correct implementation: inputs, neg, abs, relu, layout, correctly
rounded add/sub/mul). Those facts keep every graph NaN- and overflow-free on
inputs uniform in [-2, 2) (log, sqrt, div... see a positive argument; exp a
bounded one) and keep discontinuous ops (floor, ceil, sign, comparisons,
logical ops) on exact values, where a last-ulp difference between two correct
implementations cannot flip the result. So kfuse and torch can be compared
element by element with a tolerance, and NaN patterns must be equal (none).
"""
import argparse
import math
import os
import random

SEED = 23
INPUT_LO, INPUT_HI = -2.0, 2.0
DTYPES = ("f32", "f16", "bf16")
ESIZE = {"f32": 4, "f16": 2, "bf16": 2, "bool": 1}
TORCH_DT = {"f32": "torch.float32", "f16": "torch.float16", "bf16": "torch.bfloat16",
            "bool": "torch.bool"}
UNARY = ("neg", "abs", "exp", "log", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tanh",
         "sigmoid", "relu", "gelu", "gelu_tanh", "silu", "erf", "floor", "ceil", "sign",
         "logical_not")
BINARY = ("add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt", "le",
          "gt", "ge", "logical_and", "logical_or")
OTHER_PW = ("where", "clamp", "cast")
POINTWISE = UNARY + BINARY + OTHER_PW
REDUCE = ("sum", "mean", "max", "min")
# ops whose result jumps: their arguments must be exact (see the docstring)
DISCONT = {"floor", "ceil", "sign", "logical_not", "eq", "ne", "lt", "le", "gt", "ge",
           "logical_and", "logical_or"}
BOOL_RESULT = {"logical_not", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or"}
EXACT_OPS = {"neg", "abs", "relu", "maximum", "minimum", "clamp", "where", "add", "sub", "mul",
             "transpose", "reshape", "broadcast_to", "floor", "ceil", "sign"} | BOOL_RESULT
# literals exactly representable in f16 and bf16: no rounding question
LITERALS = (0.5, 0.25, 1.5, 2.0, -1.0, 0.75, 3.0, -0.5, 0.125)
# kfuse against torch (eager: it rounds each value to its dtype as kfuse does):
# the largest difference over an output, relative to the output's largest
# magnitude. f16/bf16: two correct implementations can round one value of a
# chain to neighbouring values (a last-ulp f32 difference), which later ops
# carry on; a defect shows as O(1).
TOL = {"f32": 2e-4, "f16": 1e-2, "bf16": 6e-2}
BOUND = 64.0  # an argument's magnitude is clamped to this before growing ops


class Val:
    def __init__(self, name, dtype, shape, lo, hi, exact):
        self.name, self.dtype, self.shape = name, dtype, tuple(shape)
        self.lo, self.hi, self.exact = float(lo), float(hi), exact

    @property
    def mag(self):
        return max(abs(self.lo), abs(self.hi))

    def numel(self):
        return math.prod(self.shape)


def bshape(*shapes):
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        ds = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        d = max(ds)
        assert all(x in (1, d) for x in ds), shapes
        out.append(d)
    return tuple(out)


def sig(x):
    return 1.0 / (1.0 + math.exp(-x))


def unary_range(op, v):
    lo, hi = v.lo, v.hi
    if op == "neg":
        return -hi, -lo
    if op == "abs":
        return (0.0 if lo <= 0 <= hi else min(abs(lo), abs(hi))), v.mag
    if op == "relu":
        return max(lo, 0.0), max(hi, 0.0)
    if op == "exp":
        return math.exp(lo), math.exp(hi)
    if op == "log":
        return math.log(lo), math.log(hi)
    if op == "sqrt":
        return math.sqrt(lo), math.sqrt(hi)
    if op == "rsqrt":
        return 1 / math.sqrt(hi), 1 / math.sqrt(lo)
    if op == "reciprocal":
        return 1 / hi, 1 / lo
    if op in ("sin", "cos", "erf", "sign"):
        return -1.0, 1.0
    if op == "tanh":
        return math.tanh(lo), math.tanh(hi)
    if op == "sigmoid":
        return sig(lo), sig(hi)
    if op in ("gelu", "gelu_tanh", "silu"):
        return min(lo, -0.3), max(hi, 0.0)
    if op == "floor":
        return math.floor(lo), math.floor(hi)
    if op == "ceil":
        return math.ceil(lo), math.ceil(hi)
    raise KeyError(op)


def binary_range(op, a, b):
    if op == "add":
        return a.lo + b.lo, a.hi + b.hi
    if op == "sub":
        return a.lo - b.hi, a.hi - b.lo
    if op == "mul":
        ps = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
        return min(ps), max(ps)
    if op == "div":  # b > 0
        qs = [a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi]
        return min(qs), max(qs)
    if op == "pow":  # a in [0.25, 4], |b| <= 2
        m = max(a.hi, 1 / a.lo) ** max(abs(b.lo), abs(b.hi))
        return 0.0, m
    if op == "maximum":
        return max(a.lo, b.lo), max(a.hi, b.hi)
    if op == "minimum":
        return min(a.lo, b.lo), min(a.hi, b.hi)
    raise KeyError(op)


class Builder:
    """One graph under construction: inputs, nodes, and the facts of each value."""

    def __init__(self, name, dtype, rng):
        self.name, self.dtype, self.rng = name, dtype, rng
        self.inputs, self.nodes, self.outputs = [], [], []
        self.vals = {}
        self.used = set()
        self.notes = ""

    def fresh(self, prefix="t"):
        return "%s%d" % (prefix, len(self.vals))

    def input(self, shape, dtype=None, name=None):
        v = Val(name or "x%d" % len(self.inputs), dtype or self.dtype, shape, INPUT_LO,
                INPUT_HI - 2 ** -10, True)
        self.inputs.append(v)
        self.vals[v.name] = v
        return v

    def node(self, op, args, vdtype, vshape, lo, hi, exact, **attrs):
        v = Val(self.fresh(), vdtype, vshape, lo, hi, exact)
        for a in args:
            if isinstance(a, Val):
                self.used.add(a.name)
        self.nodes.append((v.name, op, args, attrs))
        self.vals[v.name] = v
        return v

    # -- guards: make an argument fit the op ---------------------------------
    def bounded(self, v, lo=-BOUND, hi=BOUND):
        if v.lo >= lo and v.hi <= hi:
            return v
        return self.clamp(v, lo, hi)

    def positive(self, v, hi=None):
        """v itself when it is >= 0.25, else abs(v) + 0.5; at most hi."""
        if v.lo < 0.25:
            v = self.binary("add", self.unary("abs", self.bounded(v)), 0.5)
        return self.clamp(v, 0.25, hi) if hi is not None and v.hi > hi else v

    # -- ops -----------------------------------------------------------------
    def clamp(self, v, lo, hi):
        return self.node("clamp", [v], v.dtype, v.shape, max(v.lo, lo), min(v.hi, hi),
                         v.exact, min=lo, max=hi)

    def unary(self, op, v):
        if op in ("log", "sqrt", "rsqrt", "reciprocal"):
            v = self.positive(v)
        elif op == "exp":
            v = self.bounded(v, -16.0, 4.0)
        elif op in ("sin", "cos"):
            v = self.bounded(v, -8.0, 8.0)
        else:
            v = self.bounded(v)
        if op == "logical_not":
            return self.node(op, [v], "bool", v.shape, 0, 1, True)
        lo, hi = unary_range(op, v)
        return self.node(op, [v], v.dtype, v.shape, lo, hi, v.exact and op in EXACT_OPS)

    def binary(self, op, a, b):
        """b may be a literal (a float): it takes a's dtype, as in kfuse."""
        if not isinstance(b, Val):
            b = Val(repr(b), a.dtype, (), b, b, True)
            lit = True
        else:
            lit = False
        if op == "div":
            a, b = self.bounded(a), (b if lit else self.positive(b))
        elif op == "pow":
            a = self.positive(a, 4.0)
            b = b if lit else self.bounded(b, -2.0, 2.0)
        elif op in ("add", "sub", "mul", "maximum", "minimum"):
            a = self.bounded(a)
            b = b if lit else self.bounded(b)
        arg_b = float(b.name) if lit else b
        shape = bshape(a.shape, b.shape)
        if op in BOOL_RESULT:
            return self.node(op, [a, arg_b], "bool", shape, 0, 1, True)
        lo, hi = binary_range(op, a, b)
        exact = a.exact and b.exact and op in EXACT_OPS
        return self.node(op, [a, arg_b], a.dtype, shape, lo, hi, exact)

    def where(self, c, a, b):
        """b may be a literal (a float)."""
        bv = b if isinstance(b, Val) else Val(repr(b), a.dtype, (), b, b, True)
        shape = bshape(c.shape, a.shape, bv.shape)
        return self.node("where", [c, a, b], a.dtype, shape, min(a.lo, bv.lo),
                         max(a.hi, bv.hi), a.exact and bv.exact)

    def cast(self, v, dtype):
        lo, hi = (0, 1) if dtype == "bool" else (v.lo, v.hi)
        exact = v.exact and (dtype == "bool" or ESIZE[dtype] >= ESIZE[v.dtype] and
                             not (v.dtype, dtype) in (("f16", "bf16"), ("bf16", "f16")))
        return self.node("cast", [v], dtype, v.shape, lo, hi, exact, dtype=dtype)

    def reduce(self, op, v, axes, keepdim):
        if op == "sum" and self.dtype == "f16":
            n = math.prod(v.shape[a] for a in axes)
            if n * v.mag > 30000:  # an f16 sum that could overflow: the mean instead
                op = "mean"
        v = self.bounded(v)
        n = math.prod(v.shape[a] for a in axes)
        shape = tuple(1 if i in axes else d for i, d in enumerate(v.shape) if keepdim or
                      i not in axes)
        lo, hi = (v.lo, v.hi) if op != "sum" else (min(v.lo * n, v.lo), max(v.hi * n, v.hi))
        return self.node(op, [v], v.dtype, shape, lo, hi, op in ("max", "min"),
                         axes=list(axes), keepdim=keepdim)

    def transpose(self, v, perm):
        return self.node("transpose", [v], v.dtype, [v.shape[p] for p in perm], v.lo, v.hi,
                         v.exact, perm=list(perm))

    def reshape(self, v, shape):
        real = [v.numel() // max(1, -math.prod(shape)) if d == -1 else d for d in shape]
        return self.node("reshape", [v], v.dtype, real, v.lo, v.hi, v.exact, shape=list(shape))

    def broadcast_to(self, v, shape):
        return self.node("broadcast_to", [v], v.dtype, shape, v.lo, v.hi, v.exact,
                         shape=list(shape))

    def as_output(self, v):
        """Outputs are of the graph's float dtype (poisoned with NaN by the runner)."""
        if v.dtype == "bool":
            v = self.cast(v, self.dtype)
        elif v.dtype != self.dtype:
            v = self.cast(v, self.dtype)
        if v.name in (i.name for i in self.inputs):
            v = self.unary("neg", v)
        if v.name not in self.outputs:
            self.outputs.append(v.name)
        return v

    # -- one random pointwise step -------------------------------------------
    def pick(self, pool, exact=False):
        unused = [v for v in pool if v.name not in self.used and v.dtype != "bool"]
        cands = [v for v in pool if v.exact] if exact else pool
        if unused and self.rng.random() < 0.7:
            cands = [v for v in unused if v.exact or not exact] or cands
        elif self.rng.random() < 0.6 and (pool[-1].exact or not exact):
            return pool[-1]
        return self.rng.choice(cands)

    def step(self, op, pool):
        """Applies op to values of pool (same shape or broadcastable); returns
        a float value of the graph's dtype, appended to pool."""
        r = self.rng
        floats = [v for v in pool if v.dtype != "bool"]
        if op in DISCONT | {"where"} and not any(v.exact for v in floats):
            op = "tanh"  # nothing exact to jump on: a continuous op instead
        if op in UNARY:
            v = self.unary(op, self.pick(floats, op in DISCONT))
        elif op in BINARY:
            a = self.pick(floats, op in DISCONT)
            if r.random() < 0.25 and op not in ("logical_and", "logical_or", "pow"):
                b = r.choice(LITERALS) if op != "div" else r.choice((2.0, 0.5, 3.0, -4.0))
            else:
                b = self.pick(floats, op in DISCONT)
            v = self.binary(op, a, b)
        elif op == "where":
            c = self.binary(r.choice(("lt", "gt", "le", "ge")), self.pick(floats, True),
                            self.pick(floats, True))
            v = self.where(c, self.pick(floats), self.pick(floats) if r.random() < 0.7 else 0.0)
        elif op == "clamp":
            a = self.pick(floats)
            v = self.clamp(a, -r.choice((0.5, 1.0, 1.5)), r.choice((0.5, 1.0, 2.0)))
        else:  # cast: through another float dtype and back, or a bool as 0/1
            a = self.pick(floats, r.random() < 0.3)
            if a.exact and r.random() < 0.3:
                v = self.cast(self.cast(a, "bool"), self.dtype)
            else:
                other = r.choice([d for d in DTYPES if d != self.dtype])
                v = self.cast(self.cast(a, other), self.dtype)
        if v.dtype == "bool":
            v = self.cast(v, self.dtype) if r.random() < 0.5 else self.where(
                v, self.pick(floats), r.choice(LITERALS))
        pool.append(v)
        return v


def render_literal(x):
    return repr(float(x))


def render_yaml(b):
    lines = ["kfuse: 1", "name: %s" % b.name]
    if b.notes:
        lines.append("# " + b.notes)
    lines.append("inputs:")
    for v in b.inputs:
        lines.append("  %s: {dtype: %s, shape: [%s]}" % (v.name, v.dtype,
                                                         ", ".join(map(str, v.shape))))
    lines.append("nodes:")
    for name, op, args, attrs in b.nodes:
        a = ", ".join(x.name if isinstance(x, Val) else render_literal(x) for x in args)
        extra = "".join(", %s: %s" % (k, yaml_value(x)) for k, x in attrs.items())
        lines.append("  - {name: %s, op: %s, args: [%s]%s}" % (name, op, a, extra))
    lines.append("outputs: [%s]" % ", ".join(b.outputs))
    return "\n".join(lines) + "\n"


def yaml_value(x):
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, (list, tuple)):
        return "[%s]" % ", ".join(str(i) for i in x)
    if isinstance(x, float):
        return render_literal(x)
    return str(x)


TORCH_CALL = {"neg": "torch.neg", "abs": "torch.abs", "exp": "torch.exp", "log": "torch.log",
              "sqrt": "torch.sqrt", "rsqrt": "torch.rsqrt", "reciprocal": "torch.reciprocal",
              "sin": "torch.sin", "cos": "torch.cos", "tanh": "torch.tanh",
              "sigmoid": "torch.sigmoid", "relu": "torch.relu", "gelu": "F.gelu",
              "silu": "F.silu", "erf": "torch.erf", "floor": "torch.floor",
              "ceil": "torch.ceil", "sign": "torch.sign", "logical_not": "torch.logical_not",
              "add": "torch.add", "sub": "torch.sub", "mul": "torch.mul", "div": "torch.div",
              "pow": "torch.pow", "maximum": "torch.maximum", "minimum": "torch.minimum",
              "eq": "torch.eq", "ne": "torch.ne", "lt": "torch.lt", "le": "torch.le",
              "gt": "torch.gt", "ge": "torch.ge", "logical_and": "torch.logical_and",
              "logical_or": "torch.logical_or", "where": "torch.where",
              "sum": "torch.sum", "mean": "torch.mean", "max": "torch.amax",
              "min": "torch.amin", "transpose": "torch.permute", "reshape": "torch.reshape",
              "broadcast_to": "torch.broadcast_to"}


def torch_expr(b, op, args, attrs):
    def arg(x):
        if isinstance(x, Val):
            return x.name
        return render_literal(x)
    a = [arg(x) for x in args]
    if op == "gelu_tanh":
        return "F.gelu(%s, approximate='tanh')" % a[0]
    if op == "clamp":
        return "torch.clamp(%s, min=%r, max=%r)" % (a[0], float(attrs["min"]),
                                                     float(attrs["max"]))
    if op == "cast":
        return "%s.to(%s)" % (a[0], TORCH_DT[attrs["dtype"]])
    if op in ("maximum", "minimum") and not isinstance(args[1], Val):
        # torch.maximum takes tensors only: the literal as a 0-d tensor
        return "%s(%s, torch.tensor(%s, dtype=%s, device=%s.device))" % (
            TORCH_CALL[op], a[0], a[1], TORCH_DT[b.dtype], a[0])
    if op == "where":
        # a literal branch: a 0-d tensor of the other branch's dtype (as kfuse does)
        a = [x if isinstance(args[i], Val) or i == 0 else
             "torch.tensor(%s, dtype=%s, device=%s.device)" % (x, TORCH_DT[b.dtype], a[0])
             for i, x in enumerate(a)]
        return "torch.where(%s)" % ", ".join(a)
    if op in REDUCE:
        return "%s(%s, dim=%s, keepdim=%s)" % (TORCH_CALL[op], a[0], tuple(attrs["axes"]),
                                               attrs["keepdim"])
    if op in ("transpose", "reshape", "broadcast_to"):
        key = "perm" if op == "transpose" else "shape"
        return "%s(%s, %s)" % (TORCH_CALL[op], a[0], tuple(attrs[key]))
    return "%s(%s)" % (TORCH_CALL[op], ", ".join(a))


def render_torch(b):
    """The Python source of `def fn(<inputs>)` returning the outputs as a tuple
    of contiguous tensors (a transposed or broadcast output is materialized, as
    kfuse writes it). It names only `torch` and `F` (torch.nn.functional)."""
    lines = ["def fn(%s):" % ", ".join(v.name for v in b.inputs)]
    for name, op, args, attrs in b.nodes:
        lines.append("    %s = %s" % (name, torch_expr(b, op, args, attrs)))
    lines.append("    return (%s,)" % ", ".join("%s.contiguous()" % o for o in b.outputs))
    return "\n".join(lines) + "\n"


# ---- shapes -----------------------------------------------------------------

ODD = (1000, 777, 1536, 3000, 513, 1023, 4097, 2500, 96, 200, 12288, 5000)
POW2 = (64, 128, 256, 512, 1024, 2048, 4096, 8192)


def split_elems(rng, elems, rank, odd):
    """rank extents whose product is about elems (at least 1 each), the last
    one chosen first (from a non-power-of-two list when odd)."""
    dims = []
    rest = max(elems, 1)
    for i in range(rank - 1):
        pool = ODD if odd else POW2
        d = rng.choice(pool)
        while 2 * d > rest and d > 1:
            d = max(1, d // 4) if not odd else max(1, int(d * 0.37))
        dims.append(d)
        rest = max(1, rest // d)
    dims.append(int(rest))
    rng.shuffle(dims)
    return dims


# ---- graph kinds ------------------------------------------------------------
# Each kind takes (builder, rng_ops, rng_size, target bytes). The op rng draws
# the same sequence at any size, so the tiny versions (self-test) have the
# same structure as the full ones.

def kind_pointwise(b, r, rs, nbytes, deck):
    n_in, rank = r.randint(1, 3), r.randint(1, 3)
    n_out = r.randint(1, 2)
    odd = r.random() < 0.5
    es = ESIZE[b.dtype]
    shape = split_elems(rs, nbytes // ((n_in + n_out) * es), rank, odd)
    pool = [b.input(shape) for _ in range(n_in)]
    for _ in range(r.randint(4, 10)):
        b.step(deck.draw(), pool)
    sinks(b, r, pool[n_in:], n_out)
    b.notes = "pointwise mix, shape %s" % list(shape)


def sinks(b, r, vals, n_out):
    """Makes outputs of the values nothing consumed (the last one always),
    folded by add into at most n_out outputs: no computed value is dead."""
    leaves = [v for v in vals if v.name not in b.used and v.dtype != "bool"] or [vals[-1]]
    if vals[-1] not in leaves:
        leaves.append(vals[-1])
    while len(leaves) > n_out:
        x, y = leaves.pop(), leaves.pop()
        if bshape(x.shape, y.shape) != x.shape:
            x, y = y, x
        leaves.append(b.binary("add", x, y))
    for v in leaves:
        b.as_output(v)


def kind_broadcast(b, r, rs, nbytes, deck):
    rank = r.randint(2, 3)
    odd = r.random() < 0.5
    es = ESIZE[b.dtype]
    shape = split_elems(rs, nbytes // (2 * es), rank, odd)
    x = b.input(shape)
    pool = [x]
    # operands broadcast along chosen axes: [N], [M, 1], [1, N], ...
    for _ in range(r.randint(1, 2)):
        keep = [r.random() < 0.5 for _ in shape]
        if all(keep):
            keep[r.randrange(rank)] = False
        if not any(keep):
            keep[-1] = True
        bs = [d if k else 1 for d, k in zip(shape, keep)]
        if r.random() < 0.4:  # drop leading size-1 axes
            while len(bs) > 1 and bs[0] == 1:
                bs = bs[1:]
        pool.append(b.input(bs))
    if r.random() < 0.3:  # an explicit broadcast_to
        pool.append(b.broadcast_to(pool[-1], shape))
    n0 = len(pool)
    for _ in range(r.randint(3, 7)):
        b.step(deck.draw(), pool)
    if pool[-1].shape != tuple(shape):
        pool.append(b.binary("add", pool[-1], x))
    sinks(b, r, [v for v in pool[n0:] if v.shape == tuple(shape)], 1)
    b.notes = "broadcasts over %s" % list(shape)


def kind_permute(b, r, rs, nbytes, deck):
    rank = r.choice((2, 2, 3, 3, 4))
    odd = r.random() < 0.5
    es = ESIZE[b.dtype]
    n_in = r.randint(1, 2)
    shape = split_elems(rs, nbytes // ((n_in + 1) * es), rank, odd)
    perms = [p for p in permutations(rank) if p != tuple(range(rank))]
    perm = r.choice(perms)
    pool = [b.input(shape)]
    for _ in range(r.randint(0, 3)):
        b.step(deck.draw(), pool)
    t = b.transpose(pool[-1], perm)
    post = [t]
    if n_in == 2:  # a second input in the transposed layout
        post.append(b.input(t.shape))
    for _ in range(r.randint(1, 3)):
        b.step(deck.draw(), post)
    sinks(b, r, post[1:] if len(post) > n_in else post, 1)
    b.notes = "transpose %s of %s" % (list(perm), list(shape))


def permutations(n):
    if n == 1:
        return [(0,)]
    out = []
    for p in permutations(n - 1):
        for i in range(n):
            out.append(p[:i] + (n - 1,) + p[i:])
    return sorted(out)


def kind_reduce(b, r, rs, nbytes, deck, axes_choice):
    rank = len(axes_choice[0])
    odd = r.random() < 0.5
    es = ESIZE[b.dtype]
    shape = split_elems(rs, nbytes // es, rank, odd)
    axes = axes_choice[1]
    op = r.choice(REDUCE)
    pool = [b.input(shape)]
    for _ in range(r.randint(0, 3)):
        b.step(deck.draw(), pool)
    red = b.reduce(op, pool[-1], axes, r.random() < 0.6)
    if r.random() < 0.5 and red.shape and len(red.shape) == rank:
        # normalize by the reduction: x - m, x * m, x / m (broadcast back)
        how = r.choice(("sub", "mul", "div"))
        b.as_output(b.binary(how, pool[-1], red))
        if r.random() < 0.5:
            b.as_output(red)
    else:
        b.as_output(b.unary(r.choice(("exp", "tanh", "sqrt", "neg")), red))
    b.notes = "%s over axes %s of %s" % (op, list(axes), list(shape))


def kind_reshape(b, r, rs, nbytes, deck):
    es = ESIZE[b.dtype]
    a, c = rs.choice((96, 200, 1000, 1024, 777)), rs.choice((8, 12, 16, 3))
    rows = max(1, nbytes // (2 * es * a * c))
    x = b.input([rows, a * c])
    pool = [x]
    for _ in range(r.randint(1, 3)):
        b.step(deck.draw(), pool)
    v = b.reshape(pool[-1], [rows, a, c])
    v = b.transpose(v, (0, 2, 1)) if r.random() < 0.5 else v
    post = [v]
    for _ in range(r.randint(1, 3)):
        b.step(deck.draw(), post)
    b.as_output(b.reshape(post[-1], [-1]) if r.random() < 0.5 else post[-1])
    b.notes = "reshape of [%d, %d]" % (rows, a * c)


class Deck:
    """Pointwise ops dealt from shuffled decks, so every op appears in the family."""

    def __init__(self, rng):
        self.rng, self.cards = rng, []

    def draw(self):
        if not self.cards:
            self.cards = list(POINTWISE)
            self.rng.shuffle(self.cards)
        return self.cards.pop()


def reduce_axes():
    """Every axis of ranks 2 and 3, alone and in pairs, and all axes."""
    out = []
    for rank in (2, 3):
        for a in range(rank):
            out.append(((0,) * rank, (a,)))
    out += [((0,) * 3, (0, 2)), ((0,) * 3, (1, 2)), ((0,) * 3, (0, 1)), ((0,) * 2, (0, 1)),
            ((0,) * 3, (0, 1, 2))]
    return out


def random_specs():
    """The kinds of the 50 random members, in order."""
    kinds = (["pw"] * 16 + ["bcast"] * 10 + ["perm"] * 10 + ["red"] * len(reduce_axes()) +
             ["reshape"] * 4)
    return kinds


def family(tiny=False, seed=SEED):
    """All members: the issue's five graphs, then the random ones. Returns
    a list of Builders. tiny: the same graphs at about 16-64 KiB each."""
    master = random.Random(seed)
    deck = Deck(random.Random(seed + 1))
    out = fixed(tiny)
    extra = reductions(tiny)
    kinds = random_specs()
    n = len(kinds)
    # sizes 1 MiB .. 1 GiB, log-spaced, dealt at random
    sizes = [int(2 ** (20 + 10 * i / (n - 1))) for i in range(n)]
    master.shuffle(sizes)
    red_axes = reduce_axes()
    ri = 0
    for i, kind in enumerate(kinds):
        r, rs = random.Random(master.random()), random.Random(master.random())
        dt = DTYPES[i % 3]
        nbytes = (16 << 10) + sizes[i] // 4096 if tiny else sizes[i]
        b = Builder("fam%02d_%s_%s" % (i, kind, dt), dt, r)
        if kind == "pw":
            kind_pointwise(b, r, rs, nbytes, deck)
        elif kind == "bcast":
            kind_broadcast(b, r, rs, nbytes, deck)
        elif kind == "perm":
            kind_permute(b, r, rs, nbytes, deck)
        elif kind == "red":
            kind_reduce(b, r, rs, nbytes, deck, red_axes[ri])
            ri += 1
        else:
            kind_reshape(b, r, rs, nbytes, deck)
        out.append(b)
    return out + extra


# ---- the five graphs -------------------------------------------------

def fixed(tiny):
    s = (lambda full, small: small if tiny else full)
    r = random.Random(0)
    out = []
    b = Builder("issue_chain8_gelu_f32", "f32", r)  # 8 ops, erf-GELU, sigmoid, tanh
    n = s(1 << 26, 4096)
    x, y = b.input([n]), b.input([n])
    t = b.binary("mul", x, y)
    t = b.binary("add", t, x)
    t = b.unary("gelu", t)
    t = b.binary("mul", t, 0.5)
    t = b.unary("tanh", t)
    t = b.binary("sub", t, y)
    t = b.unary("sigmoid", t)
    t = b.binary("add", t, 1.0)
    b.as_output(t)
    b.notes = "issue 23: 8-op f32 chain on 2^26 elements with erf-GELU, sigmoid and tanh"
    out.append(b)

    b = Builder("issue_transpose_add_relu_f32", "f32", r)
    m, k = s(2048, 48), s(4096, 80)
    x, y = b.input([m, k]), b.input([k, m])
    b.as_output(b.unary("relu", b.binary("add", b.transpose(x, (1, 0)), y)))
    b.notes = "issue 23: transpose of f32 [2048, 4096] + add + relu"
    out.append(b)

    # The permutations attention graphs make constantly (tiled transposes,
    # session 10): the head split [B, S, H, D] -> [B, H, S, D] (innermost axis
    # kept: index arithmetic) and [0, 2, 1] of rank 3 (innermost axis moved:
    # shared-memory tiles).
    b = Builder("perm_bshd_bhsd_bf16", "bf16", r)
    x = b.input([s(8, 2), s(2048, 24), s(16, 4), s(128, 16)])
    b.as_output(b.binary("mul", b.transpose(x, (0, 2, 1, 3)), 0.125))
    b.notes = "[B, S, H, D] -> [B, H, S, D] of bf16 [8, 2048, 16, 128], scaled"
    out.append(b)

    b = Builder("perm_021_f16", "f16", r)
    x = b.input([s(16, 2), s(2048, 40), s(1024, 24)])
    b.as_output(b.unary("relu", b.transpose(x, (0, 2, 1))))
    b.notes = "[0, 2, 1] of f16 [16, 2048, 1024], relu"
    out.append(b)

    b = Builder("issue_bias_gelu_tanh_f16", "f16", r)
    m, k = s(4096, 64), s(1024, 96)
    x, w = b.input([m, k]), b.input([k])
    b.as_output(b.unary("gelu_tanh", b.binary("add", x, w)))
    b.notes = "issue 23: bias + tanh-GELU, f16 [4096, 1024]"
    out.append(b)

    b = Builder("issue_mean_mid_f32", "f32", r)
    x = b.input([s(64, 4), s(512, 40), s(256, 24)])
    b.as_output(b.reduce("mean", x, (1,), False))
    b.notes = "issue 23: mean over the middle axis of [64, 512, 256]"
    out.append(b)

    b = Builder("issue_div_colsum_f32", "f32", r)
    x = b.input([s(1024, 40), s(4096, 72)])
    sm = b.reduce("sum", b.positive(x), (0,), True)  # a positive sum: no division by ~0
    b.as_output(b.binary("div", x, sm))
    b.notes = "issue 23: x / sum(x, axis 0), [1024, 4096] (x made positive first)"
    out.append(b)
    return out


# ---- reduction shapes that must fill the GPU (session 10) -------------------

def reductions(tiny):
    """Named reduction graphs, after the random members (their generator is
    not disturbed): the family's slow reduction shapes at 256 MiB and the
    shapes whose kernels once could not fill the GPU (few outputs, batch 1,
    long rows, narrow inner extents)."""
    s = (lambda full, small: small if tiny else full)
    r = random.Random(10)
    out = []

    def add(name, dt, shape, op, axes, keepdim, after, notes):
        b = Builder(name, dt, r)
        x = b.input(shape)
        t = b.binary("mul", x, x) if dt == "f32" else b.unary("abs", x)
        red = b.reduce(op, t, axes, keepdim)
        b.as_output(after(b, t, red))
        b.notes = notes
        out.append(b)

    un = lambda op: (lambda b, t, red: b.unary(op, red))
    add("red_full_f32", "f32", [s(1 << 26, 6000)], "sum", (0,), True, un("sqrt"),
        "sum over all of f32 [2^26]")
    add("red_full_bf16", "bf16", [s(1 << 27, 9000)], "max", (0,), True, un("tanh"),
        "max over all of bf16 [2^27]")
    add("red_dims02_f32", "f32", [s(64, 4), s(1000, 6), s(1000, 40)], "sum", (0, 2), True,
        un("sqrt"), "sum over axes [0, 2] of f32 [64, 1000, 1000]")
    add("red_dims02_few_f32", "f32", [2, 3, s(1 << 23, 4000)], "mean", (0, 2), True, un("neg"),
        "mean over axes [0, 2] of f32 [2, 3, 2^23] (3 outputs)")
    add("red_narrow_f16", "f16", [s(14122, 20), 96, 99], "max", (0, 1), True,
        lambda b, t, red: b.binary("mul", t, red),
        "max over axes [0, 1] of f16 [14122, 96, 99], times the input (fam43 at 256 MiB)")
    add("red_cols64_bf16", "bf16", [s(2097150, 500), 64], "min", (0, 1), True, un("tanh"),
        "min over all of bf16 [2097150, 64] (fam44 at 256 MiB)")
    add("red_rows925_f16", "f16", [4, s(36280, 30), 925], "max", (2,), False, un("tanh"),
        "max over axis 2 of f16 [4, 36280, 925] (fam40 at 256 MiB; a row kernel)")
    add("red_b1_row_f32", "f32", [1, s(1 << 26, 5000)], "sum", (1,), False, un("sqrt"),
        "sum over axis 1 of f32 [1, 2^26] (batch 1; a row kernel)")
    add("red_8rows_f32", "f32", [8, s(1 << 24, 3000)], "mean", (1,), False, un("neg"),
        "mean over axis 1 of f32 [8, 2^24] (long rows; a row kernel)")
    add("red_cols8_f32", "f32", [8, s(1 << 24, 3000)], "mean", (0,), False, un("neg"),
        "mean over axis 0 of f32 [8, 2^24] (a short strided reduction)")
    return out


def io_bytes(b):
    """Bytes read and written: each input once, each output once."""
    total = sum(v.numel() * ESIZE[v.dtype] for v in b.inputs)
    return total + sum(b.vals[o].numel() * ESIZE[b.vals[o].dtype] for o in b.outputs)


def write(builders, out):
    os.makedirs(out, exist_ok=True)
    for b in builders:
        with open(os.path.join(out, b.name + ".yaml"), "w") as f:
            f.write(render_yaml(b))
        with open(os.path.join(out, b.name + ".py"), "w") as f:
            f.write(render_torch(b))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--tiny", action="store_true", help="16-64 KiB versions")
    args = ap.parse_args()
    fam = family(tiny=args.tiny)
    write(fam, args.out)
    for b in fam:
        print("%-34s %12d bytes  %s" % (b.name, io_bytes(b), b.notes))


if __name__ == "__main__":
    main()
