"""test_py_builder.py - kfuse.Graph: every builder of kfuse.h, each built
from Python and run on the CPU reference against the same computation in
numpy (float64, rounded to the output dtype); operators on values; names,
introspection, dump, hash and YAML round trips. No GPU, no torch."""
import math
import sys
import unittest

from kfuse_test_util import kfuse, np, rng

SQRT2 = math.sqrt(2.0)
_erf = np.vectorize(math.erf)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


UNARY = {  # op: (numpy function on float64, input range)
    "neg": (lambda x: -x, (-3, 3)), "abs": (np.abs, (-3, 3)), "exp": (np.exp, (-3, 3)),
    "log": (np.log, (0.1, 4)), "sqrt": (np.sqrt, (0.1, 4)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.1, 4)), "reciprocal": (lambda x: 1 / x, (0.5, 4)),
    "sin": (np.sin, (-3, 3)), "cos": (np.cos, (-3, 3)), "tanh": (np.tanh, (-3, 3)),
    "sigmoid": (sigmoid, (-3, 3)), "relu": (lambda x: np.maximum(x, 0), (-3, 3)),
    "gelu": (lambda x: 0.5 * x * (1 + _erf(x / SQRT2)), (-3, 3)),
    "gelu_tanh": (lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) *
                                                    (x + 0.044715 * x ** 3))), (-3, 3)),
    "silu": (lambda x: x * sigmoid(x), (-3, 3)), "erf": (_erf, (-2, 2)),
    "floor": (np.floor, (-3, 3)), "ceil": (np.ceil, (-3, 3)), "sign": (np.sign, (-3, 3)),
}
BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "pow": np.power, "maximum": np.maximum, "minimum": np.minimum,
}
COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
           "gt": np.greater, "ge": np.greater_equal}


class Builders(unittest.TestCase):
    def setUp(self):
        self.r = rng(1)

    def close(self, got, want, dtype=np.float32, tol=2e-6):
        want = np.asarray(want, dtype=np.float64).astype(dtype)
        self.assertEqual(got.dtype, want.dtype)
        self.assertEqual(got.shape, want.shape)
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=tol, atol=tol)

    def test_every_builder_is_a_method(self):
        # the C API's builders, one for one (kfuse.h's list)
        names = list(UNARY) + ["logical_not"] + list(BINARY) + list(COMPARE) + [
            "logical_and", "logical_or", "where", "clamp", "cast", "sum", "mean", "max", "min",
            "reshape", "transpose", "broadcast_to", "softmax", "log_softmax", "logsumexp",
            "layernorm",
            "rmsnorm", "matmul", "input", "scalar", "output", "set_name", "slice", "concat",
            "gather", "iota"]
        for n in names:
            self.assertTrue(callable(getattr(kfuse.Graph, n, None)), n)
        exported = {s[3:] for s in dir(kfuse._lib) if s.startswith("kf_")}  # ctypes: declared
        self.assertTrue(set(kfuse._native.UNARY + kfuse._native.BINARY) <= exported)

    def test_index_ops(self):
        # slice by Python's rules, concat of three, gather with clamping, iota
        g = kfuse.Graph()
        x = g.input("x", "f32", [4, 6])
        ids = g.input("ids", "i64", [2, 3])
        s = g.slice(x, -1, -5, None, 2)
        c = g.concat([s, x, s], axis=1)
        e = g.gather(x, ids, 0)
        r = g.iota("i32", [4, 3], axis=0)
        for v in (s, c, e, r):
            g.output(v)
        self.assertEqual([v.shape for v in (s, c, e, r)],
                         [(4, 3), (4, 12), (2, 3, 6), (4, 3)])
        a = self.r.uniform(-1, 1, (4, 6)).astype(np.float32)
        i = np.array([[0, 3, -7], [9, 1, 2]], dtype=np.int64)
        outs = g.run_reference(a, i)
        self.close(outs[0], a[:, -5::2])
        self.close(outs[1], np.concatenate([a[:, -5::2], a, a[:, -5::2]], axis=1))
        self.close(outs[2], a[np.clip(i, 0, 3)])
        np.testing.assert_array_equal(outs[3], np.broadcast_to(np.arange(4, dtype=np.int32)[:, None],
                                                              (4, 3)))
        with self.assertRaises(kfuse.KfuseError) as cm:
            g.slice(x, 0, 3, 1)
        self.assertIn("empty", str(cm.exception))

    def test_unary(self):
        for op, (f, (lo, hi)) in UNARY.items():
            with self.subTest(op=op):
                g = kfuse.Graph()
                x = g.input("x", "f32", [3, 5])
                y = getattr(g, op)(x)
                g.output(y)
                self.assertEqual((y.dtype, y.shape), ("f32", (3, 5)))
                a = self.r.uniform(lo, hi, (3, 5)).astype(np.float32)
                (out,) = g.run_reference(a)
                self.close(out, f(a.astype(np.float64)))

    def test_logical_not_and_integers(self):
        g = kfuse.Graph()
        x = g.input("x", "i32", [6])
        g.output(g.logical_not(x), g.neg(x), g.abs(x), g.relu(x), g.sign(x))
        a = np.array([-3, 0, 2, 0, 7, -1], np.int32)
        outs = g.run_reference(a)
        np.testing.assert_array_equal(outs[0], a == 0)
        for o, want in zip(outs[1:], (-a, np.abs(a), np.maximum(a, 0), np.sign(a))):
            self.assertEqual(o.dtype, np.int32)
            np.testing.assert_array_equal(o, want)

    def test_binary_broadcasting(self):
        for op, f in BINARY.items():
            with self.subTest(op=op):
                g = kfuse.Graph()
                a = g.input("a", "f32", [4, 1, 3])
                b = g.input("b", "f32", [5, 1])
                y = getattr(g, op)(a, b)
                g.output(y)
                self.assertEqual(y.shape, (4, 5, 3))
                x1 = self.r.uniform(0.5, 2, (4, 1, 3)).astype(np.float32)
                x2 = self.r.uniform(0.5, 2, (5, 1)).astype(np.float32)
                (out,) = g.run_reference(x1, x2)
                self.close(out, f(x1.astype(np.float64), x2.astype(np.float64)))

    def test_comparisons_and_logic(self):
        g = kfuse.Graph()
        a = g.input("a", "f32", [8])
        b = g.input("b", "f32", [8])
        outs = [getattr(g, op)(a, b) for op in COMPARE]
        lt, gt = g.lt(a, b), g.gt(a, b)
        outs += [g.logical_and(lt, g.ne(a, b)), g.logical_or(lt, gt)]
        g.output(*outs)
        x1 = np.array([1, 2, 3, 4, 5, 6, 7, 8], np.float32)
        x2 = np.array([1, 3, 2, 4, 6, 5, 7, 9], np.float32)
        got = g.run_reference(x1, x2)
        for o, (op, f) in zip(got, COMPARE.items()):
            self.assertEqual(o.dtype, np.bool_, op)
            np.testing.assert_array_equal(o, f(x1, x2), op)
        np.testing.assert_array_equal(got[-2], (x1 < x2) & (x1 != x2))
        np.testing.assert_array_equal(got[-1], (x1 < x2) | (x1 > x2))

    def test_where_clamp_cast_scalar(self):
        g = kfuse.Graph()
        x = g.input("x", "f32", [2, 4])
        c = g.gt(x, g.scalar(0.0, "f32"))
        g.output(g.where(c, x, g.scalar(-1.0)), g.clamp(x, -0.5, 0.5), g.clamp(x, lo=0),
                 g.clamp(x, hi=0.25), g.cast(x, "i32"), g.cast(x, "bool"), g.cast(x, "f16"))
        a = np.array([[-1.5, -0.2, 0.0, 0.3], [0.7, 2.9, -3.9, 1e-3]], np.float32)
        w, c1, c2, c3, i, bo, h = g.run_reference(a)
        self.close(w, np.where(a > 0, a, -1))
        self.close(c1, np.clip(a, -0.5, 0.5))
        self.close(c2, np.maximum(a, 0))
        self.close(c3, np.minimum(a, 0.25))
        np.testing.assert_array_equal(i, np.trunc(a).astype(np.int32))
        np.testing.assert_array_equal(bo, a != 0)
        self.close(h, a, np.float16, tol=1e-3)

    def test_reductions(self):
        a = rng(2).uniform(-2, 2, (3, 4, 5)).astype(np.float32)
        for op, f in (("sum", np.sum), ("mean", np.mean), ("max", np.max), ("min", np.min)):
            for axes, keep in ((None, False), (-1, False), ((0, 2), True), ([1], True)):
                with self.subTest(op=op, axes=axes, keep=keep):
                    g = kfuse.Graph()
                    x = g.input("x", "f32", a.shape)
                    y = getattr(g, op)(x, axes, keepdim=keep)
                    g.output(y)
                    want = f(a.astype(np.float64), axis=None if axes is None else
                             tuple(axes) if not isinstance(axes, int) else axes,
                             keepdims=keep)
                    self.assertEqual(y.shape, np.shape(want))
                    self.close(g.run_reference(a)[0], want, tol=1e-5)

    def test_integer_sum(self):
        g = kfuse.Graph()
        x = g.input("x", "i64", [4, 3])
        g.output(g.sum(x, 0), g.max(x, 1))
        a = np.arange(12, dtype=np.int64).reshape(4, 3) - 5
        s, m = g.run_reference(a)
        np.testing.assert_array_equal(s, a.sum(0))
        np.testing.assert_array_equal(m, a.max(1))

    def test_layout(self):
        g = kfuse.Graph()
        x = g.input("x", "f32", [2, 3, 4])
        r = g.reshape(x, [6, -1])
        t = g.transpose(x, [2, 0, 1])
        b = g.broadcast_to(g.input("v", "f32", [4]), [3, 4])
        g.output(r, t, b)
        self.assertEqual((r.shape, t.shape, b.shape), ((6, 4), (4, 2, 3), (3, 4)))
        a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
        v = np.array([1, 2, 3, 4], np.float32)
        ro, to, bo = g.run_reference(a, v)
        np.testing.assert_array_equal(ro, a.reshape(6, 4))
        np.testing.assert_array_equal(to, a.transpose(2, 0, 1))
        np.testing.assert_array_equal(bo, np.broadcast_to(v, (3, 4)))

    def test_composites(self):
        a = rng(3).normal(0, 2, (4, 16)).astype(np.float32)
        w = rng(4).normal(1, 0.1, (16,)).astype(np.float32)
        bias = rng(5).normal(0, 0.1, (16,)).astype(np.float32)
        g = kfuse.Graph()
        x, wv, bv = g.input("x", "f32", a.shape), g.input("w", "f32", [16]), \
            g.input("b", "f32", [16])
        g.output(g.softmax(x, -1), g.log_softmax(x, 0), g.layernorm(x, wv, bv, eps=1e-5),
                 g.layernorm(x), g.rmsnorm(x, wv, eps=1e-6), g.rmsnorm(x))
        sm, lsm, ln, ln0, rms, rms0 = g.run_reference(a, w, bias)
        d = a.astype(np.float64)
        e = np.exp(d - d.max(-1, keepdims=True))
        self.close(sm, e / e.sum(-1, keepdims=True))
        self.close(lsm, d - d.max(0) - np.log(np.exp(d - d.max(0)).sum(0)), tol=1e-5)
        norm = (d - d.mean(-1, keepdims=True)) / np.sqrt(d.var(-1, keepdims=True) + 1e-5)
        self.close(ln, norm * w + bias, tol=1e-5)
        self.close(ln0, norm, tol=1e-5)
        r = d / np.sqrt((d * d).mean(-1, keepdims=True) + 1e-6)
        self.close(rms, r * w, tol=1e-5)
        self.close(rms0, r, tol=1e-5)

    def test_logsumexp(self):
        # stable (a row near 1000), a row of -inf is -inf, one holding +inf is +inf
        a = rng(6).normal(0, 3, (5, 33)).astype(np.float32)
        a[1] += 1000.0
        a[2] = -np.inf
        a[3, 7] = np.inf
        g = kfuse.Graph()
        x = g.input("x", "f32", a.shape)
        g.output(g.logsumexp(x, -1), g.logsumexp(x, 0))
        rows, cols = g.run_reference(a)
        self.assertEqual(rows.shape, (5,))
        self.assertEqual(cols.shape, (33,))
        d = a.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            for got, axis in ((rows, -1), (cols, 0)):
                m = d.max(axis, keepdims=True)
                ms = np.where(np.isinf(m), 0.0, m)
                want = np.squeeze(ms, axis) + np.log(np.exp(d - ms).sum(axis))
                np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-6, atol=1e-6)
        self.assertEqual(rows[2], -np.inf)
        self.assertEqual(rows[3], np.inf)

    def test_attention_logsumexp(self):
        # the logsumexp of attention scores (f16 q k^T / 8, causal with queries
        # 0-2 seeing no key) against numpy in float64 from the same rounded
        # scores; one flash kernel would write it (test_attention.c)
        sq, sk, dh = 9, 12, 64
        q = rng(7).normal(0, 1, (2, sq, dh)).astype(np.float16)
        k = rng(8).normal(0, 1, (2, sk, dh)).astype(np.float16)
        v = rng(9).normal(0, 1, (2, sk, dh)).astype(np.float16)
        g = kfuse.Graph()
        qv, kv, vv = g.input("q", "f16", q.shape), g.input("k", "f16", k.shape), \
            g.input("v", "f16", v.shape)
        s = g.mul(g.matmul(qv, g.transpose(kv, [0, 2, 1])), g.scalar(0.125, "f16"))
        vis = g.ge(g.add(g.iota("i32", [sq, sk], 0), g.scalar(-3, "i32")),
                   g.iota("i32", [sq, sk], 1))
        s = g.where(vis, s, g.scalar(-np.inf, "f16"))
        g.output(g.matmul(g.softmax(s, -1), vv), g.logsumexp(g.cast(s, "f32"), -1))
        _, lse = g.run_reference(q, k, v)
        self.assertEqual(lse.dtype, np.float32)
        sc = (np.matmul(q.astype(np.float64), k.astype(np.float64).transpose(0, 2, 1))
              .astype(np.float16) * np.float16(0.125)).astype(np.float64)
        qi, ki = np.meshgrid(np.arange(sq), np.arange(sk), indexing="ij")
        sc = np.where(qi - 3 >= ki, sc, -np.inf)
        m = sc.max(-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            want = m + np.log(np.exp(sc - np.where(np.isinf(m), 0, m)[..., None]).sum(-1))
            want = np.where(np.isinf(m), m, want)
        self.assertTrue(np.all(lse[:, :3] == -np.inf))
        np.testing.assert_allclose(lse[:, 3:].astype(np.float64), want[:, 3:], rtol=1e-6,
                                   atol=1e-6)

    def test_matmul(self):
        a = rng(6).normal(size=(2, 3, 5)).astype(np.float32)
        b = rng(7).normal(size=(5, 4)).astype(np.float32)
        g = kfuse.Graph()
        y = g.matmul(g.input("a", "f32", a.shape), g.input("b", "f32", b.shape))
        g.output(y)
        self.assertEqual(y.shape, (2, 3, 4))
        self.close(g.run_reference(a, b)[0], a.astype(np.float64) @ b.astype(np.float64),
                   tol=1e-5)

    def test_rank0_inputs(self):
        # a rank-0 array stays rank 0 (np.ascontiguousarray made it [1],
        # which the C library refused); numbers and 0-d bf16 bits too
        g = kfuse.Graph()
        s = g.input("s", "f32", [])
        b = g.input("b", "bf16", [])
        g.output(g.mul(s, g.input("x", "f32", [3])), g.exp(b))
        y, e = g.run_reference(np.array(2.0, np.float32), kfuse.to_bf16(np.float32(1.0)),
                               np.array([1, 2, 3], np.float32))
        np.testing.assert_array_equal(y, [2, 4, 6])
        self.assertEqual(e.shape, ())
        y, _ = g.run_reference(3.0, kfuse.to_bf16(0.0), [1, 1, 1])
        np.testing.assert_array_equal(y, [3, 3, 3])
        self.assertEqual(kfuse.to_bf16(np.float32(1.0)).shape, ())
        self.assertEqual(kfuse.from_bf16(np.uint16(0x3F80)).shape, ())

    def test_half_precision(self):
        a = rng(8).uniform(-2, 2, (8,)).astype(np.float32)
        g = kfuse.Graph()
        h = g.input("h", "f16", [8])
        b = g.input("b", "bf16", [8])
        g.output(g.exp(h), g.exp(b))
        eh, eb = g.run_reference(a.astype(np.float16), kfuse.to_bf16(a))
        self.close(eh, np.exp(a.astype(np.float16).astype(np.float64)), np.float16, tol=1e-3)
        bits = eb if eb.dtype == np.uint16 else eb.view(np.uint16)
        want = np.exp(kfuse.from_bf16(kfuse.to_bf16(a)).astype(np.float64))
        np.testing.assert_allclose(kfuse.from_bf16(bits), want, rtol=8e-3)

    def test_bf16_conversions(self):
        a = np.array([1.0, -2.5, 3.14159, np.inf, 1e-40, 65504.0, np.nan], np.float32)
        b = kfuse.to_bf16(a)
        lib = kfuse._lib
        lib.kf_float_to_bf16.restype = __import__("ctypes").c_uint16
        lib.kf_float_to_bf16.argtypes = [__import__("ctypes").c_float]
        self.assertEqual(list(b), [lib.kf_float_to_bf16(float(v)) for v in a])
        back = kfuse.from_bf16(b)
        self.assertTrue(np.isnan(back[-1]))
        np.testing.assert_array_equal(back[:4], np.array([1.0, -2.5, 3.140625, np.inf],
                                                         np.float32))


class Operators(unittest.TestCase):
    def test_operators_build_the_ops(self):
        g = kfuse.Graph()
        a = g.input("a", "f32", [2, 2])
        b = g.input("b", "f32", [2, 2])
        exprs = {"add": a + b, "radd": 1 + a, "sub": a - 2, "rsub": 2 - a, "mul": a * b,
                 "div": a / b, "rdiv": 1 / a, "pow": a ** 2, "neg": -a, "abs": abs(a),
                 "matmul": a @ b, "lt": a < b, "le": a <= 1, "gt": a > b, "ge": a >= b}
        lt = exprs["lt"]
        exprs["and"] = lt & (a > 0)
        exprs["or"] = lt | (a > 0)
        exprs["not"] = ~lt
        g.output(*exprs.values())
        x = np.array([[1, 2], [3, 4]], np.float32)
        y = np.array([[2, 2], [1, 5]], np.float32)
        got = dict(zip(exprs, g.run_reference(x, y)))
        want = {"add": x + y, "radd": 1 + x, "sub": x - 2, "rsub": 2 - x, "mul": x * y,
                "div": x / y, "rdiv": 1 / x, "pow": x ** 2, "neg": -x, "abs": abs(x),
                "matmul": x @ y, "lt": x < y, "le": x <= 1, "gt": x > y, "ge": x >= y,
                "and": (x < y) & (x > 0), "or": (x < y) | (x > 0), "not": ~(x < y)}
        for k in exprs:
            np.testing.assert_allclose(got[k], want[k], rtol=1e-6, err_msg=k)
        self.assertEqual(exprs["add"].op, "add")
        self.assertEqual(exprs["pow"].op, "pow")

    def test_values_stay_hashable(self):
        g = kfuse.Graph()
        a = g.input("a", "f32", [2])
        self.assertEqual({a: 1}[a], 1)
        self.assertTrue(a == a)

    def test_scalar_takes_the_operands_dtype(self):
        g = kfuse.Graph()
        x = g.input("x", "i32", [3])
        y = x * 3
        g.output(y)
        self.assertEqual(y.dtype, "i32")
        np.testing.assert_array_equal(g.run_reference(np.array([1, -2, 5], np.int32))[0],
                                      [3, -6, 15])


class Introspection(unittest.TestCase):
    def build(self):
        g = kfuse.Graph("net")
        x = g.input("x", "f32", [4, 8])
        w = g.input("w", "f32", [8])
        y = g.rmsnorm(x, w)
        y.name = "y"
        g.output(y)
        return g, x, w, y

    def test_names_and_lists(self):
        g, x, w, y = self.build()
        self.assertEqual(g.name, "net")
        g.name = "other"
        self.assertEqual(g.name, "other")
        self.assertEqual([v.name for v in g.inputs], ["x", "w"])
        self.assertEqual([v.id for v in g.outputs], [y.id])
        self.assertEqual(g.find("y").id, y.id)
        self.assertIsNone(g.find("nope"))
        self.assertEqual((x.op, x.numel, x.rank), ("input", 32, 2))
        self.assertGreater(g.num_values, 3)
        self.assertIn("y: f32[4,8]", g.dump())
        self.assertIn("kfuse.Value", repr(y))
        self.assertEqual(g.status, "OK")

    def test_hash_and_yaml_round_trip(self):
        g, *_ = self.build()
        text = g.to_yaml()
        self.assertIn("kfuse: 1", text)
        g2 = kfuse.load_yaml_string(text)
        self.assertEqual(g2.hash(), g.hash())
        g3, *_ = self.build()
        self.assertEqual(g3.hash(), g.hash())
        g4 = kfuse.Graph()
        g4.output(g4.exp(g4.input("x", "f32", [4, 8])))
        self.assertNotEqual(g4.hash(), g.hash())

    def test_torch_and_numpy_not_imported_by_kfuse(self):
        import subprocess
        code = ("import sys; sys.path.insert(0, %r); import kfuse; g = kfuse.Graph(); "
                "g.output(g.exp(g.input('x', 'f32', [2]))); g.plan().describe(); "
                "print('torch' in sys.modules, 'numpy' in sys.modules)"
                % kfuse.__file__.rsplit("/kfuse/", 1)[0])
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True).stdout.split()
        self.assertEqual(out, ["False", "False"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
