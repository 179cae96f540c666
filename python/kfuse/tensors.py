"""tensors.py - runs a plan on tensors of any framework: each is described
to the C library as a DLManagedTensorVersioned (kf_plan_run_dlpack), which
checks its device, dtype, shape, strides and read-only flag.

- An object with `__dlpack__` (torch, CuPy, JAX, NumPy) is asked for a
  capsule (DLPack 1.x when it can give one, else the legacy struct, which
  is rewrapped) with `stream=` the stream the run goes on, so the producer
  orders its own work before it (the DLPack protocol).
- An object with only `__cuda_array_interface__` (Numba, older CuPy) is
  described from that dict: its device is asked of the driver
  (cuPointerGetAttribute), byte strides become element strides, and when
  it names a stream other than the run's, that stream is synchronized
  first (the interface's rule for consumers).
The capsules are kept until the call returns and then dropped: the
producer's capsule destructor frees what it made; kfuse only borrowed.
Neither numpy nor torch is imported here.
"""
import ctypes
import sys

from . import _native as N
from ._native import KfuseError

_lib = N.lib
_P = ctypes.c_void_p
KDL_CPU, KDL_CUDA, KDL_CUDA_MANAGED = 1, 2, 13
KDL_INT, KDL_UINT, KDL_FLOAT, KDL_BFLOAT, KDL_BOOL = 0, 1, 2, 4, 6
READ_ONLY = 1


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", _P), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", _P), ("deleter", _P)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", _P),
                ("deleter", _P), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


_capi = ctypes.pythonapi
_capi.PyCapsule_GetName.restype = ctypes.c_char_p
_capi.PyCapsule_GetName.argtypes = [ctypes.py_object]
_capi.PyCapsule_GetPointer.restype = _P
_capi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

# __cuda_array_interface__ typestrs (kind and size) as DLPack dtypes
_TYPESTR = {("f", 2): (KDL_FLOAT, 16), ("f", 4): (KDL_FLOAT, 32), ("f", 8): (KDL_FLOAT, 64),
            ("i", 4): (KDL_INT, 32), ("i", 8): (KDL_INT, 64), ("b", 1): (KDL_BOOL, 8)}


def _framework(t):
    return type(t).__module__.split(".")[0]


def default_stream(tensors):
    """The current stream of the tensors' framework (torch, CuPy), else 0."""
    for t in tensors:
        fw = _framework(t)
        if fw == "torch":
            return sys.modules["torch"].cuda.current_stream().cuda_stream
        if fw == "cupy":
            return sys.modules["cupy"].cuda.get_current_stream().ptr
    return 0


def _from_capsule(cap, keep):
    """The DLManagedTensorVersioned of a DLPack capsule (legacy ones rewrapped)."""
    name = _capi.PyCapsule_GetName(cap)
    ptr = _capi.PyCapsule_GetPointer(cap, name)
    if name == b"dltensor_versioned":
        return ptr
    if name != b"dltensor":
        raise KfuseError("run: a DLPack capsule named %r (used already?)" % name,
                         "ERR_INVALID_ARG")
    legacy = DLManagedTensor.from_address(ptr)
    m = DLManagedTensorVersioned(1, 0, None, None, 0, legacy.dl_tensor)
    keep.append(m)
    return ctypes.addressof(m)


def _dlpack(t, stream, keep):
    dev = t.__dlpack_device__() if hasattr(t, "__dlpack_device__") else (None, None)
    kw = {}
    if dev[0] in (KDL_CUDA, KDL_CUDA_MANAGED):
        kw["stream"] = stream if stream else 1  # 1: the legacy default stream
    try:
        cap = t.__dlpack__(max_version=(1, 0), **kw)
    except TypeError:  # a producer older than DLPack 1.0
        cap = t.__dlpack__(**kw)
    keep.append(cap)
    return _from_capsule(cap, keep)


_cuda = None


def _driver():
    global _cuda
    if _cuda is None:
        try:
            _cuda = ctypes.CDLL("libcuda.so.1")
        except OSError:
            _cuda = False
    return _cuda


def _pointer_device(ptr):
    """The ordinal of the GPU holding ptr (0 when the driver cannot tell:
    kf_plan_run's own device-memory check then has the last word)."""
    cu = _driver()
    ordinal = ctypes.c_int(0)
    if cu and ptr:
        # 9: CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
        cu.cuPointerGetAttribute(ctypes.byref(ordinal), 9, ctypes.c_uint64(ptr))
    return ordinal.value


def _cai(t, what, i, stream, keep):
    cai = t.__cuda_array_interface__
    ptr, readonly = cai["data"]
    typestr = cai["typestr"]
    dt = _TYPESTR.get((typestr[1:2], int(typestr[2:] or 0)))
    if dt is None or (typestr[0] == ">" and dt[1] > 8):
        raise KfuseError("run: %s[%d]: __cuda_array_interface__ typestr %r has no kfuse dtype"
                         % (what, i, typestr), "ERR_INVALID_ARG")
    shape = [int(s) for s in cai["shape"]]
    n = len(shape)
    sh = (ctypes.c_int64 * max(n, 1))(*shape)
    st = None
    if cai.get("strides") is not None:
        size = dt[1] // 8
        if any(s % size for s in cai["strides"]):
            raise KfuseError("run: %s[%d]: strides %s are not whole elements"
                             % (what, i, list(cai["strides"])), "ERR_INVALID_ARG")
        st = (ctypes.c_int64 * max(n, 1))(*[s // size for s in cai["strides"]])
    src = cai.get("stream")
    if src is not None and src != (stream if stream else 1) and _driver():
        _driver().cuStreamSynchronize(_P(0 if src == 1 else src))
    tensor = DLTensor(ptr, DLDevice(KDL_CUDA, _pointer_device(ptr)), n,
                      DLDataType(dt[0], dt[1], 1), sh, st, 0)
    m = DLManagedTensorVersioned(1, 0, None, None, READ_ONLY if readonly else 0, tensor)
    keep += [sh, st, m]
    return ctypes.addressof(m)


def _describe(what, i, t, stream, keep):
    if hasattr(t, "__dlpack__"):
        return _dlpack(t, stream, keep)
    if hasattr(t, "__cuda_array_interface__"):
        return _cai(t, what, i, stream, keep)
    raise KfuseError("run: %s[%d]: a %s has neither __dlpack__ nor __cuda_array_interface__"
                     % (what, i, type(t).__name__), "ERR_INVALID_ARG")


def run_generic(plan, inputs, outputs, stream):
    """One kf_plan_run_dlpack call on tensors of any framework."""
    if stream is None:
        stream = default_stream(list(inputs) + list(outputs))
    keep = []
    pin = (_P * max(len(inputs), 1))(*[_describe("inputs", i, t, stream, keep)
                                       for i, t in enumerate(inputs)])
    pout = (_P * max(len(outputs), 1))(*[_describe("outputs", i, t, stream, keep)
                                         for i, t in enumerate(outputs)])
    st = _lib.kf_plan_run_dlpack(plan.h, pin, len(inputs), pout, len(outputs), stream)
    del keep  # the capsules' destructors free what their producers made
    if st != 0:
        raise plan._error("kf_plan_run_dlpack", st)


def numpy_dtype(name):
    """The numpy dtype of a kfuse dtype; bf16 is ml_dtypes.bfloat16 when
    ml_dtypes is installed, else uint16 (the raw bits)."""
    import numpy as np
    if name == "bf16":
        try:
            import ml_dtypes
            return np.dtype(ml_dtypes.bfloat16)
        except ImportError:
            return np.dtype(np.uint16)
    return np.dtype({"f16": np.float16, "f32": np.float32, "f64": np.float64,
                     "i32": np.int32, "i64": np.int64, "bool": np.bool_}[name])
