"""test_python_binding.py - python/kfuse.py on CI without a GPU or torch:
compiling a YAML graph for sm_90 through the shared library, the plan's
input and output specs, the Python-side checks of a run (counts, dtype,
shape, contiguity, the "new"/"always"/"never" policy) and the no-device
error of kf_plan_run_ptrs. Run by CTest with KFUSE_LIB set to the build's
libkfuse.so; torch is never imported (tensors are stand-ins)."""
import ctypes
import os
import sys
import unittest

_root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(_root, "python"))

import kfuse  # noqa: E402  (after the path)


def _have_driver():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


class FakeTensor:
    """What Plan.run reads of a torch tensor."""

    def __init__(self, dtype, shape, ptr, contiguous=True):
        self.dtype = "torch." + dtype
        self.shape = tuple(shape)
        self.ptr = ptr
        self.contiguous = contiguous
        self.reads = 0

    def data_ptr(self):
        return self.ptr

    def is_contiguous(self):
        self.reads += 1
        return self.contiguous


def graph(name):
    return os.path.join(_root, name)


class Binding(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.plan = kfuse.compile_yaml(graph("examples/graphs/softmax.yaml"), arch="sm_90")

    def tensors(self, ptr=0x10000):
        x = FakeTensor("float32", (8192, 8192), ptr)
        y = FakeTensor("float32", (8192, 8192), ptr + (1 << 28))
        return x, y

    def test_specs(self):
        self.assertEqual(self.plan.inputs, [("f32", (8192, 8192))])
        self.assertEqual(self.plan.outputs, [("f32", (8192, 8192))])
        self.assertGreaterEqual(self.plan.launches, 1)

    def test_many_tensors_specs(self):
        p = kfuse.compile_yaml(graph("bench/graphs/axpby200.yaml"), arch="sm_90")
        self.assertEqual(len(p.inputs), 400)
        self.assertEqual(len(p.outputs), 200)
        self.assertEqual(p.inputs[0], ("f32", (16032,)))
        self.assertEqual(p.inputs[1], ("f32", (16032,)))
        self.assertEqual(p.inputs[3], ("f32", (240416,)))
        self.assertTrue(all(dt == "f32" and len(sh) == 1 for dt, sh in p.outputs))

    def test_no_device(self):
        if _have_driver():
            self.skipTest("a CUDA driver is present")
        x, y = self.tensors()
        with self.assertRaises(kfuse.KfuseError) as e:
            self.plan.run([x], [y], stream=0)
        msg = str(e.exception)
        self.assertIn("kf_plan_run_ptrs", msg)
        self.assertIn("libcuda.so.1 not found", msg)
        self.assertEqual(list(self.plan._pin), [0x10000])
        self.assertEqual(list(self.plan._pout), [0x10000 + (1 << 28)])

    def test_counts(self):
        x, y = self.tensors()
        with self.assertRaisesRegex(kfuse.KfuseError,
                                    "2 inputs and 1 outputs given, the plan has 1 and 1"):
            self.plan.run([x, x], [y], stream=0)

    def test_dtype_shape_contiguity(self):
        x, y = self.tensors()
        bad = FakeTensor("float16", x.shape, x.ptr)
        with self.assertRaisesRegex(kfuse.KfuseError,
                                    r"inputs\[0\]: dtype torch.float16, the plan expects "
                                    "torch.float32"):
            self.plan.run([bad], [y], stream=0)
        bad = FakeTensor("float32", (8192, 4096), y.ptr)
        with self.assertRaisesRegex(kfuse.KfuseError,
                                    r"outputs\[0\]: shape \[8192, 4096\], the plan expects "
                                    r"\[8192, 8192\]"):
            self.plan.run([x], [bad], stream=0)
        bad = FakeTensor("float32", x.shape, x.ptr, contiguous=False)
        with self.assertRaisesRegex(kfuse.KfuseError, r"inputs\[0\]: not contiguous"):
            self.plan.run([bad], [y], stream=0)

    def test_check_policy(self):
        # how often the tensors are looked at (is_contiguous), per policy,
        # over three runs with the same or moving addresses; without a
        # device each run then fails in C, which forgets nothing
        if _have_driver():
            self.skipTest("counted where runs fail for want of a driver")
        p = kfuse.compile_yaml(graph("examples/graphs/softmax.yaml"), arch="sm_90")
        self.assertEqual(p.check, os.environ.get("KFUSE_CHECK") or "new")
        x, y = self.tensors()
        for policy, same, want in (("never", True, 0), ("always", True, 3),
                                   ("new", True, 1), ("new", False, 3)):
            p.check = policy
            p._checked = None
            x.reads = 0
            for _ in range(3):
                if not same:
                    x.ptr += 256
                with self.assertRaises(kfuse.KfuseError):
                    p.run([x], [y], stream=0)
            self.assertEqual(x.reads, want, policy + (" same" if same else " moving"))

    def test_bind(self):
        x, y = self.tensors()
        with self.assertRaisesRegex(kfuse.KfuseError,
                                    "bind: 1 inputs and 2 outputs given, the plan has 1 and 1"):
            self.plan.bind([x], [y, y])
        bad = FakeTensor("float16", x.shape, x.ptr)
        with self.assertRaisesRegex(kfuse.KfuseError, r"inputs\[0\]: dtype torch.float16"):
            self.plan.bind([bad], [y])
        b = self.plan.bind([x], [y])
        self.assertEqual(list(b._pin), [0x10000])
        self.assertEqual(list(b._pout), [0x10000 + (1 << 28)])
        x.ptr += 256  # a bound run keeps the address taken at bind time
        reads = x.reads
        if not _have_driver():
            with self.assertRaisesRegex(kfuse.KfuseError, "libcuda.so.1 not found"):
                b.run(stream=0)
        self.assertEqual(list(b._pin), [0x10000])
        self.assertEqual(x.reads, reads)  # nothing looked at again

    def test_bad_policy(self):
        with self.assertRaisesRegex(kfuse.KfuseError, "check must be one of"):
            kfuse.compile_yaml(graph("examples/graphs/softmax.yaml"), arch="sm_90",
                               check="sometimes")

    def test_options_struct(self):
        # the ctypes mirror of kf_options is the C struct: kf_options_init
        # fills every field, the last (pdl) included, and the defaults come
        # back as the header gives them
        o = kfuse._Options()
        kfuse._lib.kf_options_init(ctypes.byref(o))
        self.assertEqual((o.fusion, o.horizontal, o.mode, o.streams, o.pdl),
                         (os.environ.get("KFUSE_NO_FUSION") != "1",
                          os.environ.get("KFUSE_NO_HORIZONTAL") != "1", 0, 4,
                          os.environ.get("KFUSE_PDL") != "0"))
        self.assertAlmostEqual(o.occupancy_drop, 0.20)
        kfuse.compile_yaml(graph("examples/graphs/softmax.yaml"), arch="sm_90", pdl=False)

    def test_check_yaml(self):
        # a kernel emulated in f32 (column sums in row order, then one f32
        # division each) passes the reference's error bound; one wrong
        # element fails it and is named
        import array
        import random
        import struct
        import tempfile
        f32 = lambda v: struct.unpack("f", struct.pack("f", v))[0]  # noqa: E731
        rows, cols = 64, 32
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            f.write("kfuse: 1\nname: ratio\ninputs:\n  x: {dtype: f32, shape: [%d, %d]}\n"
                    "nodes:\n  - {name: s, op: sum, args: [x], axes: [0], keepdim: true}\n"
                    "  - {name: y, op: div, args: [x, s]}\noutputs: [y]\n" % (rows, cols))
        try:
            rnd = random.Random(3)
            x = array.array("f", [rnd.uniform(-1, 1) for _ in range(rows * cols)])
            s = [0.0] * cols
            for r in range(rows):
                for c in range(cols):
                    s[c] = f32(s[c] + x[r * cols + c])
            y = array.array("f", [x[k] / s[k % cols] for k in range(rows * cols)])
            (res,) = kfuse.check_yaml(f.name, [x], [y])
            self.assertTrue(res["ok"], res)
            self.assertEqual(res["elements"], rows * cols)
            y[77] = y[77] * 1.01
            (res,) = kfuse.check_yaml(f.name, [x], [y])
            self.assertFalse(res["ok"])
            self.assertEqual((res["mismatches"], res["worst"]), (1, 77))
            with self.assertRaisesRegex(kfuse.KfuseError, r"outputs\[0\]: shape \[3\]"):
                kfuse.check_yaml(f.name, [x], [array.array("f", [0.0, 1.0, 2.0])])
            with self.assertRaisesRegex(kfuse.KfuseError, "1 inputs and 1 outputs, got 0"):
                kfuse.check_yaml(f.name, [], [y])
        finally:
            os.unlink(f.name)

    def test_torch_not_imported(self):
        self.assertNotIn("torch", sys.modules)


if __name__ == "__main__":
    unittest.main(verbosity=2)
