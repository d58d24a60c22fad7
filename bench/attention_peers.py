#!/usr/bin/env python3
"""torch SDPA (bf16, GQA) on the decode-attention shapes of issue 13: 32 q / 8 kv heads, head dim
128, T query rows (causal among themselves) over a context of ctx keys; caches rotated over more
than the L2, CUDA-graph replay, CUDA events, median of 20 replays.

Usage: attention_peers.py OUT.json [CONTEXTS]   (CONTEXTS: comma separated, default 4096,32768)
"""
import json
import statistics
import sys

import torch
import torch.nn.functional as F

ROTATE = 2 * 60 * 2**20


def time_case(ctx, t):
    kv_bytes = 2 * 8 * ctx * 128 * 2
    sets = max(4, -(-ROTATE // kv_bytes))
    ks = [torch.randn(1, 8, ctx, 128, device="cuda", dtype=torch.bfloat16) for _ in range(sets)]
    vs = [torch.randn(1, 8, ctx, 128, device="cuda", dtype=torch.bfloat16) for _ in range(sets)]
    qs = [torch.randn(1, 32, t, 128, device="cuda", dtype=torch.bfloat16) for _ in range(sets)]
    # Row i sees keys 0..ctx-t+i (the step's rows are the last t positions).
    mask = torch.ones(t, ctx, device="cuda", dtype=torch.bool).tril(ctx - t)
    outs = [None] * sets
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        for i in range(sets):
            outs[i] = F.scaled_dot_product_attention(qs[i], ks[i], vs[i], attn_mask=mask, enable_gqa=True)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        for i in range(sets):
            outs[i] = F.scaled_dot_product_attention(qs[i], ks[i], vs[i], attn_mask=mask, enable_gqa=True)
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3 / sets)
    return statistics.median(times), kv_bytes


def main():
    out = {}
    contexts = [int(c) for c in sys.argv[2].split(",")] if len(sys.argv) > 2 else [4096, 32768]
    for ctx in contexts:
        for t in (1, 4, 8):
            us, nbytes = time_case(ctx, t)
            key = f"sdpa_bf16_ctx{ctx}_t{t}"
            out[key] = {"us": us, "bytes": nbytes}
            print(f"{key:<26} {us:8.2f} us {nbytes / us / 1e3:8.1f} GB/s")
    json.dump(out, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
