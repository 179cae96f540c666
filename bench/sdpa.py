# sdpa.py - torch's scaled_dot_product_attention at bench_attention's shapes
# (bf16, medians of CUDA events after warm-up, TFLOP/s as 4 B H S^2 D,
# halved when causal): the peer figures for docs/attention.md; and
# FlexAttention (torch.compile'd) with bench_attention's tanh soft-cap
# (30 tanh(s / 30) on the scaled scores), issue 22's soft-cap peer. Needs
# torch and a GPU. Usage: python3 bench/sdpa.py
import statistics

import torch
import torch.nn.functional as F


def timed(f, n=30):
    for _ in range(5):
        f()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
    for s, e in ev:
        s.record()
        f()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in ev)


SHAPES = [(2, 16, 2048, 128, False), (4, 16, 2048, 64, False), (2, 16, 4096, 128, True),
          (2, 16, 8192, 128, True)]
for (B, H, S, D, causal) in SHAPES:
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    ms = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
    fl = 4 * B * H * S * S * D / (2 if causal else 1)
    print("sdpa B%d H%d S%d D%d causal=%d: %.3f ms %.0f TFLOP/s" % (B, H, S, D, causal, ms, fl / ms / 1e9))

# The soft-cap peer: FlexAttention's score_mod sees the scaled scores, as
# bench_attention's graph caps q k^T / sqrt(D).
try:
    from torch.nn.attention.flex_attention import flex_attention
except ImportError:
    flex_attention = None
if flex_attention is None:
    print("flex_attention: not in this torch")
else:
    flex = torch.compile(flex_attention)

    def softcap(score, b, h, q_idx, kv_idx):
        return 30.0 * torch.tanh(score / 30.0)

    B, H, S, D = 2, 16, 2048, 128
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    ms = timed(lambda: flex(q, k, v, score_mod=softcap))
    fl = 4 * B * H * S * S * D
    print("flex softcap B%d H%d S%d D%d: %.3f ms %.0f TFLOP/s" % (B, H, S, D, ms, fl / ms / 1e9))
