#!/usr/bin/env python3
"""warm_start.py - the suite's warm start of one graph, alone: the graph
file compiled through a fresh kfuse.Context with the disk cache warm
(kernels loaded onto the GPU when there is one; --arch sm_90 to compile
only). Prints the median and minimum of N starts, in ms.

  PYTHONPATH=python KFUSE_LIB=build-gpu/libkfuse.so python3 bench/warm_start.py FILE [N] [--arch sm_90]
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import kfuse  # noqa: E402


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    arch = "sm_90" if "--arch" in sys.argv else None
    path, n = args[0], int(args[1]) if len(args) > 1 else 21
    kfuse.compile_yaml(path, arch=arch)  # fills the disk cache
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        kfuse.compile_yaml(path, ctx=kfuse.Context(), arch=arch)
        ts.append((time.perf_counter() - t0) * 1e3)
    print("%s: warm start median %.2f ms, min %.2f ms over %d (%s)" % (
        os.path.basename(path), statistics.median(ts), min(ts), n,
        "compile only, " + arch if arch else "kernels loaded on the GPU"))


if __name__ == "__main__":
    main()
