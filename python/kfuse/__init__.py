"""kfuse - a runtime JIT kernel-fusion compiler for NVIDIA GPUs, from Python.

    import kfuse
    g = kfuse.Graph()
    x = g.input("x", "bf16", [8192, 8192])
    g.output(g.softmax(x, -1))
    plan = g.compile()            # arch="sm_90" where there is no GPU
    plan.run([x_tensor], [y_tensor])

Graphs come from the builder (graph.py) or YAML (load_yaml, a path;
load_yaml_string, text); plans run on torch, CuPy, JAX or any DLPack /
__cuda_array_interface__ tensor (plan.py, tensors.py); run_reference runs
a graph on the CPU on numpy arrays (reference.py). Importing kfuse imports
neither torch nor numpy and needs no GPU. docs/python.md is the guide.
"""
from ._native import DTYPES, KF_MAX_RANK, KfuseError, _Options, lib as _lib, lib_path  # noqa: F401
from .graph import (Graph, Value, compile_yaml, compile_yaml_string, load_yaml,
                    load_yaml_string)
from .plan import (CHECKS, FORMATS, MODES, TORCH_DTYPES, Bound, Context, Plan,  # noqa: F401
                   default_context, torch_dtype)
from .reference import from_bf16, to_bf16

__version__ = _lib.kf_version().decode()


def check_yaml(path, inputs, outputs, rtol=0.0, atol=0.0):
    """A graph file's outputs, computed anywhere, against the CPU reference
    within its per-element error bound (reference.check; docs/reference.md)."""
    return load_yaml(path).check(inputs, outputs, rtol, atol)


def _register_with_dynamo():
    """backend="kfuse" without the entry point, when torch is already loaded
    (kfuse never imports torch itself: kfuse.torch does, when imported)."""
    import sys
    if "torch" in sys.modules:
        try:
            from . import torch as _kt  # noqa: F401  (registers on import)
        except Exception:  # a torch without what kfuse.torch needs: leave it
            pass


_register_with_dynamo()

__all__ = ["DTYPES", "KF_MAX_RANK", "KfuseError", "Graph", "Value", "check_yaml", "compile_yaml",
           "compile_yaml_string", "load_yaml", "load_yaml_string", "CHECKS", "FORMATS",
           "MODES", "Bound", "Context", "Plan", "default_context", "torch_dtype",
           "from_bf16", "to_bf16", "lib_path"]
