"""test_py_tensors.py - how Plan.run describes tensors that are not torch's
to the C library, checked without a GPU: DLPack capsules (versioned, and
legacy ones rewrapped) and __cuda_array_interface__ dicts become the
DLManagedTensorVersioned structs that kf_plan_run_dlpack reads, field by
field; objects with neither are refused; without a driver the run reaches
kf_plan_run_dlpack and fails there with its no-device message.
tests/gpu/test_py_frameworks.py runs the same paths on a GPU."""
import ctypes
import unittest

from kfuse_test_util import kfuse, np

from kfuse import tensors as T


def _have_driver():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


class CAI:
    """Only __cuda_array_interface__, as Numba's device arrays."""

    def __init__(self, ptr, shape, typestr="<f4", strides=None, readonly=False, stream=None):
        self.__cuda_array_interface__ = {"data": (ptr, readonly), "shape": tuple(shape),
                                         "typestr": typestr, "strides": strides,
                                         "version": 3}
        if stream is not None:
            self.__cuda_array_interface__["stream"] = stream


def tensor_of(addr):
    return T.DLManagedTensorVersioned.from_address(addr)


class Describe(unittest.TestCase):
    def test_dlpack_versioned_and_legacy(self):
        a = np.arange(12, dtype=np.float32).reshape(3, 4)[:, 1:]
        keep = []
        m = tensor_of(T._dlpack(a, 0, keep))  # numpy >= 2.1 gives DLPack 1.x
        t = m.dl_tensor
        self.assertEqual((m.major, t.ndim, t.device.device_type), (1, 2, T.KDL_CPU))
        self.assertEqual((t.dtype.code, t.dtype.bits, t.dtype.lanes), (T.KDL_FLOAT, 32, 1))
        self.assertEqual((t.shape[0], t.shape[1]), (3, 3))
        self.assertEqual((t.strides[0], t.strides[1]), (4, 1))
        self.assertEqual(t.data + t.byte_offset, a.ctypes.data)
        cap = a.__dlpack__()  # legacy capsule: rewrapped as versioned
        m2 = tensor_of(T._from_capsule(cap, keep))
        self.assertEqual(m2.major, 1)
        self.assertEqual(m2.flags, 0)
        self.assertEqual(m2.dl_tensor.data + m2.dl_tensor.byte_offset, a.ctypes.data)
        self.assertEqual(m2.dl_tensor.shape[1], 3)
        ro = np.zeros(4, np.float32)
        ro.flags.writeable = False
        self.assertEqual(tensor_of(T._dlpack(ro, 0, keep)).flags & T.READ_ONLY, T.READ_ONLY)

    def test_used_capsule_is_refused(self):
        a = np.zeros(3, np.float32)
        cap = a.__dlpack__()
        np.from_dlpack(type("W", (), {"__dlpack__": lambda s, **k: cap,
                                      "__dlpack_device__": lambda s: (1, 0)})())
        with self.assertRaisesRegex(kfuse.KfuseError, "used already"):
            T._from_capsule(cap, [])

    def test_cuda_array_interface(self):
        keep = []
        m = tensor_of(T._cai(CAI(0x7000, (2, 3), "<f8", strides=(48, 8)), "inputs", 0, 0, keep))
        t = m.dl_tensor
        self.assertEqual((t.data, t.ndim, t.device.device_type), (0x7000, 2, T.KDL_CUDA))
        self.assertEqual((t.dtype.code, t.dtype.bits), (T.KDL_FLOAT, 64))
        self.assertEqual([t.strides[0], t.strides[1]], [6, 1])  # bytes to elements
        self.assertEqual(m.flags, 0)
        m = tensor_of(T._cai(CAI(0x7000, (5,), "|b1", readonly=True), "outputs", 0, 0, keep))
        self.assertEqual((m.dl_tensor.dtype.code, m.flags), (T.KDL_BOOL, T.READ_ONLY))
        self.assertFalse(m.dl_tensor.strides)
        for ts, want in (("<u2", "typestr '<u2' has no kfuse dtype"),
                         ("<c8", "typestr '<c8' has no kfuse dtype")):
            with self.assertRaisesRegex(kfuse.KfuseError, want):
                T._cai(CAI(0x7000, (2,), ts), "inputs", 1, 0, keep)
        with self.assertRaisesRegex(kfuse.KfuseError, r"inputs\[0\]: strides \[6, 4\] are not "
                                    "whole elements"):
            T._cai(CAI(0x7000, (2, 2), "<f4", strides=(6, 4)), "inputs", 0, 0, keep)


class Run(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        g = kfuse.Graph()
        g.output(g.exp(g.input("x", "f32", [4])))
        cls.plan = g.compile(arch="sm_90")

    def test_neither_protocol(self):
        with self.assertRaisesRegex(kfuse.KfuseError, r"run: inputs\[0\]: a list has neither "
                                    "__dlpack__ nor __cuda_array_interface__"):
            self.plan.run([[1.0, 2.0, 3.0, 4.0]], [CAI(0x8000, (4,))])

    def test_counts_first(self):
        with self.assertRaisesRegex(kfuse.KfuseError, "2 inputs and 1 outputs given"):
            self.plan.run([CAI(0x8000, (4,))] * 2, [CAI(0x9000, (4,))])

    def test_reaches_kf_plan_run_dlpack(self):
        if _have_driver():
            self.skipTest("the no-device message needs a machine without a driver")
        for ins, outs in (([CAI(0x8000, (4,))], [CAI(0x9000, (4,))]),
                          ([np.zeros(4, np.float32)], [np.zeros(4, np.float32)])):
            with self.assertRaises(kfuse.KfuseError) as e:
                self.plan.run(ins, outs)
            self.assertEqual(e.exception.status, "ERR_NO_DEVICE")
            self.assertIn("kf_plan_run_dlpack", str(e.exception))
            self.assertIn("libcuda.so.1 not found", str(e.exception))

    def test_default_stream(self):
        self.assertEqual(T.default_stream([np.zeros(1), CAI(0, (1,))]), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
