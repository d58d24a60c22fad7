#!/usr/bin/env python3
"""cuBLAS (torch.matmul) bf16 and f16 GEMV peers on kiln's GEMV shapes: weights rotated over more
than the L2, CUDA-graph replay of one call per weight set, CUDA events, median of 20 replays.

Usage: gemv_peers.py OUT.json
"""
import json
import statistics
import sys

import torch

ROTATE = 2 * 60 * 2**20
SHAPES = [(14336, 4096, 1), (14336, 4096, 8), (4096, 4096, 1), (4096, 4096, 8)]


def time_case(n, k, t, dtype):
    wbytes = n * k * 2
    sets = max(8, -(-ROTATE // wbytes))
    ws = [torch.randn(n, k, device="cuda", dtype=dtype) for _ in range(sets)]
    xs = [torch.randn(t, k, device="cuda", dtype=dtype) for _ in range(sets)]
    ys = [None] * sets
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        for i in range(sets):
            ys[i] = xs[i] @ ws[i].t()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        for i in range(sets):
            ys[i] = xs[i] @ ws[i].t()
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
    return statistics.median(times), wbytes + t * k * 2 + t * n * 2


def main():
    out = {}
    print(f"{'case':<28} {'us':>8} {'GB/s':>8}")
    for dtype, name in [(torch.bfloat16, "bf16"), (torch.float16, "f16")]:
        for n, k, t in SHAPES:
            us, bytes_ = time_case(n, k, t, dtype)
            key = f"cublas_{name}_n{n}_k{k}_t{t}"
            out[key] = {"us": us, "bytes": bytes_, "gbps": bytes_ / us / 1e3}
            print(f"{key:<28} {us:8.2f} {bytes_ / us / 1e3:8.1f}")
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
