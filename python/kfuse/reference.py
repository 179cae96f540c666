"""reference.py - the CPU reference interpreter (kf_graph_run_reference) on
numpy arrays, and bf16 conversions for numpy, which has no bf16 dtype.

Inputs bind the graph's inputs in order. A numpy array must have the
input's dtype exactly (a wrong one is an error, never a silent cast); lists
and numbers are converted to it. bf16 values are ml_dtypes.bfloat16 arrays
when ml_dtypes is installed, else uint16 arrays of the raw bits; uint16
bits are taken as bf16 inputs either way (to_bf16 / from_bf16 convert).
Outputs come back as new arrays of the outputs' dtypes. numpy is imported
on first use, not with kfuse.

check(graph, inputs, outputs) compares outputs computed anywhere (a GPU
run copied to the host) with the reference within its per-element error
bound (kf_graph_run_reference_bounded and kf_compare, the checker that
`kfuse run --check` and the GPU suites use: docs/reference.md).
"""
from . import _native as N
from ._native import KfuseError, _HostTensor
from .tensors import numpy_dtype

_lib = N.lib


def to_bf16(a):
    """float32 values as bf16 bits (uint16), rounded to nearest even as
    kfuse rounds (kf_float_to_bf16); NaN stays NaN."""
    import numpy as np
    u = np.asarray(a, dtype=np.float32, order="C").view(np.uint32)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(u.view(np.float32))
    return np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), r)


def from_bf16(bits):
    """bf16 bits (uint16, or ml_dtypes.bfloat16) as float32, exactly."""
    import numpy as np
    b = np.asarray(bits, order="C").view(np.uint16)
    return (b.astype(np.uint32) << 16).view(np.float32)


def _as_input(i, x, dtype):
    import numpy as np
    want = numpy_dtype(dtype)
    if isinstance(x, np.ndarray):
        if dtype == "bf16" and x.dtype == np.uint16:  # raw bits (to_bf16), always taken
            return np.asarray(x, order="C").view(want)
        if x.dtype != want:
            raise KfuseError("run_reference: inputs[%d]: numpy dtype %s, the graph's input is %s "
                             "(numpy %s)" % (i, x.dtype, dtype, want), "ERR_INVALID_ARG")
        return np.asarray(x, order="C")
    if dtype == "bf16" and want == np.uint16:
        return to_bf16(x)
    # asarray, not ascontiguousarray: that one makes a rank-0 array rank 1
    return np.asarray(x, dtype=want, order="C")


def _host(a, dtype):
    t = _HostTensor()
    t.data = a.ctypes.data if a.size else None
    t.dtype = N.dtype_code(dtype)
    t.rank = a.ndim
    if a.ndim > N.KF_MAX_RANK:
        raise KfuseError("run_reference: rank %d is more than %d" % (a.ndim, N.KF_MAX_RANK),
                         "ERR_INVALID_ARG")
    for k, s in enumerate(a.shape):
        t.shape[k] = s
    return t


def run(graph, inputs):
    import numpy as np
    specs = [(v.dtype, v.shape) for v in graph.inputs]
    if len(inputs) != len(specs):
        raise KfuseError("run_reference: %d inputs given, the graph has %d"
                         % (len(inputs), len(specs)), "ERR_INVALID_ARG")
    arrays = [_as_input(i, x, dt) for i, (x, (dt, _)) in enumerate(zip(inputs, specs))]
    outs = [np.empty(v.shape, dtype=numpy_dtype(v.dtype)) for v in graph.outputs]
    tin = (_HostTensor * max(len(arrays), 1))(*[_host(a, dt) for a, (dt, _) in
                                                zip(arrays, specs)])
    tout = (_HostTensor * max(len(outs), 1))(*[_host(o, v.dtype) for o, v in
                                               zip(outs, graph.outputs)])
    st = _lib.kf_graph_run_reference(graph.h, tin, len(arrays), tout, len(outs))
    if st != 0:
        graph._raise("kf_graph_run_reference", st)
    return outs


def check(graph, inputs, outputs, rtol=0.0, atol=0.0):
    """Each output against the CPU reference on these inputs, within the
    reference's error bound of each element: |got - want| <= bound (+ a
    small slack) + atol + rtol |want|, NaN and infinities exactly. outputs
    take what inputs take (numpy arrays of the dtype, or anything numpy can
    convert). Returns one dict per output: ok, elements, mismatches,
    special_mismatches, unbounded, worst (flat index, -1: none), worst_got,
    worst_want, worst_bound, worst_allowed, max_abs_err, max_ratio,
    max_rel_err."""
    import ctypes
    import numpy as np
    specs = [(v.dtype, v.shape) for v in graph.inputs]
    if len(inputs) != len(specs) or len(outputs) != len(graph.outputs):
        raise KfuseError("check: the graph has %d inputs and %d outputs, got %d and %d"
                         % (len(specs), len(graph.outputs), len(inputs), len(outputs)),
                         "ERR_INVALID_ARG")
    def shaped(what, k, x, dtype, shape):  # flat buffers of the right size are taken
        a = _as_input(k, x, dtype)
        if tuple(a.shape) != tuple(shape) and a.size == int(np.prod(shape)):
            a = a.reshape(shape)
        if tuple(a.shape) != tuple(shape):
            raise KfuseError("check: %s[%d]: shape %s, the graph's is %s%s"
                             % (what, k, list(a.shape), dtype, list(shape)), "ERR_INVALID_ARG")
        return a
    arrays = [shaped("inputs", i, x, dt, sh) for i, (x, (dt, sh)) in
              enumerate(zip(inputs, specs))]
    got = [shaped("outputs", j, y, v.dtype, v.shape) for j, (y, v) in
           enumerate(zip(outputs, graph.outputs))]
    want = [np.empty(v.shape, dtype=numpy_dtype(v.dtype)) for v in graph.outputs]
    bounds = [np.empty(max(int(np.prod(v.shape)), 1), dtype=np.float64) for v in graph.outputs]
    dp = ctypes.POINTER(ctypes.c_double)
    tin = (_HostTensor * max(len(arrays), 1))(*[_host(a, dt) for a, (dt, _) in
                                                zip(arrays, specs)])
    tout = (_HostTensor * max(len(want), 1))(*[_host(o, v.dtype) for o, v in
                                               zip(want, graph.outputs)])
    tb = (dp * max(len(bounds), 1))(*[b.ctypes.data_as(dp) for b in bounds])
    st = _lib.kf_graph_run_reference_bounded(graph.h, tin, len(arrays), tout, tb, len(want))
    if st != 0:
        graph._raise("kf_graph_run_reference_bounded", st)
    results = []
    for j, v in enumerate(graph.outputs):
        r = N._CompareResult()
        g, w = _host(got[j], v.dtype), _host(want[j], v.dtype)
        st = _lib.kf_compare(ctypes.byref(g), ctypes.byref(w), bounds[j].ctypes.data_as(dp),
                             float(rtol), float(atol), ctypes.byref(r))
        if st != 0:
            raise KfuseError("check: kf_compare: %s" % _lib.kf_status_str(st).decode(),
                             "ERR_INVALID_ARG")
        results.append({f: getattr(r, f) for f, _ in N._CompareResult._fields_})
    return results
