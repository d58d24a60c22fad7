#!/usr/bin/env python3
"""A/B in one process: kiln's kernels (PTX from a built package, launched through the CUDA driver
API with ctypes) against torch and Triton (torch.compile / Inductor), captured into the same kind
of CUDA graph (one call per input set, sets rotated past the L2), timed with CUDA events, the
configurations interleaved over several rounds so that a change of the card's state between runs
hits all of them alike.

It also times kiln's kernels on two placements of the same input sets: packed (torch's caching
allocator) and one `cuMemAlloc` per buffer (as `kiln bench` allocates), to see whether the
placement matters (on the H200 it did not: 1.89 us both ways for the quantize kernel).

Usage: ab.py PACKAGE OUT.json [--rounds N]
"""
import ctypes
import json
import math
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from peers import q8_0_torch, rmsnorm_torch, time_graph, ROTATE_BYTES  # noqa: E402

from driver_only import capture, ck, cu, us_per_node  # noqa: E402


def load(pkg, kernel, variant, symbol):
    ptx = open(os.path.join(pkg, kernel, f"{variant}.sm_90.ptx"), "rb").read() + b"\0"
    mod = ctypes.c_void_p()
    ck(cu.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(ptx)), f"load {kernel}/{variant}")
    fn = ctypes.c_void_p()
    ck(cu.cuModuleGetFunction(ctypes.byref(fn), mod, symbol.encode()), f"function {symbol}")
    return fn


def launch(fn, grid, block, args):
    params = (ctypes.c_void_p * len(args))(*[ctypes.cast(ctypes.pointer(a), ctypes.c_void_p) for a in args])
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    ck(cu.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, stream, params, None), "launch")


class Raw:
    """One cuMemAlloc'd buffer, filled from a torch tensor."""

    def __init__(self, t):
        self.n = t.numel() * t.element_size()
        p = ctypes.c_uint64()
        ck(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(self.n)), "cuMemAlloc")
        self.ptr = p.value
        h = t.cpu().contiguous()
        ck(cu.cuMemcpyHtoD_v2(ctypes.c_uint64(self.ptr), ctypes.c_void_p(h.data_ptr()), ctypes.c_size_t(self.n)), "HtoD")

    def data_ptr(self):
        return self.ptr


def ggml_q8_0(x):
    """ggml's reference bytes (roundf: halves away from zero), 34-byte blocks."""
    b = x.view(-1, 32).double().float()
    amax = b.abs().amax(dim=1, keepdim=True)
    d = amax / 127.0
    idv = torch.where(d != 0, 1.0 / d, torch.zeros_like(d))
    p = b * idv
    q = (torch.sign(p) * torch.floor(p.abs() + 0.5)).to(torch.int8)
    d16 = d.to(torch.float16).view(torch.uint8).view(-1, 2)
    return torch.cat([d16, q.view(torch.uint8)], dim=1).reshape(-1)


def main():
    pkg, out = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    torch.zeros(1, device="cuda")
    res = {"rounds": rounds, "cases": {}}

    # Quantize Q8_0, K = 4096.
    k = 4096
    nsets = min(max(8, math.ceil(ROTATE_BYTES / (k * 4))), 4096)
    xs = [torch.randn(k, device="cuda") * 3 for _ in range(nsets)]
    outs = [torch.empty(k // 32 * 34, dtype=torch.uint8, device="cuda") for _ in range(nsets)]
    raw = [(Raw(x), Raw(o)) for x, o in zip(xs, outs)]
    gaps = [raw[i + 1][0].ptr - raw[i][0].ptr for i in range(8)]
    print("cuMemAlloc address steps between consecutive 16 KB inputs:", gaps, flush=True)
    print("torch address steps:", [xs[i + 1].data_ptr() - xs[i].data_ptr() for i in range(8)], flush=True)
    res["alloc_steps"] = {"cuMemAlloc": gaps, "torch": [xs[i + 1].data_ptr() - xs[i].data_ptr() for i in range(8)]}
    kq = {}
    # (variant, workgroups, lanes a workgroup) for K = 4096.
    for v, grid, block in [("baseline", 1, 256), ("wave", 4, 256)]:
        sym = "quantize_q8_0_f32" + ("" if v == "baseline" else "_" + v)
        kq[v] = (load(pkg, "quantize_q8_0_f32", v, sym), grid, block)

    def kiln_q(v):
        fn, grid, block = kq[v]
        return lambda x, o: launch(fn, grid, block, [ctypes.c_uint64(x.data_ptr()), ctypes.c_uint64(o.data_ptr()), ctypes.c_uint32(k)])

    # Parity on one fresh set: every variant equals ggml's bytes.
    want = ggml_q8_0(xs[0])
    for v in kq:
        outs[0].fill_(0xA5)
        kiln_q(v)(xs[0], outs[0])
        torch.cuda.synchronize()
        same = torch.equal(outs[0].cpu(), want.cpu())
        print(f"quantize_q8_0_f32/{v}: {'equal to' if same else 'DIFFERENT FROM'} ggml's bytes", flush=True)
        res.setdefault("parity", {})[v] = same
    q_triton = torch.compile(q8_0_torch, mode="max-autotune-no-cudagraphs", dynamic=False)
    configs = {
        "kiln baseline (packed)": (kiln_q("baseline"), list(zip(xs, outs))),
        "kiln wave (packed)": (kiln_q("wave"), list(zip(xs, outs))),
        "kiln wave (cuMemAlloc each)": (kiln_q("wave"), raw),
        "torch": (q8_0_torch, [[x] for x in xs]),
        "triton": (q_triton, [[x] for x in xs]),
        # The protocol peers.py used before: one replay a timing, 50 timings.
        "kiln wave (one replay a timing)": (kiln_q("wave"), list(zip(xs, outs)), {"samples": 50, "replays": 1}),
        "triton (one replay a timing)": (q_triton, [[x] for x in xs], {"samples": 50, "replays": 1}),
        # Replayed on a created stream instead of torch's (legacy) default stream.
        "kiln wave (side stream)": (kiln_q("wave"), list(zip(xs, outs)), {"side_stream": True}),
        "triton (side stream)": (q_triton, [[x] for x in xs], {"side_stream": True}),
    }
    res["cases"]["quantize_q8_0_t1_k4096"] = run_rounds(configs, rounds)
    res["driver_graph_us"] = driver_graph_us(kq["wave"], list(zip(xs, outs)), k)
    print(f"  kiln wave, graph captured and launched through the driver API only: {res['driver_graph_us']:.2f} us", flush=True)

    # rmsnorm T=8, D=4096.
    t, d = 8, 4096
    nsets = min(max(8, math.ceil(ROTATE_BYTES / ((t + 1) * d * 4))), 4096)
    rx = [torch.randn(t, d, device="cuda") for _ in range(nsets)]
    rw = [torch.randn(d, device="cuda") for _ in range(nsets)]
    ro = [torch.empty(t, d, device="cuda") for _ in range(nsets)]
    rraw = [(Raw(a), Raw(b), Raw(c)) for a, b, c in zip(rx, rw, ro)]
    rfn = load(pkg, "rmsnorm_f32", "baseline", "rmsnorm_f32")

    def kiln_r(x, w, o):
        launch(rfn, t, 512, [ctypes.c_uint64(x.data_ptr()), ctypes.c_uint64(w.data_ptr()), ctypes.c_uint64(o.data_ptr()),
                             ctypes.c_uint32(t), ctypes.c_uint32(d), ctypes.c_float(1e-6)])

    kiln_r(rx[0], rw[0], ro[0])
    torch.cuda.synchronize()
    ref = (rx[0].double() * torch.rsqrt(rx[0].double().pow(2).mean(-1, keepdim=True) + 1e-6) * rw[0].double())
    rel = ((ro[0].double() - ref).norm() / ref.norm()).item()
    print(f"rmsnorm_f32: relative error against f64 {rel:.2e}", flush=True)
    res["rmsnorm_rel_err"] = rel
    r_triton = torch.compile(rmsnorm_torch, mode="max-autotune-no-cudagraphs", dynamic=False)
    configs = {
        "kiln baseline (packed)": (kiln_r, list(zip(rx, rw, ro))),
        "kiln baseline (cuMemAlloc each)": (kiln_r, rraw),
        "torch": (rmsnorm_torch, list(zip(rx, rw))),
        "triton": (r_triton, list(zip(rx, rw))),
    }
    res["cases"]["rmsnorm_t8_d4096"] = run_rounds(configs, rounds)

    # torch's trivial op (peers.py's launch-cost figure), default stream vs a created one.
    one = torch.zeros(1, device="cuda")
    fill = [[one] for _ in range(200)]
    configs = {
        "torch fill_ (default stream)": (lambda t: t.fill_(1.0), fill, {"replays": 50}),
        "torch fill_ (side stream)": (lambda t: t.fill_(1.0), fill, {"replays": 50, "side_stream": True}),
    }
    res["cases"]["trivial_node"] = run_rounds(configs, rounds)
    json.dump(res, open(out, "w"), indent=1)


def driver_graph_us(kernel, sets, k):
    """The graph built as kiln builds it (driver-API stream capture on a created stream,
    cuGraphInstantiate, cuGraphLaunch, driver events), in this process: tells torch's graph
    object apart from the process it runs in."""
    fn, grid, block = kernel
    stream = ctypes.c_void_p()
    ck(cu.cuStreamCreate(ctypes.byref(stream), 1), "stream")
    exe = capture(fn, grid, block, [(x.data_ptr(), o.data_ptr()) for x, o in sets], k, stream)
    for _ in range(5):
        ck(cu.cuGraphLaunch(exe, stream), "graph launch")
    return us_per_node(exe, stream, len(sets))[0]


def run_rounds(configs, rounds):
    times = {name: [] for name in configs}
    for r in range(rounds):
        for name, (fn, sets, *kw) in configs.items():
            times[name].append(time_graph(fn, sets, **(kw[0] if kw else {})))
    rows = {}
    for name, ts in times.items():
        rows[name] = {"median_us": statistics.median(ts), "rounds_us": ts}
        print(f"  {name:<36} median {statistics.median(ts):6.2f} us   rounds {' '.join(f'{x:.2f}' for x in ts)}", flush=True)
    return rows


if __name__ == "__main__":
    main()
