"""_native.py - finds and loads libkfuse (and the NVRTC it links), declares
the ctypes signatures of kfuse.h, and turns a kf_status into KfuseError.

Where libkfuse comes from, first match wins:
  1. KFUSE_LIB (a path: for a build tree under test, or a sanitized build);
  2. the library installed inside this package (`pip install .`);
  3. the repository's build folder next to python/ (KFUSE_BUILD, default
     "build"): a checkout used in place, as the benchmarks do;
  4. the system loader (an installed libkfuse.so.0).
libkfuse needs libnvrtc.so.N (a DT_NEEDED entry). The wheel's copy carries a
RUNPATH to the toolkit it was built against and to where the
nvidia-cuda-nvrtc wheel puts it; when the loader still cannot find NVRTC,
it is looked for here (the nvidia wheel, CUDA_HOME/CUDA_PATH,
/usr/local/cuda*) and loaded first, globally, so that the dynamic loader
finds it by its soname. No environment variable is needed for either.
"""
import ctypes
import glob
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))

KF_MAX_RANK = 8
DTYPES = ["f16", "bf16", "f32", "f64", "i32", "i64", "bool"]
DTYPE_SIZES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i32": 4, "i64": 8, "bool": 1}


class KfuseError(RuntimeError):
    """A failing kfuse call: str() is the whole message; .status is the
    kf_status name ("ERR_SHAPE", or None for checks made in Python) and
    .message the C library's own message."""

    def __init__(self, text, status=None, message=None):
        super().__init__(text)
        self.status = status
        self.message = text if message is None else message


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("shape", ctypes.c_int64 * KF_MAX_RANK)]


_HostTensor = _Tensor  # kf_host_tensor has kf_tensor's layout


class _CompareResult(ctypes.Structure):  # kf_compare_result
    _fields_ = [("elements", ctypes.c_int64), ("mismatches", ctypes.c_int64),
                ("special_mismatches", ctypes.c_int64), ("unbounded", ctypes.c_int64),
                ("worst", ctypes.c_int64), ("worst_got", ctypes.c_double),
                ("worst_want", ctypes.c_double), ("worst_bound", ctypes.c_double),
                ("worst_allowed", ctypes.c_double), ("max_abs_err", ctypes.c_double),
                ("max_ratio", ctypes.c_double), ("max_rel_err", ctypes.c_double),
                ("ok", ctypes.c_bool)]


class _Options(ctypes.Structure):
    _fields_ = [("fusion", ctypes.c_bool), ("horizontal", ctypes.c_bool),
                ("arch", ctypes.c_char_p), ("mode", ctypes.c_int),
                ("occupancy_drop", ctypes.c_double), ("streams", ctypes.c_int),
                ("pdl", ctypes.c_bool), ("math", ctypes.c_int)]


class _Hash(ctypes.Structure):
    _fields_ = [("lo", ctypes.c_uint64), ("hi", ctypes.c_uint64)]


class _CompileStats(ctypes.Structure):
    _fields_ = [("kernels", ctypes.c_int), ("compiled", ctypes.c_int),
                ("cache_hits", ctypes.c_int), ("mem_hits", ctypes.c_int),
                ("disk_hits", ctypes.c_int), ("compile_ms", ctypes.c_double),
                ("arch", ctypes.c_char * 16)]


class _LaunchCompile(ctypes.Structure):
    _fields_ = [("origin", ctypes.c_int), ("emit_ms", ctypes.c_double),
                ("compile_ms", ctypes.c_double), ("source_bytes", ctypes.c_int64),
                ("key_hi", ctypes.c_uint64), ("key_lo", ctypes.c_uint64)]


ORIGINS = ("compiled", "memory", "disk", "library")  # kf_origin


def _nvrtc_candidates():
    """Directories that may hold libnvrtc.so.*, most specific first."""
    dirs = []
    for p in sys.path:  # the nvidia-cuda-nvrtc wheels (CUDA 13, CUDA 12 layouts)
        for sub in ("nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"):
            d = os.path.join(p or ".", sub)
            if os.path.isdir(d):
                dirs.append(d)
    for var in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"):
        if os.environ.get(var):
            dirs += [os.path.join(os.environ[var], "lib64"), os.path.join(os.environ[var], "lib")]
    dirs += ["/usr/local/cuda/lib64"] + sorted(glob.glob("/usr/local/cuda-*/lib64"), reverse=True)
    dirs += ["/usr/local/cuda/targets/x86_64-linux/lib", "/usr/local/cuda/targets/sbsa-linux/lib"]
    return dirs


def _preload_nvrtc():
    """Loads the first libnvrtc.so.<major> found, RTLD_GLOBAL; True if one was."""
    for d in _nvrtc_candidates():
        for f in sorted(glob.glob(os.path.join(d, "libnvrtc.so.[0-9]*")), reverse=True):
            if "builtins" in f or f.count(".so.") != 1 or f.split(".so.")[1].count(".") > 1:
                continue
            try:
                ctypes.CDLL(f, mode=ctypes.RTLD_GLOBAL)
                return True
            except OSError:
                continue
    return False


def _library_candidates():
    env = os.environ.get("KFUSE_LIB")
    if env:
        return [env], True  # an explicit path: nothing else is tried
    cands = sorted(glob.glob(os.path.join(_here, "libkfuse.so*")))
    repo = os.path.join(_here, "..", "..", os.environ.get("KFUSE_BUILD", "build"), "libkfuse.so")
    return cands + [os.path.normpath(repo), "libkfuse.so.0", "libkfuse.so"], False


def _try_load(cands, explicit, errors):
    for c in cands:
        if os.sep in c and not os.path.exists(c):
            if explicit:
                errors.append("%s: no such file" % c)
            continue
        try:
            return ctypes.CDLL(c), c
        except OSError as e:
            errors.append(str(e))
    return None


def _load():
    cands, explicit = _library_candidates()
    errors = []
    got = _try_load(cands, explicit, errors)
    # a library that exists but whose NVRTC the loader does not find: load
    # NVRTC from the usual places, then try once more
    if not got and any("libnvrtc" in e for e in errors) and _preload_nvrtc():
        errors = []
        got = _try_load(cands, explicit, errors)
    if not got:
        raise KfuseError("libkfuse.so could not be loaded (%s); reinstall the package "
                         "(pip install .), build the repository, or set KFUSE_LIB"
                         % ("; ".join(errors) or "not found"))
    return got


lib, lib_path = _load()
_P = ctypes.c_void_p
_V = ctypes.c_int32  # kf_value
_I = ctypes.c_int


def _sig(name, res, *args):
    f = getattr(lib, name)
    f.restype = res
    f.argtypes = list(args)
    return f


_C = ctypes.c_char_p
_D = ctypes.c_double
_I64P = ctypes.POINTER(ctypes.c_int64)
_IP = ctypes.POINTER(ctypes.c_int)
for _n, _r, _a in [
    ("kf_version", _C, ()), ("kf_status_str", _C, (_I,)), ("kf_status_name", _C, (_I,)),
    ("kf_ctx_create", _I, (ctypes.POINTER(_P),)), ("kf_ctx_destroy", None, (_P,)),
    ("kf_ctx_errmsg", _C, (_P,)), ("kf_free", None, (_P,)),
    ("kf_graph_create", _I, (_P, ctypes.POINTER(_P))), ("kf_graph_destroy", None, (_P,)),
    ("kf_graph_status", _I, (_P,)), ("kf_graph_errmsg", _C, (_P,)),
    ("kf_graph_name", _C, (_P,)), ("kf_graph_set_name", _I, (_P, _C)),
    ("kf_set_name", _I, (_P, _V, _C)), ("kf_set_output", _I, (_P, _V)),
    ("kf_graph_num_values", _I, (_P,)), ("kf_graph_num_inputs", _I, (_P,)),
    ("kf_graph_input", _V, (_P, _I)), ("kf_graph_num_outputs", _I, (_P,)),
    ("kf_graph_output", _V, (_P, _I)), ("kf_graph_find", _V, (_P, _C)),
    ("kf_value_dtype", _I, (_P, _V)), ("kf_value_rank", _I, (_P, _V)),
    ("kf_value_shape", _I64P, (_P, _V)), ("kf_value_numel", ctypes.c_int64, (_P, _V)),
    ("kf_value_name", _C, (_P, _V)), ("kf_value_op", _C, (_P, _V)),
    ("kf_graph_hash", _Hash, (_P,)), ("kf_graph_dump", _P, (_P,)),
    ("kf_input", _V, (_P, _C, _I, _I, _I64P)), ("kf_scalar", _V, (_P, _D, _I)),
    ("kf_where", _V, (_P, _V, _V, _V)), ("kf_clamp", _V, (_P, _V, _D, _D)),
    ("kf_cast", _V, (_P, _V, _I)),
    ("kf_reshape", _V, (_P, _V, _I, _I64P)), ("kf_transpose", _V, (_P, _V, _IP)),
    ("kf_broadcast_to", _V, (_P, _V, _I, _I64P)),
    ("kf_slice", _V, (_P, _V, _I, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)),
    ("kf_concat", _V, (_P, _I, ctypes.POINTER(_V), _I)), ("kf_gather", _V, (_P, _V, _V, _I)),
    ("kf_iota", _V, (_P, _I, _I, _I64P, _I)),
    ("kf_softmax", _V, (_P, _V, _I)), ("kf_log_softmax", _V, (_P, _V, _I)),
    ("kf_logsumexp", _V, (_P, _V, _I)),
    ("kf_layernorm", _V, (_P, _V, _V, _V, _D)), ("kf_rmsnorm", _V, (_P, _V, _V, _D)),
    ("kf_matmul", _V, (_P, _V, _V)),
    ("kf_graph_run_reference", _I, (_P, ctypes.POINTER(_HostTensor), _I,
                                    ctypes.POINTER(_HostTensor), _I)),
    ("kf_graph_run_reference_bounded", _I, (_P, ctypes.POINTER(_HostTensor), _I,
                                            ctypes.POINTER(_HostTensor),
                                            ctypes.POINTER(ctypes.POINTER(_D)), _I)),
    ("kf_compare", _I, (ctypes.POINTER(_HostTensor), ctypes.POINTER(_HostTensor),
                        ctypes.POINTER(_D), _D, _D, ctypes.POINTER(_CompareResult))),
    ("kf_graph_load_yaml", _I, (_P, _C, ctypes.POINTER(_P))),
    ("kf_graph_load_yaml_string", _I, (_P, _C, ctypes.c_size_t, _C, ctypes.POINTER(_P))),
    ("kf_graph_save_yaml", _I, (_P, _C)), ("kf_graph_to_yaml", _P, (_P,)),
    ("kf_options_init", None, (ctypes.POINTER(_Options),)),
    ("kf_plan_create", _I, (_P, _P, ctypes.POINTER(_Options), ctypes.POINTER(_P))),
    ("kf_compile", _I, (_P, _P, ctypes.POINTER(_Options), ctypes.POINTER(_P))),
    ("kf_plan_compile", _I, (_P,)),
    ("kf_plan_compile_stats", _I, (_P, ctypes.POINTER(_CompileStats))),
    ("kf_plan_launch_compile", _I, (_P, _I, ctypes.POINTER(_LaunchCompile))),
    ("kf_plan_destroy", None, (_P,)), ("kf_plan_errmsg", _C, (_P,)),
    ("kf_plan_load", _I, (_P,)), ("kf_plan_set_mode", _I, (_P, _I)),
    ("kf_plan_num_launches", _I, (_P,)), ("kf_plan_num_kernels", _I, (_P,)),
    ("kf_plan_workspace_size", ctypes.c_int64, (_P,)),
    ("kf_plan_set_workspace", _I, (_P, _P, ctypes.c_size_t)),
    ("kf_plan_describe", _P, (_P, _I)), ("kf_plan_source", _P, (_P, _I, _C)),
    ("kf_graph_io", _I, (_P, ctypes.POINTER(_Tensor), _I, ctypes.POINTER(_Tensor), _I)),
    ("kf_plan_run", _I, (_P, ctypes.POINTER(_Tensor), _I, ctypes.POINTER(_Tensor), _I, _P)),
    ("kf_plan_run_ptrs", _I, (_P, ctypes.POINTER(_P), _I, ctypes.POINTER(_P), _I, _P)),
    ("kf_plan_run_dlpack", _I, (_P, ctypes.POINTER(_P), _I, ctypes.POINTER(_P), _I, _P)),
]:
    _sig(_n, _r, *_a)

# The one-operand, two-operand and reduction builders, one signature each;
# graph.py makes a method of every name (the C API's list, in its order).
UNARY = ["neg", "abs", "exp", "log", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tanh",
         "sigmoid", "relu", "gelu", "gelu_tanh", "silu", "erf", "floor", "ceil", "sign",
         "logical_not"]
BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt", "le",
          "gt", "ge", "logical_and", "logical_or"]
REDUCE = ["sum", "mean", "max", "min"]
for _n in UNARY:
    _sig("kf_" + _n, _V, _P, _V)
for _n in BINARY:
    _sig("kf_" + _n, _V, _P, _V, _V)
for _n in REDUCE:
    _sig("kf_" + _n, _V, _P, _V, _I, _IP, ctypes.c_bool)


def cstr(p):
    """A const char * result as str ("" for NULL)."""
    return p.decode(errors="replace") if p else ""


def take_string(p):
    """A char * the caller owns (kf_free), as str; None for NULL."""
    if not p:
        return None
    try:
        return ctypes.cast(p, ctypes.c_char_p).value.decode(errors="replace")
    finally:
        lib.kf_free(p)


def status_name(st):
    return cstr(lib.kf_status_name(st))


def error(what, st, message):
    """The KfuseError of a failing call `what` with status st and the C message."""
    return KfuseError("%s: %s: %s" % (what, cstr(lib.kf_status_str(st)), message),
                      status_name(st), message)


def dtype_code(name):
    """A kfuse dtype name ("bf16") as its kf_dtype number."""
    try:
        return DTYPES.index(str(name))
    except ValueError:
        raise KfuseError("unknown dtype %r (kfuse has %s)" % (name, ", ".join(DTYPES)),
                         "ERR_INVALID_ARG") from None
