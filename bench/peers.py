#!/usr/bin/env python3
"""Peers for `kiln bench`: torch (eager ops) and Triton (through torch.compile / Inductor), timed the
way kiln times itself: CUDA-graph replay of one call per input set, input sets rotated over more
than the L2 (60 MB on an H200), CUDA events, warm-up, median of many replays.

Usage: peers.py OUT.json [--cases argmax_t1,...] [--no-triton]
Prints a table and writes JSON: {case: {"torch_us": .., "triton_us": .., "bytes": ..}}.
"""
import json
import math
import statistics
import sys

import torch

L2_BYTES = 60 * 2**20
ROTATE_BYTES = 2 * L2_BYTES


def q8_0_torch(x):
    """ggml's quantize_row_q8_0_ref in torch ops (f32 in, d as f16 and qs as int8 out)."""
    b = x.view(-1, 32)
    amax = b.abs().amax(dim=1, keepdim=True)
    d = amax / 127.0
    idv = torch.where(d != 0, 1.0 / d, torch.zeros_like(d))
    q = torch.round(b * idv)  # torch.round is half-to-even; ggml's roundf is half-away: peer timing only
    return d.to(torch.float16), q.to(torch.int8)


def rmsnorm_torch(x, w, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * w


def top_prob_torch(l):
    m = l.amax(dim=-1, keepdim=True)
    return 1.0 / torch.exp(l - m).sum(dim=-1)


CASES = {
    # name: (make inputs, fn, bytes moved per call)
    "argmax_t1": (lambda: [torch.randn(1, 248320, device="cuda")], lambda l: torch.argmax(l, dim=-1), 248320 * 4 + 8),
    "argmax_t8": (lambda: [torch.randn(8, 248320, device="cuda")], lambda l: torch.argmax(l, dim=-1), 8 * 248320 * 4 + 64),
    "row_top_prob_t1": (lambda: [torch.randn(1, 248320, device="cuda")], top_prob_torch, 248320 * 4 + 4),
    "quantize_q8_0_t1_k4096": (lambda: [torch.randn(4096, device="cuda")], q8_0_torch, 4096 * 4 + 4096 // 32 * 34),
    "rmsnorm_t8_d4096": (
        lambda: [torch.randn(8, 4096, device="cuda"), torch.randn(4096, device="cuda")],
        rmsnorm_torch,
        8 * 4096 * 4 * 2 + 4096 * 4,
    ),
}


def time_graph(fn, sets, samples=7, replays=20, warm=5, side_stream=False):
    """us per call: a CUDA graph holding one call per input set; `samples` timings of `replays`
    back-to-back replays each, median over the samples (the protocol of `kiln bench`).
    `side_stream`: replay (and time) on a created stream instead of torch's default one."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for args in sets[:3]:
            fn(*args)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for args in sets:
            fn(*args)
    torch.cuda.synchronize()
    with torch.cuda.stream(torch.cuda.Stream() if side_stream else torch.cuda.current_stream()):
        for _ in range(warm):
            g.replay()
        torch.cuda.synchronize()
        times = []
        for _ in range(samples):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(replays):
                g.replay()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) * 1e3 / (replays * len(sets)))
    return statistics.median(times)


def torch_launch_cost(nodes=200, reps=50):
    """us per node of a replayed CUDA graph of `nodes` trivial kernels (a 1-element fill), the
    figure kiln's launch-cost line is compared with."""
    x = torch.zeros(1, device="cuda")
    sets = [[x] for _ in range(nodes)]
    return time_graph(lambda t: t.fill_(1.0), sets, samples=5, replays=reps)


def copy_bandwidth_gbps(nbytes=2 << 30, reps=20):
    """The copy ceiling (METHOD.md): a large device-to-device copy, bytes read plus bytes written
    over the median time of `reps` copies, timed with CUDA events after warm-up."""
    src = torch.randn(nbytes // 4, device="cuda")
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        dst.copy_(src)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e-3)
    return 2 * nbytes / statistics.median(times) / 1e9


def main():
    out = sys.argv[1]
    names = list(CASES)
    triton = "--no-triton" not in sys.argv
    for i, a in enumerate(sys.argv):
        if a == "--cases":
            names = sys.argv[i + 1].split(",")
    torch.manual_seed(1234)
    res = {}
    for name in names:
        make, fn, nbytes = CASES[name]
        one = sum(t.numel() * t.element_size() for t in make())
        # The same rotation as `kiln bench`: ceil(120 MB / input bytes) sets, between 8 and 4096
        # (4096 x 16 KB of quantize input is 64 MB, still past the 60 MB L2).
        nsets = min(max(8, math.ceil(ROTATE_BYTES / one)), 4096)
        sets = [make() for _ in range(nsets)]
        r = {"bytes": nbytes, "sets": nsets, "torch_us": time_graph(fn, sets)}
        if triton:
            try:
                cfn = torch.compile(fn, mode="max-autotune-no-cudagraphs", dynamic=False)
                r["triton_us"] = time_graph(cfn, sets)
            except Exception as e:  # report, don't hide
                r["triton_error"] = str(e)[:200]
        res[name] = r
        print(f"{name:<26} torch {r['torch_us']:8.2f} us   triton {r.get('triton_us', float('nan')):8.2f} us   ({nsets} input sets)", flush=True)
    res["launch_trivial"] = {"torch_graph_us_per_node": torch_launch_cost()}
    print(f"launch cost: torch CUDA-graph replay {res['launch_trivial']['torch_graph_us_per_node']:.2f} us per trivial node", flush=True)
    res["copy"] = {"gbps": copy_bandwidth_gbps(), "bytes": 2 << 30}
    print(f"copy bandwidth: {res['copy']['gbps']:.0f} GB/s (2 GiB device-to-device, read + write)", flush=True)
    json.dump(res, open(out, "w"), indent=1)


if __name__ == "__main__":
    main()
