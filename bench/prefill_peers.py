#!/usr/bin/env python3
"""torch SDPA (bf16, flash backend, causal, GQA) on the prompt-attention shapes of issue 14:
32 q / 8 kv heads, head dim 128, L = 512, 1024, 2048, 4096, 8192 query rows over their own L keys (the
cache holds the chunk, position 0), the same shapes as kiln's bench cases prefill_{f16,q8_0}_l*.
CUDA events, median of 20 calls after 3 warm-ups; TFLOP/s with the causal FLOPs
4 * n_q * D * L * (L + 1) / 2 (QK^T and PV, two a multiply-add), as docs/prefill.md counts.

Usage: prefill_peers.py [OUT.json]
"""
import json
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

NQ, NKV, D = 32, 8, 128


def flops(l):
    return 4 * NQ * D * l * (l + 1) // 2


def time_case(l):
    q = torch.randn(1, NQ, l, D, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(1, NKV, l, D, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(1, NKV, l, D, device="cuda", dtype=torch.bfloat16)
    # The flash backend takes GQA by repeating the KV heads (enable_gqa is not in every
    # version's flash path): the repeat happens once, outside the timed calls.
    kr = k.repeat_interleave(NQ // NKV, dim=1)
    vr = v.repeat_interleave(NQ // NKV, dim=1)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        for _ in range(3):
            F.scaled_dot_product_attention(q, kr, vr, is_causal=True)
        torch.cuda.synchronize()
        times = []
        for _ in range(20):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            F.scaled_dot_product_attention(q, kr, vr, is_causal=True)
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) * 1e3)
    return statistics.median(times)


def main():
    out = {}
    for l in (512, 1024, 2048, 4096, 8192):
        us = time_case(l)
        key = f"sdpa_flash_bf16_causal_l{l}"
        tf = flops(l) / us / 1e6
        out[key] = {"us": us, "flops": flops(l), "tflops": tf}
        print(f"{key:<32} {us:10.2f} us {tf:8.1f} TFLOP/s")
    if len(sys.argv) > 1:
        json.dump(out, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
