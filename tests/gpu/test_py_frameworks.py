"""test_py_frameworks.py - plans run from Python on a GPU with tensors of
torch (the data_ptr fast path, and DLPack), CuPy (DLPack, and
__cuda_array_interface__ alone), JAX (DLPack, as inputs), each checked
against the CPU reference on numpy; mixed frameworks in one run; a side
torch stream; bf16; and the C library's refusals (a strided tensor, a CPU
tensor, a read-only output). Exits 77 (skipped) without torch or a GPU;
a framework that is not installed skips its own tests."""
import os
import sys
import unittest

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX: leave memory to torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

try:
    import torch
    HAVE_GPU = torch.cuda.is_available()
except ImportError:
    HAVE_GPU = False
if not HAVE_GPU:
    print("test_py_frameworks: skipped (needs torch and a CUDA GPU)")
    sys.exit(77)

import numpy as np  # noqa: E402

import kfuse  # noqa: E402


def optional(name):
    try:
        return __import__(name)
    except ImportError:
        return None


cupy = optional("cupy")
jax = optional("jax")


class DLOnly:
    """Only the DLPack protocol of another tensor (forces the generic path)."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, **kw):
        return self.t.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


class CAIOnly:
    def __init__(self, t, readonly=False):
        cai = dict(t.__cuda_array_interface__)
        cai["data"] = (cai["data"][0], readonly)
        self.__cuda_array_interface__ = cai


SHAPE = (64, 257)


def softmax_graph(dtype="f32"):
    g = kfuse.Graph()
    x = g.input("x", dtype, SHAPE)
    g.output(g.softmax(x * 2.0, -1))
    return g


class Frameworks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.g = softmax_graph()
        cls.plan = cls.g.compile()
        cls.a = np.random.default_rng(0).normal(size=SHAPE).astype(np.float32)
        (cls.want,) = cls.g.run_reference(cls.a)

    def check(self, y):
        if hasattr(y, "cpu"):
            y = y.cpu().numpy()
        elif cupy is not None and isinstance(y, cupy.ndarray):
            y = cupy.asnumpy(y)
        np.testing.assert_allclose(np.asarray(y), self.want, rtol=1e-5, atol=1e-7)

    def torch_x(self):
        return torch.from_numpy(self.a).cuda()

    def test_torch_fast_path(self):
        (y,) = self.plan(self.torch_x())
        torch.cuda.synchronize()
        self.check(y)

    def test_torch_bound_and_side_stream(self):
        x = self.torch_x()
        y = torch.empty_like(x)
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            self.plan.bind([x], [y]).run()
        s.synchronize()
        self.check(y)

    def test_torch_through_dlpack(self):
        x = self.torch_x()
        y = torch.full_like(x, float("nan"))
        self.plan.run([DLOnly(x)], [DLOnly(y)])
        torch.cuda.synchronize()
        self.check(y)

    def test_refusals(self):
        x = self.torch_x()
        y = torch.empty_like(x)
        strided = torch.empty(SHAPE[1], SHAPE[0], device="cuda").t()
        with self.assertRaisesRegex(kfuse.KfuseError, r"inputs\[0\]: strided DLPack tensor"):
            self.plan.run([DLOnly(strided)], [DLOnly(y)])
        with self.assertRaisesRegex(kfuse.KfuseError, "DLPack device type 1 is not a CUDA"):
            self.plan.run([DLOnly(x.cpu())], [DLOnly(y)])
        with self.assertRaisesRegex(kfuse.KfuseError, r"inputs\[0\]: not contiguous"):
            self.plan.run([strided], [y])  # the torch fast path's own check

    @unittest.skipIf(cupy is None, "CuPy is not installed")
    def test_cupy(self):
        x = cupy.asarray(self.a)
        (y,) = self.plan(x)  # outputs allocated with CuPy
        self.assertIsInstance(y, cupy.ndarray)
        cupy.cuda.get_current_stream().synchronize()
        self.check(y)
        y2 = cupy.empty_like(x)
        self.plan.run([CAIOnly(x)], [CAIOnly(y2)])
        cupy.cuda.get_current_stream().synchronize()
        self.check(y2)
        with self.assertRaisesRegex(kfuse.KfuseError, r"outputs\[0\]: the DLPack tensor is "
                                    "read-only"):
            self.plan.run([CAIOnly(x)], [CAIOnly(y2, readonly=True)])

    @unittest.skipIf(cupy is None, "CuPy is not installed")
    def test_mixed_torch_in_cupy_out(self):
        x = self.torch_x()
        y = cupy.empty(SHAPE, dtype=cupy.float32)
        self.plan.run([x], [y])
        torch.cuda.synchronize()
        self.check(y)

    @unittest.skipIf(jax is None, "JAX is not installed")
    def test_jax_input(self):
        gpus = [d for d in jax.devices() if d.platform == "gpu"]
        if not gpus:
            self.skipTest("JAX sees no GPU")
        x = jax.device_put(self.a, gpus[0])
        x.block_until_ready()
        y = torch.empty(SHAPE, device="cuda")
        self.plan.run([x], [y])
        torch.cuda.synchronize()
        self.check(y)

    def test_bf16(self):
        g = softmax_graph("bf16")
        plan = g.compile()
        x = self.torch_x().to(torch.bfloat16)
        (y,) = plan(x)
        want = torch.softmax(x.float() * 2.0, -1)
        torch.testing.assert_close(y.float(), want, rtol=2e-2, atol=2e-3)
        (ref,) = g.run_reference(kfuse.to_bf16(x.float().cpu().numpy()))
        bits = ref.view(np.uint16) if ref.dtype != np.uint16 else ref
        np.testing.assert_allclose(y.float().cpu().numpy(), kfuse.from_bf16(bits),
                                   rtol=1e-2, atol=1e-3)


if __name__ == "__main__":
    r = unittest.main(verbosity=2, exit=False).result
    sys.exit(0 if r.wasSuccessful() else 1)
