"""test_py_torch.py - the torch.compile backend (kfuse/torch.py,
kfuse/translate.py): Dynamo, AOTAutograd, the partitioner and the aten
translation end to end, against eager PyTorch. Without a GPU the
partitions run on kfuse's CPU reference (backend_with(reference=True)),
so the translation's semantics (type promotion, integer sums in int64,
sign(NaN) = 0, broadcasting, strided inputs, views), the fallbacks, the
one warning, explain(), training graphs and new shapes are all checked on
a CPU; with a GPU the same functions also run through backend="kfuse" on
CUDA tensors (and under mode="reduce-overhead"). Exits 77 (skipped)
without torch: CI has none (its wheel is too large to install there)."""
import sys
import unittest
import warnings

try:
    import torch
except ImportError:
    print("test_py_torch: skipped (needs torch)")
    sys.exit(77)

from kfuse_test_util import kfuse  # noqa: E402

import kfuse.torch as kt  # noqa: E402

HAVE_GPU = torch.cuda.is_available()


def f_promote(x_i32, y):
    return torch.exp(x_i32) + y * 2, torch.sum(x_i32, -1), (x_i32 > 1.5)


def f_sign(x):
    return torch.sign(x) * 3.0, torch.amax(x, 0)


def f_block(x, w, b):
    h = torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b)
    h = torch.nn.functional.gelu(h, approximate="tanh") + torch.softmax(x, -1)
    return torch.where(h > 0, h, torch.zeros_like(h) - 1).masked_fill(x < -1, 7.0).clamp(-2, 5)


def f_views(x, v):
    y = x.permute(1, 0).unsqueeze(0) + v.view(1, 1, -1)[..., :1].expand(2, -1, -1)
    return y.reshape(-1) * 0.5, torch.mean(y, (0, 2), keepdim=True)


def f_mixed(h, f, m):
    return (h + f) * 1.5, torch.logical_and(m, h > 0), torch.rsqrt(f.abs() + 1)


def f_index(x, w, ids, idx2):
    e = torch.nn.functional.embedding(ids, w) * 2  # gather axis 0
    rot = torch.cat([-x[..., 3:], x[..., :3]], dim=-1)  # slice + cat
    pos = torch.arange(x.shape[-1], dtype=torch.float32) * 0.5  # iota
    s = torch.index_select(x, 0, ids[0]) + x[::2].sum()  # index_select, strided slice
    t = torch.gather(x, 1, idx2).exp()  # take_along_axis
    return e + 1, rot * pos, s, t, w[ids[1]].tanh()  # index.Tensor


def f_fallback(x):
    return torch.cumsum(torch.exp(x), -1).tanh() * 2


def f_layout_view(x):
    # exp keeps x.transpose's stride order (eager and the trace); expm1 (no
    # kfuse translation) keeps it again, so the trace's transpose + view is
    # valid only if kfuse's output has those strides too (a view-only
    # partition is dropped, so the view runs as aten's)
    y = torch.expm1(torch.exp(x.transpose(0, 1)))
    return y.transpose(0, 1).view(x.shape[0], -1)


def f_layouts(x):
    # partition outputs in a permuted order, with a broadcast axis, and sliced
    y = torch.exp(x.permute(2, 0, 1))
    z = (x.sum(-1, keepdim=True) * 2).expand(-1, -1, 5)
    w = torch.exp(x)[:, 1:]
    return torch.expm1(y), torch.expm1(z), torch.expm1(w)


class CpuReference(unittest.TestCase):
    """The backend on CPU tensors, partitions on kfuse's CPU reference."""

    def setUp(self):
        torch._dynamo.reset()
        self.g = torch.Generator().manual_seed(0)

    def compiled(self, f, **kw):
        return torch.compile(f, backend=kt.backend_with(reference=True), **kw)

    def same(self, f, *args, rtol=1e-5, atol=1e-6):
        want = f(*args)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            got = self.compiled(f)(*args)
        self.assertEqual([str(m.message) for m in w if "kfuse" in str(m.message)], [])
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, tuple) else (got,)
        for w, g in zip(want, got):
            self.assertEqual(g.dtype, w.dtype)
            torch.testing.assert_close(g, w, rtol=rtol, atol=atol, equal_nan=True)

    def rnd(self, *shape, dtype=torch.float32):
        return torch.randn(*shape, generator=self.g).to(dtype)

    def test_type_promotion_and_int_sum(self):
        x = torch.randint(-3, 4, (4, 8), generator=self.g, dtype=torch.int32)
        self.same(f_promote, x, self.rnd(4, 8))
        r = kt.explain(f_promote, x, self.rnd(4, 8), reference=True)
        self.assertEqual(r.fallbacks, {})

    def test_sign_nan_and_amax_nan(self):
        x = self.rnd(5, 3)
        x[1, 1] = float("nan")
        x[2, 0] = 0.0
        self.same(f_sign, x)
        got = self.compiled(f_sign)(x)[0]
        self.assertEqual(got[1, 1].item(), 0.0)  # torch.sign(NaN) == 0

    def test_block(self):
        self.same(f_block, self.rnd(6, 32), self.rnd(32), self.rnd(32), rtol=1e-4, atol=1e-5)

    def test_index_ops(self):
        x, w = self.rnd(4, 6), self.rnd(10, 6)
        ids = torch.tensor([[1, 3, 0, 2], [9, 0, 4, 4]])
        idx2 = torch.tensor([[0, 5], [1, 1], [2, 3], [5, 4]])
        self.same(f_index, x, w, ids, idx2, rtol=1e-5, atol=1e-5)
        r = kt.explain(f_index, x, w, ids, idx2, reference=True)
        left = {op for op, _ in r.fallbacks}
        for op in ("embedding.default", "cat.default", "slice.Tensor", "arange.start_step",
                   "arange.default", "index_select.default", "gather.default", "index.Tensor",
                   "select.int"):
            self.assertNotIn(op, left, str(r))

    def test_views_and_strided_inputs(self):
        x = self.rnd(16, 3).t()  # non-contiguous: copied, never misread
        self.assertFalse(x.is_contiguous())
        self.same(f_views, x.t().contiguous().t().t(), self.rnd(3))
        self.same(f_views, self.rnd(3, 16).t().t().t().t().t(), self.rnd(3))

    def test_mixed_dtypes(self):
        h = self.rnd(4, 4, dtype=torch.float16)
        m = torch.rand(4, 4, generator=self.g) > 0.5
        self.same(f_mixed, h, self.rnd(4, 4), m, rtol=1e-3, atol=1e-3)

    def test_bf16(self):
        x = self.rnd(4, 64, dtype=torch.bfloat16)
        self.same(lambda x: torch.softmax(x, -1) * x, x, rtol=2e-2, atol=2e-2)

    def test_fallback_op_and_explain(self):
        x = self.rnd(4, 8)
        self.same(f_fallback, x)
        r = kt.explain(f_fallback, x, reference=True)
        self.assertIn(("cumsum.default", "no kfuse translation"), r.fallbacks)
        text = str(r)
        self.assertIn("kfuse partition", text)
        self.assertIn("fallback cumsum.default x1: no kfuse translation", text)
        self.assertIn("launches per call:", text)
        self.assertEqual(sum(len(g.partitions) for g in r.graphs), 2)  # exp | tanh, mul

    def test_outputs_have_the_traced_strides(self):
        # was "view size is not compatible with input tensor's size and
        # stride" (gpt2 bf16 on the GPU): kfuse's outputs were dense where
        # the trace had a permuted layout
        self.same(f_layout_view, self.rnd(4, 8, 16))
        x = self.rnd(3, 4, 5)
        got = self.compiled(f_layouts)(x)
        for g, w in zip(got, f_layouts(x)):
            self.assertEqual(g.stride(), w.stride())
            torch.testing.assert_close(g, w)
        r = kt.explain(f_layouts, x, reference=True)
        parts = [m for gr in r.graphs for m in gr.partitions]
        self.assertTrue(parts and all(m.plans for m in parts), str(r))
        self.assertTrue(all(e is not None for m in parts for e in m.plans.values()), str(r))

    def test_layout_kinds(self):
        # the Layout chosen per fake tensor: dense permutations and
        # broadcasts are views of kfuse's buffer, anything else a copy
        TR = kt.TR
        t = torch.empty(2, 3, 4)
        self.assertEqual(TR._permuted(t.permute(2, 0, 1)), ([], [1, 2, 0]))
        self.assertEqual(TR._permuted(torch.empty(2, 1, 4).expand(2, 3, 4)), ([1], [0, 2]))
        self.assertIsNone(TR._permuted(t[:, :1].expand(2, 3, 4)))  # a gap
        self.assertIsNone(TR._permuted(t[:, 1:]))  # a gap
        self.assertIsNone(TR._permuted(t[1]))  # an offset

    def test_linear_goes_to_kfuse_by_default(self):
        # mm/addmm are in the default table (cuBLASLt in plans); a Linear
        # partitions with its bias and activation, and matches eager
        m = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.GELU(approximate="tanh"))
        x = self.rnd(4, 16)
        r = kt.explain(m, x, reference=True)
        self.assertEqual(r.fallbacks, {}, str(r))
        f = self.compiled(m)
        with torch.no_grad():
            torch.testing.assert_close(f(x), m(x), rtol=1e-4, atol=1e-5)

    def test_device_env(self):
        # KFUSE_TORCH_DEVICE=reference: backend="kfuse" itself on CPU tensors
        import os
        x = self.rnd(4, 8)
        old = os.environ.get("KFUSE_TORCH_DEVICE")
        try:
            for mode in ("reference", "reference:sm_90"):
                os.environ["KFUSE_TORCH_DEVICE"] = mode
                r = kt.explain(lambda x: torch.softmax(x * 2, -1), x)
                self.assertEqual(r.fallbacks, {}, (mode, str(r)))
                launches = [m.launches for g in r.graphs for m in g.partitions]
                # with an arch the plan is compiled too (NVRTC, no device)
                self.assertEqual(launches, [1] if mode != "reference" else [0], mode)
            torch._dynamo.reset()
            f = torch.compile(lambda x: torch.relu(x) * 3, backend="kfuse")
            torch.testing.assert_close(f(x), torch.relu(x) * 3)
            os.environ["KFUSE_TORCH_DEVICE"] = "gpu"
            with self.assertRaises(Exception) as e:
                kt.explain(lambda x: torch.exp(x), x)
            self.assertIn("KFUSE_TORCH_DEVICE must be", str(e.exception))
        finally:
            if old is None:
                os.environ.pop("KFUSE_TORCH_DEVICE", None)
            else:
                os.environ["KFUSE_TORCH_DEVICE"] = old

    def test_precompile_on_threads(self):
        # a graph's partitions translate and compile on the pool when it is
        # partitioned; KFUSE_TORCH_PRECOMPILE=0: on the calling thread
        import os
        import threading
        real, seen = kt.Partition._translate_compile, []

        def spy(part, args, device=None):
            seen.append(threading.current_thread().name)
            return real(part, args, device)
        kt.Partition._translate_compile = spy
        try:
            for flag, where in (("1", "kfuse-compile"), ("0", "MainThread")):
                os.environ["KFUSE_TORCH_PRECOMPILE"] = flag
                seen.clear()
                x = self.rnd(4, 8)
                r = kt.explain(f_fallback, x, reference="sm_90")
                parts = [m for g in r.graphs for m in g.partitions]
                self.assertEqual(len(seen), 2, seen)
                self.assertTrue(all(n.startswith(where) for n in seen), (flag, seen))
                self.assertTrue(all(m.launches >= 1 and not m.pending for m in parts), str(r))
                torch._dynamo.reset()
                self.same(f_fallback, x)
        finally:
            kt.Partition._translate_compile = real
            os.environ.pop("KFUSE_TORCH_PRECOMPILE", None)

    def test_first_call_profile(self):
        # where the first call went: two partitions alike (the same block
        # before and after an op kfuse leaves to aten) share one kernel
        def f(x):
            h = torch.tanh(torch.exp(x) * 2)
            return torch.tanh(torch.exp(torch.cumsum(h, -1)) * 2)
        x = self.rnd(4, 8)
        r = kt.explain(f, x, reference="sm_90")
        p = r.first_call()
        self.assertEqual(p["partitions"], 2, str(r))
        kernels = p["launches"] - p["library"]
        self.assertEqual(kernels, 2, p)
        self.assertEqual(p["compiled"] + p["memory_hits"] + p["disk_hits"], kernels, p)
        self.assertEqual(p["distinct_kernels"], 1, p)  # one key for both partitions
        self.assertEqual(p["compiled_twice"], 0, p)
        self.assertLessEqual(p["compiled"], 1, p)
        self.assertGreater(p["compile_span_ms"], 0.0, p)
        self.assertGreater(p["source_kb"], 1.0, p)
        table = r.first_call_table(1000.0, 10.0)
        for words in ("NVRTC", "1 distinct", "Dynamo", "load + matmul choice"):
            self.assertIn(words, table)
        self.assertEqual(r.first_call_table().count("\n") + 2, table.count("\n"), table)

    def test_first_call_counts_matmul_choices(self):
        # the load's matmul choices, from the plan JSON's "matmul_choice"
        # counters (the decision's text was cut at 223 characters in a
        # plan with several library calls, so counting from it read 0):
        # timed, skipped by the floor or the gain, or read back (neither)
        from types import SimpleNamespace as NS

        def choice(how, template, calls=1, timed=1, known=0, ms=2.0, spent=0.0):
            return {"how": how, "choice": "library", "template": template, "library_ms": 0.01,
                    "template_ms": -1.0, "floor_ms": 0.001, "calls": calls,
                    "calls_timed": timed, "calls_known": known, "choose_ms": ms,
                    "template_ms_spent": spent, "template_ahead_ms": 1.5}
        choices = [choice("timed", "timed", 3, 1, 2, 900.0, 850.0), choice("timed", "cannot win"),
                   choice("timed", "cannot pay", 2, 0), choice("cached", "cached", 1, 0, 1),
                   choice("timed", "off"), None]
        profs = [{"start": 1.0, "end": 1.5, "translate_ms": 1.0, "plan_ms": 2.0, "load_ms": 3.0,
                  "matmul_choice": c, "launches": [
                      {"origin": "library", "emit_ms": 0.0, "compile_ms": 0.0, "source_bytes": 10,
                       "key": "0" * 32}]} for c in choices]
        r = kt.Report()
        r.graphs.append(NS(partition_ms=4.0, partitions=[NS(profile=profs)]))
        p = r.first_call()
        self.assertEqual((p["template_timed"], p["template_skipped"]), (1, 2), p)
        self.assertEqual((p["choices"], p["choices_cached"]), (5, 1), p)
        self.assertEqual((p["calls"], p["calls_timed"], p["calls_known"]), (8, 3, 3), p)
        self.assertAlmostEqual(p["choose_ms"], 908.0)
        self.assertAlmostEqual(p["template_choice_ms"], 850.0)
        self.assertAlmostEqual(p["template_ahead_ms"], 7.5)  # five plans chose
        self.assertAlmostEqual(p["plan_ms"], 12.0 - 7.5)  # it ran inside the compile
        self.assertEqual((p["library"], p["compiled"], p["distinct_kernels"]), (6, 0, 0), p)
        self.assertAlmostEqual(p["compile_span_ms"], 500.0)
        table = r.first_call_table()
        self.assertIn("templates timed 1, skipped 2", table)
        self.assertIn("5 plans (1 read back); 8 library calls: 3 timed, 3 on record, 2 first only",
                      table)

    def test_batch_norm_and_fills(self):
        # inference batch norm decomposes into ops kfuse fuses (ResNet's
        # fell back); scalar_tensor, new_ones, new_full and detach translate;
        # getitem (a tuple's item, no aten op) is not counted as a fallback
        m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8),
                                torch.nn.ReLU()).eval()
        x = self.rnd(2, 3, 10, 10)
        with torch.no_grad():
            self.same(m, x, rtol=1e-5, atol=1e-5)
            r = kt.explain(m, x, reference=True)
        left = {op for op, _ in r.fallbacks}
        self.assertEqual(left & {"_native_batch_norm_legit_no_training.default",
                                 "_native_batch_norm_legit.default", "getitem"}, set(), str(r))

        def f(x):
            a = torch.where(x > 0, x, torch.scalar_tensor(-2.0))
            return a + x.new_ones((4, 1)) * x.new_full((1, 8), 3.0), x.detach() * 2
        x = self.rnd(4, 8)
        self.same(f, x)
        r = kt.explain(f, x, reference=True)
        left = {op for op, _ in r.fallbacks}
        self.assertEqual(left & {"new_ones.default", "new_full.default", "detach.default",
                                 "scalar_tensor.default"}, set(), str(r))

    def test_kfuse_failure_falls_back_with_one_warning(self):
        x = self.rnd(4, 8)
        real = kt.TR.translate

        def broken(gm, args):  # noqa: ARG001
            raise kfuse.KfuseError("kf_compile: injected failure", "ERR_COMPILE")
        kt.TR.translate = broken
        try:
            f = self.compiled(lambda x: torch.exp(x) * 2)
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                a, b = f(x), f(x)
        finally:
            kt.TR.translate = real
        torch.testing.assert_close(a, torch.exp(x) * 2)
        torch.testing.assert_close(b, a)
        msgs = [str(m.message) for m in w if "kfuse" in str(m.message)]
        self.assertEqual(len(msgs), 1, msgs)
        self.assertIn("injected failure", msgs[0])

    def test_new_shapes(self):
        f = self.compiled(lambda x: torch.softmax(x * 2, -1), dynamic=False)
        for shape in ((4, 8), (3, 5), (4, 8)):
            x = self.rnd(*shape)
            torch.testing.assert_close(f(x), torch.softmax(x * 2, -1))

    def test_dynamic_shapes(self):
        f = self.compiled(lambda x: torch.relu(x) + 1, dynamic=True)
        for n in (5, 9, 17):
            x = self.rnd(n, 4)
            torch.testing.assert_close(f(x), torch.relu(x) + 1)

    def test_training(self):
        def step(x, w):
            return (torch.tanh(x * w) ** 2).mean()
        x = self.rnd(8, 16)
        w1 = self.rnd(16).requires_grad_()
        w2 = w1.detach().clone().requires_grad_()
        step(x, w1).backward()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            loss = self.compiled(step)(x, w2)
            loss.backward()
        self.assertEqual([str(m.message) for m in w if "kfuse" in str(m.message)], [])
        torch.testing.assert_close(w2.grad, w1.grad, rtol=1e-5, atol=1e-6)

    def test_reduce_overhead_wiring(self):
        # mode="reduce-overhead" reaches the CUDA Graph tree path; CPU
        # tensors make it skip graphs (and kfuse, without reference mode),
        # so the result is eager's, forward and backward
        x = self.rnd(4, 8).requires_grad_()
        f = torch.compile(lambda x: torch.softmax(x * 2, -1).sum(), backend="kfuse",
                          mode="reduce-overhead")
        with self.assertLogs("kfuse.torch", "INFO") as logs:
            y = f(x)
            y.backward()
        self.assertIn("no CUDA Graph for this graph: skipping cudagraphs due to cpu device",
                      "\n".join(logs.output))
        g = x.grad.clone()
        x.grad = None
        want = torch.softmax(x * 2, -1).sum()
        want.backward()
        torch.testing.assert_close(y, want)
        torch.testing.assert_close(g, x.grad)

    def test_registered(self):
        import torch._dynamo
        self.assertIn("kfuse", torch._dynamo.list_backends(exclude_tags=()))
        self.assertIs(torch._dynamo.lookup_backend("kfuse"), kt.backend)

    def test_translation_refusals(self):
        cases = [(lambda x: torch.div(x, 3, rounding_mode="floor"), "no kfuse translation"),
                 (lambda x: x.clamp(min=torch.zeros(1)), "no kfuse translation")]
        for f, why in cases:
            r = kt.explain(f, self.rnd(4), reference=True)
            self.assertTrue(any(why in w for _, w in r.fallbacks), (r.fallbacks, why))
        # CUDA-only without reference mode
        r = kt.explain(lambda x: torch.exp(x), self.rnd(4))
        self.assertEqual(list(r.fallbacks.values()), [1])
        self.assertIn("a cpu tensor", list(r.fallbacks)[0][1])


@unittest.skipUnless(HAVE_GPU, "needs a CUDA GPU")
class Cuda(unittest.TestCase):
    def setUp(self):
        torch._dynamo.reset()

    def check(self, f, *args, mode=None, rtol=1e-5, atol=1e-6):
        want = f(*args)
        c = torch.compile(f, backend="kfuse", mode=mode) if mode else \
            torch.compile(f, backend="kfuse")
        for _ in range(3):  # reduce-overhead: warm-up, record, replay
            got = c(*args)
        torch.cuda.synchronize()
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, tuple) else (got,)
        for w, g in zip(want, got):
            torch.testing.assert_close(g, w, rtol=rtol, atol=atol, equal_nan=True)

    def test_functions(self):
        d = "cuda"
        x = torch.randn(64, 256, device=d)
        self.check(f_promote, torch.randint(-3, 4, (64, 256), device=d, dtype=torch.int32), x)
        self.check(f_sign, x)
        self.check(f_block, x, torch.randn(256, device=d), torch.randn(256, device=d),
                   rtol=1e-4, atol=1e-5)
        self.check(f_views, torch.randn(3, 16, device=d).t(), torch.randn(3, device=d))
        self.check(f_fallback, x)

    def test_reduce_overhead(self):
        from torch._dynamo.utils import counters
        counters.clear()
        x = torch.randn(128, 512, device="cuda")
        self.check(lambda x: torch.softmax(x * 2, -1) + 1, x, mode="reduce-overhead")
        self.assertEqual(counters["inductor"]["cudagraph_skips"], 0)
        from torch._inductor import cudagraph_trees
        self.assertIsNotNone(cudagraph_trees.get_manager(0, create_if_none_exists=False))

    def test_training_and_explain(self):
        m = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.GELU(),
                                torch.nn.LayerNorm(64)).cuda()
        x = torch.randn(32, 64, device="cuda")
        ref = [p.detach().clone() for p in m.parameters()]
        m(x).square().mean().backward()
        grads = [p.grad.clone() for p in m.parameters()]
        m.zero_grad()
        torch.compile(m, backend="kfuse")(x).square().mean().backward()
        for g, p in zip(grads, m.parameters()):
            torch.testing.assert_close(p.grad, g, rtol=1e-4, atol=1e-5)
        self.assertTrue(all(torch.equal(a, b) for a, b in zip(ref, m.parameters())))
        r = kt.explain(m, x)
        self.assertGreaterEqual(sum(len(g.partitions) for g in r.graphs), 1)
        print(r)


if __name__ == "__main__":
    r = unittest.main(verbosity=2, exit=False).result
    sys.exit(0 if r.wasSuccessful() else 1)
