#!/usr/bin/env python3
"""inductor_code.py - what torch.compile generates for the suite's row
workloads: the Triton kernels Inductor writes for softmax and layernorm on
8192x8192 (f32 and bf16), with the launch configurations it weighed, so
that kfuse's row kernels can be compared with Inductor's (layernorm_f32,
the one workload where torch.compile is ahead by per-run event pairs:
0.1305 against 0.1319 ms in session 7; performance.md).

  python3 bench/inductor_code.py [--out DIR] [--rows 8192] [--cols 8192] [--only W,...]

Writes DIR/inductor_<workload>.py (the generated wrapper and kernels) and
prints, per workload, the median time of the compiled function and the
lines of its code that carry the launch choices (reduction heuristics,
size hints, XBLOCK/RBLOCK, num_warps). Needs a GPU and PyTorch with
Triton; run on the GPU machine (scripts/gpu-perf.sh's environment).
"""
import argparse
import os
import re
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "out"))
    ap.add_argument("--rows", type=int, default=8192)
    ap.add_argument("--cols", type=int, default=8192)
    ap.add_argument("--only", default=None,
                    help="comma-separated workloads (softmax_f32, softmax_bf16, layernorm_f32, "
                         "layernorm_bf16); a second run under ncu finds Inductor's tuned "
                         "choice in its cache and launches only that kernel")
    args = ap.parse_args()
    names = ("softmax_f32", "softmax_bf16", "layernorm_f32", "layernorm_bf16")
    only = set(args.only.split(",")) if args.only else None
    if only and not only <= set(names):
        ap.error("--only: no workload %s (there are %s)" %
                 (", ".join(sorted(only - set(names))), ", ".join(names)))
    try:
        import torch
        from torch._inductor.utils import run_and_get_code
        from timing import median_ms
    except ImportError as e:  # no PyTorch, or one without Inductor
        print("inductor_code.py: %s" % e, file=sys.stderr)
        return 1
    if not torch.cuda.is_available():
        print("inductor_code.py: no CUDA device", file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    shape = (args.rows, args.cols)

    def softmax(x):
        return torch.softmax(x, -1)

    def layernorm(x, w, b):
        return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, 1e-5)

    interesting = re.compile(
        r"@triton_heuristics\.|reduction\(|size_hints|XBLOCK|RBLOCK|R0_BLOCK|num_warps|"
        r"num_stages|def triton_|\.run\(|grid=")
    for name, fn, dt in zip(names, (softmax, softmax, layernorm, layernorm),
                            (torch.float32, torch.bfloat16, torch.float32, torch.bfloat16)):
        if only and name not in only:
            continue
        x = torch.randn(shape, device="cuda", dtype=dt)
        ins = (x,) if fn is softmax else (
            x, torch.randn(shape[-1], device="cuda", dtype=dt),
            torch.randn(shape[-1], device="cuda", dtype=dt))
        torch._dynamo.reset()
        cfn = torch.compile(fn)
        _, codes = run_and_get_code(cfn, *ins)
        path = os.path.join(args.out, "inductor_%s.py" % name)
        with open(path, "w") as f:
            f.write("\n\n# ---- next generated module ----\n\n".join(codes))
        # 10 warm-up calls, then 50 timed back to back (the 61st launch is
        # the last: ncu's --launch-skip 30 lands among the timed ones)
        ms = median_ms(lambda: cfn(*ins), warmup=10, iters=50)
        print("== %s: torch.compile %.4f ms (median of 50); code in %s" % (name, ms, path))
        for code in codes:
            for line in code.splitlines():
                if interesting.search(line):
                    print("   " + line.strip()[:160])
    return 0


if __name__ == "__main__":
    sys.exit(main())
