#!/usr/bin/env python3
"""What a kernel that only reads can reach on this GPU: the ceiling a GEMV's time is judged by.

`kiln bench`'s floor is bytes over the copy bandwidth (a device-to-device copy, read plus
written). A GEMV mostly reads, and a read stream can beat that figure; this script times the
simplest read kernel there is (Triton: each program sums a contiguous piece with 16-byte loads
and writes one word) over the byte counts of the GEMV cases, the same way `kiln bench` times a
kernel (`peers.time_graph`: a CUDA graph of one call a buffer, buffers rotated over more than
the L2, CUDA events, median), for several piece sizes, and prints the best time of each size
beside the copy floor.

    python3 bench/read_roofline.py [--json out.json]

Needs torch and triton (on the GPU machine).
"""

import argparse
import json

import torch
import triton
import triton.language as tl

from peers import copy_bandwidth_gbps, time_graph


@triton.jit
def read_sum(x_ptr, out_ptr, n, PIECE: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    base = pid.to(tl.int64) * PIECE
    acc = tl.zeros([BLOCK], dtype=tl.int32)
    for i in tl.static_range(0, PIECE, BLOCK):
        offs = base + i + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr + pid, tl.sum(acc))


def buffers(nbytes, l2_bytes=60 << 20):
    """Random int32 buffers of `nbytes` each, enough of them to cover four times the L2."""
    sets = max(4, -(-4 * l2_bytes // nbytes))
    return [
        torch.randint(-(2**31), 2**31 - 1, (nbytes // 4,), dtype=torch.int32, device="cuda")
        for _ in range(sets)
    ]


def time_read(xs, piece, block, warps):
    """us a call of `read_sum` over one of the buffers `xs`, with `peers.time_graph` (kiln
    bench's protocol, a call a buffer); checks that the last call read what it was given."""
    n = xs[0].numel()
    grid = (triton.cdiv(n, piece),)
    out = torch.empty(grid[0], dtype=torch.int32, device="cuda")

    def call(x):
        read_sum[grid](x, out, n, PIECE=piece, BLOCK=block, num_warps=warps)

    us = time_graph(call, [[x] for x in xs], samples=15, replays=10)
    ref = int(xs[-1].to(torch.int64).sum().item()) & 0xFFFFFFFF
    got = int(out.to(torch.int64).sum().item()) & 0xFFFFFFFF
    assert ref == got, f"read kernel summed {got:#x}, expected {ref:#x}"
    return us


CASES = [
    ("q8_0 N=14336 K=4096 (62.4 MB)", 14336 * 4096 // 32 * 34),
    ("q4_1 N=14336 K=4096 (36.7 MB)", 14336 * 4096 // 32 * 20),
    ("q4_0 N=14336 K=4096 (33.0 MB)", 14336 * 4096 // 32 * 18),
    ("q8_0 N=4096 K=4096 (17.8 MB)", 4096 * 4096 // 32 * 34),
    ("MoE qwen3 T=1: 8 x 768 x 2048 q8_0 (13.4 MB)", 8 * 768 * 2048 // 32 * 34),
    ("attention 32K q8_0 K+V (71.3 MB)", 32768 * 8 * 2 * 128 // 32 * 34),
    ("attention 4K q8_0 K+V (8.9 MB)", 4096 * 8 * 2 * 128 // 32 * 34),
]

CONFIGS = [(p, b, w) for p in (4096, 8192, 16384, 32768) for b, w in ((1024, 4), (2048, 8))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    a = ap.parse_args()
    bw = copy_bandwidth_gbps(1 << 30)
    print(f"device: {torch.cuda.get_device_name()}; copy bandwidth {bw:.1f} GB/s (read + written)")
    rows = []
    for name, nbytes in CASES:
        nbytes -= nbytes % 4
        # One set of buffers a case, shared by every shape of the kernel.
        xs = buffers(nbytes)
        best = min((time_read(xs, *cfg), *cfg) for cfg in CONFIGS)
        del xs
        torch.cuda.empty_cache()
        floor = nbytes / bw / 1e3
        us, piece, block, warps = best
        rows.append(
            dict(case=name, bytes=nbytes, copy_floor_us=floor, read_us=us,
                 read_gbs=nbytes / us / 1e3, piece=piece, block=block, warps=warps)
        )
        print(
            f"{name:44} copy floor {floor:7.2f} us   best read {us:7.2f} us "
            f"({nbytes / us / 1e3:7.1f} GB/s, {floor / us * 100:5.1f}% of the copy floor's time; "
            f"piece {piece} x int32, {warps} warps)"
        )
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(copy_gbs=bw, rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
