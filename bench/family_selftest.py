#!/usr/bin/env python3
"""family_selftest.py - the CPU check of the benchmark family (bench/family.py),
run by ctest without torch or a GPU:

    python3 bench/family_selftest.py --kfuse build/kfuse --lib build/libkfuse.so --dir D

1. Every full-size member: at least 50, every pointwise op, every reduction
   op, f32/f16/bf16, sizes from 1 MiB to 1 GiB, a non-power-of-two extent;
   the same seed writes the same files; `kfuse check` and `kfuse plan`
   accept each YAML file, and `kfuse compile --arch sm_90` a subset.
2. Every tiny member (the same graph structure at 16-64 KiB): its torch
   rendering, executed against a small numpy stand-in for the torch calls it
   names (each value computed in f64 and rounded once to its dtype, as
   kfuse's reference does), gives what kf_graph_run_reference gives on the
   same inputs (within the runner's tolerance, no NaN or infinity
   anywhere): the two renderings of one spec compute the same function.
"""
import argparse
import ctypes
import math
import os
import subprocess
import sys
import types

try:
    import numpy as np
except ImportError:
    print("skipped: numpy is not installed")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import family  # noqa: E402

KF_DT = {"f16": 0, "bf16": 1, "f32": 2, "bool": 6}


# ---- rounding to a dtype, in f64 ---------------------------------------------

def bf16_bits(x):
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16)


def from_bf16_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def rnd(x, dt):
    x = np.asarray(x, dtype=np.float64)
    if dt == "f32":
        return x.astype(np.float32).astype(np.float64)
    if dt == "f16":
        return x.astype(np.float16).astype(np.float64)
    if dt == "bf16":
        return from_bf16_bits(bf16_bits(x.astype(np.float32)))
    if dt == "bool":
        return (x != 0).astype(np.float64)
    raise KeyError(dt)


# ---- a numpy stand-in for the torch calls the rendering names ------------------

class T:
    """A tensor: f64 values already rounded to dtype."""

    def __init__(self, v, dt):
        self.v, self.dt = np.asarray(v, dtype=np.float64), dt
        self.device = None

    def to(self, dt):
        return T(rnd(self.v, dt), dt)

    def contiguous(self):
        return self


def _val(x):
    return x.v if isinstance(x, T) else float(x)


def _dt(*xs):
    for x in xs:
        if isinstance(x, T):
            return x.dt
    raise TypeError("no tensor operand")


def pw(f, boolean=False):
    def call(*xs):
        dt = _dt(*xs)
        r = f(*[_val(x) for x in xs])
        return T(rnd(r, "bool"), "bool") if boolean else T(rnd(r, dt), dt)
    return call


erf = np.vectorize(math.erf)


def gelu(x, approximate="none"):
    v = x.v
    if approximate == "tanh":
        r = 0.5 * v * (1.0 + np.tanh(0.79788456080286535588 * (v + 0.044715 * v * v * v)))
    else:
        r = 0.5 * v * (1.0 + erf(v * 0.70710678118654752440))
    return T(rnd(r, x.dt), x.dt)


def red(f):
    def call(x, dim, keepdim):
        return T(rnd(f(x.v, axis=tuple(dim), keepdims=keepdim), x.dt), x.dt)
    return call


def where(c, a, b):
    dt = _dt(a, b)
    return T(rnd(np.where(_val(c) != 0, _val(a), _val(b)), dt), dt)


def shim():
    tn = types.SimpleNamespace(
        float32="f32", float16="f16", bfloat16="bf16", bool="bool",
        neg=pw(np.negative), abs=pw(np.abs), exp=pw(np.exp), log=pw(np.log),
        sqrt=pw(np.sqrt), rsqrt=pw(lambda x: 1.0 / np.sqrt(x)),
        reciprocal=pw(lambda x: 1.0 / x), sin=pw(np.sin), cos=pw(np.cos), tanh=pw(np.tanh),
        sigmoid=pw(lambda x: 1.0 / (1.0 + np.exp(-x))), relu=pw(lambda x: np.maximum(x, 0.0)),
        erf=pw(erf), floor=pw(np.floor), ceil=pw(np.ceil), sign=pw(np.sign),
        logical_not=pw(lambda x: x == 0, True), add=pw(np.add), sub=pw(np.subtract),
        mul=pw(np.multiply), div=pw(np.divide), pow=pw(np.power), maximum=pw(np.maximum),
        minimum=pw(np.minimum), eq=pw(np.equal, True), ne=pw(np.not_equal, True),
        lt=pw(np.less, True), le=pw(np.less_equal, True), gt=pw(np.greater, True),
        ge=pw(np.greater_equal, True),
        logical_and=pw(lambda a, b: (a != 0) & (b != 0), True),
        logical_or=pw(lambda a, b: (a != 0) | (b != 0), True), where=where,
        clamp=lambda x, min, max: T(np.clip(x.v, min, max), x.dt),
        sum=red(np.sum), mean=red(np.mean), amax=red(np.max), amin=red(np.min),
        permute=lambda x, p: T(np.transpose(x.v, p), x.dt),
        reshape=lambda x, s: T(np.reshape(x.v, s), x.dt),
        broadcast_to=lambda x, s: T(np.broadcast_to(x.v, s), x.dt),
        tensor=lambda v, dtype, device: T(rnd(v, dtype), dtype))
    fn = types.SimpleNamespace(gelu=gelu, silu=pw(lambda x: x / (1.0 + np.exp(-x))))
    return tn, fn


def torch_fn(b):
    """The torch rendering of b, bound to the numpy stand-in."""
    tn, fn = shim()
    scope = {"torch": tn, "F": fn}
    exec(compile(family.render_torch(b), b.name + ".py", "exec"), scope)
    return scope["fn"]


# ---- kfuse's reference through the C API --------------------------------------

class HostTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("shape", ctypes.c_int64 * 8)]


def host(arr, dt, shape):
    t = HostTensor()
    t.data = arr.ctypes.data
    t.dtype, t.rank = KF_DT[dt], len(shape)
    for i, d in enumerate(shape):
        t.shape[i] = d
    return t


def storage(dt, vals):
    if dt == "f32":
        return np.ascontiguousarray(vals, dtype=np.float32)
    if dt == "f16":
        return np.ascontiguousarray(vals, dtype=np.float16)
    return np.ascontiguousarray(bf16_bits(np.asarray(vals, dtype=np.float32)))


def loaded(st):
    if st == "f32":
        return lambda a: a.astype(np.float64)
    if st == "f16":
        return lambda a: a.astype(np.float64)
    return from_bf16_bits


def reference(lib, ctx, path, b, ins):
    g = ctypes.c_void_p()
    st = lib.kf_graph_load_yaml(ctx, path.encode(), ctypes.byref(g))
    if st != 0:
        raise RuntimeError("%s: load: %s" % (b.name, lib.kf_ctx_errmsg(ctx).decode()))
    try:
        bufs = [storage(v.dtype, x) for v, x in zip(b.inputs, ins)]
        hin = (HostTensor * len(bufs))(*[host(a, v.dtype, v.shape)
                                         for a, v in zip(bufs, b.inputs)])
        outs = [b.vals[o] for o in b.outputs]
        obufs = [storage(v.dtype, np.zeros(v.shape)) for v in outs]
        hout = (HostTensor * len(outs))(*[host(a, v.dtype, v.shape)
                                          for a, v in zip(obufs, outs)])
        st = lib.kf_graph_run_reference(g, hin, len(bufs), hout, len(outs))
        if st != 0:
            raise RuntimeError("%s: reference: %s" % (b.name, lib.kf_ctx_errmsg(ctx).decode()))
        return [loaded(v.dtype)(a) for a, v in zip(obufs, outs)]
    finally:
        lib.kf_graph_destroy(g)


# ---- the checks ----------------------------------------------------------------

def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def run_cli(kfuse, *args):
    p = subprocess.run([kfuse, *args], capture_output=True, text=True)
    if p.returncode != 0:
        fail("kfuse %s: exit %d\n%s%s" % (" ".join(args), p.returncode, p.stdout, p.stderr))


def check_coverage(fam):
    rand = [b for b in fam if b.name.startswith("fam")]
    if len(rand) < 50:
        fail("%d random members, want at least 50" % len(rand))
    ops = {op for b in fam for _, op, _, _ in b.nodes}
    missing = set(family.POINTWISE + family.REDUCE + ("transpose", "broadcast_to",
                                                      "reshape")) - ops
    if missing:
        fail("ops never generated: %s" % sorted(missing))
    if {b.dtype for b in fam} != set(family.DTYPES):
        fail("dtypes %s" % sorted({b.dtype for b in fam}))
    sizes = [family.io_bytes(b) for b in rand]
    if min(sizes) > 2 << 20 or max(sizes) < 512 << 20 or max(sizes) > 1 << 30:
        fail("sizes from %d to %d bytes, want about 1 MiB to 1 GiB" % (min(sizes), max(sizes)))
    odd = [b for b in rand if any(d & (d - 1) for v in b.inputs for d in v.shape if d > 1)]
    if len(odd) < 10:
        fail("only %d members with a non-power-of-two extent" % len(odd))
    red = {(len(a.shape), tuple(at["axes"])) for b in fam for _, op, args, at in b.nodes
           for a in args[:1] if op in family.REDUCE}
    for rank in (2, 3):
        for ax in range(rank):
            if (rank, (ax,)) not in red:
                fail("no reduction over axis %d of a rank-%d tensor" % (ax, rank))
    print("coverage: %d members (%d random), sizes %.2f MiB .. %.0f MiB, %d with odd extents"
          % (len(fam), len(rand), min(sizes) / 2 ** 20, max(sizes) / 2 ** 20, len(odd)))


def check_tiny(lib, ctx, tiny, d):
    rng = np.random.default_rng(7)
    worst = {}
    for b in tiny:
        path = os.path.join(d, b.name + ".yaml")
        ins = [rnd(rng.uniform(family.INPUT_LO, family.INPUT_HI, v.shape), v.dtype)
               for v in b.inputs]
        ref = reference(lib, ctx, path, b, ins)
        with np.errstate(all="raise", under="ignore"):
            got = torch_fn(b)(*[T(x, v.dtype) for x, v in zip(ins, b.inputs)])
        for o, r, t in zip(b.outputs, ref, got):
            if t.v.shape != r.shape:
                fail("%s: %s: torch rendering shape %s, kfuse %s" % (b.name, o, t.v.shape,
                                                                      r.shape))
            if not np.isfinite(r).all():
                fail("%s: %s: the reference has NaN or infinity" % (b.name, o))
            err = np.abs(t.v - r).max() / max(np.abs(r).max(), 1e-30)
            worst[b.dtype] = max(worst.get(b.dtype, 0.0), err)
            if err > family.TOL[b.dtype]:
                fail("%s: %s: torch rendering differs from the reference by %.3g of the "
                     "output's largest magnitude (tolerance %g)" % (b.name, o, err,
                                                                   family.TOL[b.dtype]))
    print("tiny: %d members, torch rendering == kfuse reference (largest error: %s)"
          % (len(tiny), ", ".join("%s %.2g" % kv for kv in sorted(worst.items()))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kfuse", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--compile", type=int, default=6, help="members compiled with NVRTC")
    args = ap.parse_args()
    full, tiny = family.family(), family.family(tiny=True)
    check_coverage(full)
    for b, t in zip(full, tiny):
        if [n[1] for n in b.nodes] != [n[1] for n in t.nodes]:
            fail("%s: the tiny version has other ops than the full one" % b.name)
    fd, td = os.path.join(args.dir, "full"), os.path.join(args.dir, "tiny")
    family.write(full, fd)
    family.write(tiny, td)
    again = os.path.join(args.dir, "again")
    family.write(family.family(), again)
    for b in full:
        for ext in (".yaml", ".py"):
            with open(os.path.join(fd, b.name + ext)) as f, \
                    open(os.path.join(again, b.name + ext)) as g:
                if f.read() != g.read():
                    fail("%s%s: a second generation differs (not reproducible)" % (b.name, ext))
    for b in full:
        run_cli(args.kfuse, "check", os.path.join(fd, b.name + ".yaml"))
        run_cli(args.kfuse, "plan", os.path.join(fd, b.name + ".yaml"))
    step = max(1, len(full) // max(args.compile, 1))
    for b in full[::step][:args.compile]:
        run_cli(args.kfuse, "compile", "--arch", "sm_90", os.path.join(fd, b.name + ".yaml"))
    print("full: %d members pass kfuse check and plan, %d compile" % (len(full), args.compile))
    lib = ctypes.CDLL(args.lib)
    lib.kf_ctx_create.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    lib.kf_ctx_errmsg.restype = ctypes.c_char_p
    lib.kf_ctx_errmsg.argtypes = [ctypes.c_void_p]
    lib.kf_graph_load_yaml.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                       ctypes.POINTER(ctypes.c_void_p)]
    lib.kf_graph_run_reference.argtypes = [ctypes.c_void_p, ctypes.POINTER(HostTensor),
                                           ctypes.c_int, ctypes.POINTER(HostTensor),
                                           ctypes.c_int]
    lib.kf_graph_destroy.argtypes = [ctypes.c_void_p]
    lib.kf_ctx_destroy.argtypes = [ctypes.c_void_p]
    ctx = ctypes.c_void_p()
    if lib.kf_ctx_create(ctypes.byref(ctx)) != 0:
        fail("kf_ctx_create")
    try:
        check_tiny(lib, ctx, tiny, td)
    finally:
        lib.kf_ctx_destroy(ctx)
    print("ok")


if __name__ == "__main__":
    main()
