"""gemm_peers.py - the peers of bench_gemm_lt and bench_matmul_plan in the
same run: torch.matmul (cuBLAS), torch._addmm_activation (cuBLASLt's
bias+GELU epilogue), torch.compile of bias + tanh-GELU and of the SwiGLU
MLP (+ residual), on the same shapes, random bf16 data, median of
CUDA-event timings after warm-up.

    python3 bench/gemm_peers.py [--quick] [--autotune]

--autotune adds torch.compile(mode="max-autotune") of bias + tanh-GELU
(issue 20's peer; its autotuning takes a minute or more per shape).
"""
import statistics
import sys

import torch


def median_ms(fn, reps=20, warm=5):
    for _ in range(warm):
        fn()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def report(name, flop, ms):
    print(f"{name:<28} {ms:8.3f} ms {flop / ms / 1e9:6.1f} TFLOP/s")


def main():
    quick = "--quick" in sys.argv
    dev = torch.device("cuda")
    for z in (4096,) if quick else (4096, 8192):
        a = torch.rand(z, z, device=dev, dtype=torch.bfloat16) * 2 - 1
        b = torch.rand(z, z, device=dev, dtype=torch.bfloat16) * 2 - 1
        bias = torch.rand(z, device=dev, dtype=torch.bfloat16) * 2 - 1
        flop = 2.0 * z**3
        report(f"torch bf16 {z}^3", flop, median_ms(lambda: a @ b))
        report(f"torch addmm+gelu {z}^3", flop,
               median_ms(lambda: torch._addmm_activation(bias, a, b, use_gelu=True)))
        f = torch.compile(lambda a, b, bias: torch.nn.functional.gelu(a @ b + bias,
                                                                      approximate="tanh"))
        report(f"torch.compile mm+gelu {z}^3", flop, median_ms(lambda: f(a, b, bias)))
        if "--autotune" in sys.argv:
            fa = torch.compile(lambda a, b, bias: torch.nn.functional.gelu(
                a @ b + bias, approximate="tanh"), mode="max-autotune")
            report(f"max-autotune mm+gelu {z}^3", flop, median_ms(lambda: fa(a, b, bias)))
    swiglu = torch.compile(lambda x, wg, wu, wd: x + (torch.nn.functional.silu(x @ wg) *
                                                      (x @ wu)) @ wd)
    for t, h, i in ((2048, 4096, 11008),) if quick else ((2048, 4096, 11008), (8192, 4096, 14336)):
        x = torch.rand(t, h, device=dev, dtype=torch.bfloat16) - 0.5
        wg, wu = (torch.rand(h, i, device=dev, dtype=torch.bfloat16) - 0.5 for _ in range(2))
        wd = torch.rand(i, h, device=dev, dtype=torch.bfloat16) - 0.5
        report(f"torch.compile SwiGLU {t}x{h}x{i}", 3 * 2.0 * t * h * i,
               median_ms(lambda: swiglu(x, wg, wu, wd)))
    if quick:
        return
    for bt, m, n, k in ((1, 4095, 4097, 1000), (1, 33, 4096, 4096), (1, 4096, 33, 4096),
                        (8, 512, 1024, 768)):
        a = torch.rand(bt, m, k, device=dev, dtype=torch.bfloat16) - 0.5
        w = torch.rand(n, k, device=dev, dtype=torch.bfloat16) - 0.5  # [N, K], shared
        report(f"torch b{bt} {m}x{n}x{k}", 2.0 * bt * m * n * k,
               median_ms(lambda: torch.matmul(a, w.t())))


if __name__ == "__main__":
    main()
