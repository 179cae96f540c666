"""decode_sdpa.py - torch's scaled_dot_product_attention on issue 22's
decode shape (1 query, 4096 keys, batch 16, 32 query heads over 8 k/v heads,
D128, bf16 and f16), the peer of bench_attention's decode lines: GB/s on the
bytes of k and v, per call over a loop of back-to-back calls under one event
pair (timing.loop_us), two forms: enable_gqa (k and v of 8 heads) and k, v
expanded to 32 heads beforehand (the expand outside the timing).
Usage: python3 bench/decode_sdpa.py"""
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError as e:
    print(f"skipped: no torch ({e})")
    sys.exit(0)

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from timing import loop_us  # noqa: E402


def main():
    if not torch.cuda.is_available():
        print("skipped: no GPU")
        return
    b, h, hk, s, d = 16, 32, 8, 4096, 128
    for dt in (torch.bfloat16, torch.float16):
        q = torch.randn(b, h, 1, d, device="cuda", dtype=dt)
        k = torch.randn(b, hk, s, d, device="cuda", dtype=dt)
        v = torch.randn(b, hk, s, d, device="cuda", dtype=dt)
        kv = 2 * k.numel() * k.element_size()
        forms = [("enable_gqa", lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True))]
        ke = k.repeat_interleave(h // hk, dim=1)
        ve = v.repeat_interleave(h // hk, dim=1)
        forms.append(("expanded k, v", lambda: F.scaled_dot_product_attention(q, ke, ve)))
        for name, fn in forms:
            try:
                us, _ = loop_us(fn, 200)
            except Exception as e:  # an older torch has no enable_gqa
                print(f"torch sdpa decode {dt} {name}: failed: {e}")
                continue
            print(f"torch sdpa decode B16 H32/8 1x4096 D128 {str(dt)[6:]} {name}: {us:8.2f} us "
                  f"{kv / us / 1e3:7.0f} GB/s on k+v ({kv / 2**20:.0f} MiB)")


if __name__ == "__main__":
    main()
