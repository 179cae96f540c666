"""swiglu_peers.py - issue 20's SwiGLU MLP (+ residual) through kfuse and
torch.compile in one process, on the same bf16 tensors, timed the same
way and in alternating rounds, so that clocks and power (a sustained 4 ms
product heats the H200 into its power limit) weigh on both alike.

    python3 bench/swiglu_peers.py [--tokens 8192] [--inter 14336] [--rounds 5]
                                  [--no-torch]

out = x + (silu(x @ wg) * (x @ wu)) @ wd, x [T, 4096]. Each round times each
side over 20 runs after 5 warm-up runs (medians of CUDA events per run);
the table gives each side's median over the rounds' medians. kfuse's
output is checked against torch's eager result (relative to the output's
scale: bf16 products over K = 4096 and 14336). The matmul path follows
KFUSE_MATMUL (auto by default, template, library): run the script once per
mode, --no-torch after the first.
"""
import argparse
import os
import statistics
import sys
import time

import torch

import kfuse
from gemm_peers import median_ms  # this folder is on sys.path: the same timing


def kfuse_graph(t, h, i):
    g = kfuse.Graph("swiglu")
    x = g.input("x", "bf16", [t, h])
    wg, wu = g.input("wg", "bf16", [h, i]), g.input("wu", "bf16", [h, i])
    wd = g.input("wd", "bf16", [i, h])
    g.output(g.add(x, g.matmul(g.mul(g.silu(g.matmul(x, wg)), g.matmul(x, wu)), wd)))
    return g


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=8192)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--inter", type=int, default=14336)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-torch", action="store_true")
    a = ap.parse_args()
    t, h, i = a.tokens, a.hidden, a.inter
    flop = 3 * 2.0 * t * h * i
    torch.manual_seed(1)
    dev = torch.device("cuda")
    x = torch.rand(t, h, device=dev, dtype=torch.bfloat16) - 0.5
    wg, wu = (torch.rand(h, i, device=dev, dtype=torch.bfloat16) - 0.5 for _ in range(2))
    wd = torch.rand(i, h, device=dev, dtype=torch.bfloat16) - 0.5
    mode = os.environ.get("KFUSE_MATMUL", "auto")

    t0 = time.perf_counter()
    plan = kfuse_graph(t, h, i).compile()
    plan.load()
    compile_s = time.perf_counter() - t0
    out = torch.empty(t, h, device=dev, dtype=torch.bfloat16)
    ins = [x, wg, wu, wd]
    plan.run(ins, [out])
    torch.cuda.synchronize()
    want = x.float() + (torch.nn.functional.silu(x @ wg) * (x @ wu)) @ wd
    scale = want.abs().max().item()
    err = (out.float() - want.float()).abs().max().item() / scale
    print(f"kfuse ({mode}): compile + load {compile_s:.2f} s, {plan.launches} launches, "
          f"max |err| / max |want| = {err:.2e}")
    ok = err < 2e-2
    sides = {f"kfuse {mode}": lambda: plan.run(ins, [out])}
    if not a.no_torch:
        f = torch.compile(lambda x, wg, wu, wd: x + (torch.nn.functional.silu(x @ wg) *
                                                     (x @ wu)) @ wd)
        t0 = time.perf_counter()
        f(x, wg, wu, wd)
        torch.cuda.synchronize()
        print(f"torch.compile: first call {time.perf_counter() - t0:.1f} s")
        sides["torch.compile"] = lambda: f(x, wg, wu, wd)
    rounds = {k: [] for k in sides}
    for _ in range(a.rounds):
        for k, fn in sides.items():
            rounds[k].append(median_ms(fn))
    print(f"SwiGLU {t}x{h}x{i} + residual, bf16; {a.rounds} rounds of 20 runs each")
    for k, v in rounds.items():
        ms = statistics.median(v)
        print(f"  {k:<16} {ms:8.3f} ms {flop / ms / 1e9:6.1f} TFLOP/s  rounds "
              + " ".join(f"{r:.3f}" for r in v))
    if len(rounds) == 2:
        k, tc = (statistics.median(v) for v in rounds.values())
        print(f"  torch.compile / kfuse = {tc / k:.3f}x")
    print("check:", "ok" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
