#!/usr/bin/env python3
"""kiln's Q8_0 `wave` kernel in a process with no torch: the CUDA driver API through ctypes only
(primary context, cuMemAlloc per buffer, stream capture of one launch per input set,
cuGraphLaunch, driver events). Tells whether a figure measured inside a torch process differs
from one measured in a bare process (`kiln bench` is one).

Usage: driver_only.py PACKAGE [--rounds N] [--extra-graphs N] [--torch [--triton]] [--torch-graph]
                         [--torch-data | --torch-buffers]"""
import array
import ctypes
import random
import statistics
import sys

cu = ctypes.CDLL("libcuda.so.1")


def ck(r, what):
    if r != 0:
        name = ctypes.c_char_p()
        cu.cuGetErrorName(r, ctypes.byref(name))
        raise RuntimeError(f"{what}: CUDA error {r} ({name.value})")


def capture(fn, grid, block, sets, k, stream):
    """Stream capture of one launch of `fn(x, out, k)` per `(x, out)` device address pair, then
    cuGraphInstantiate: the graph as kiln builds it."""
    ck(cu.cuStreamBeginCapture_v2(stream, 0), "begin capture")
    for x, o in sets:
        args = [ctypes.c_uint64(x), ctypes.c_uint64(o), ctypes.c_uint32(k)]
        params = (ctypes.c_void_p * 3)(*[ctypes.cast(ctypes.pointer(a), ctypes.c_void_p) for a in args])
        ck(cu.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, stream, params, None), "launch")
    graph, exe = ctypes.c_void_p(), ctypes.c_void_p()
    ck(cu.cuStreamEndCapture(stream, ctypes.byref(graph)), "end capture")
    ck(cu.cuGraphInstantiateWithFlags(ctypes.byref(exe), graph, ctypes.c_ulonglong(0)), "instantiate")
    ck(cu.cuGraphLaunch(exe, stream), "graph launch")
    return exe


def us_per_node(exe, stream, nodes, samples=7, replays=20):
    """Median over `samples` of `replays` back-to-back launches of `exe`, driver events: us a node
    (the protocol of `kiln bench`). Returns (median, samples)."""
    ck(cu.cuStreamSynchronize(stream), "sync")
    e0, e1 = ctypes.c_void_p(), ctypes.c_void_p()
    ck(cu.cuEventCreate(ctypes.byref(e0), 0), "event")
    ck(cu.cuEventCreate(ctypes.byref(e1), 0), "event")
    times = []
    for _ in range(samples):
        ck(cu.cuEventRecord(e0, stream), "record")
        for _ in range(replays):
            ck(cu.cuGraphLaunch(exe, stream), "graph launch")
        ck(cu.cuEventRecord(e1, stream), "record")
        ck(cu.cuEventSynchronize(e1), "event sync")
        ms = ctypes.c_float()
        ck(cu.cuEventElapsedTime(ctypes.byref(ms), e0, e1), "elapsed")
        times.append(ms.value * 1e3 / (replays * nodes))
    return statistics.median(times), times


def main():
    pkg = sys.argv[1]
    if "--torch" in sys.argv:
        # Let torch initialise CUDA in this process first (its primary context is the same one).
        import torch

        torch.zeros(1, device="cuda")
        if "--triton" in sys.argv:
            # A Triton kernel compiled and run in this process first (torch.compile, Inductor).
            sys.path.insert(0, __file__.rsplit("/", 1)[0])
            from peers import q8_0_torch

            f = torch.compile(q8_0_torch, mode="max-autotune-no-cudagraphs", dynamic=False)
            f(torch.randn(4096, device="cuda"))
            torch.cuda.synchronize()
    if "--torch-graph" in sys.argv:
        # A torch CUDA graph captured, replayed and kept alive in this process first.
        import torch

        t = torch.zeros(1, device="cuda")
        global KEEP_GRAPH
        KEEP_GRAPH = torch.cuda.CUDAGraph()
        with torch.cuda.graph(KEEP_GRAPH):
            t.fill_(1.0)
        KEEP_GRAPH.replay()
        torch.cuda.synchronize()
    ck(cu.cuInit(0), "init")
    dev = ctypes.c_int()
    ck(cu.cuDeviceGet(ctypes.byref(dev), 0), "device")
    ctx = ctypes.c_void_p()
    ck(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "context")
    ck(cu.cuCtxSetCurrent(ctx), "current")
    ptx = open(f"{pkg}/quantize_q8_0_f32/wave.sm_90.ptx", "rb").read() + b"\0"
    mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
    ck(cu.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(ptx)), "module")
    ck(cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"quantize_q8_0_f32_wave"), "function")
    k, nsets = 4096, 4096
    rng = random.Random()
    pool = array.array("f", (rng.gauss(0.0, 3.0) for _ in range(k * 64)))
    sets = []
    keep = []
    for s in range(nsets):
        if "--torch-buffers" in sys.argv:
            import torch

            t = torch.randn(k, device="cuda") * 3
            u = torch.empty(k // 32 * 34, dtype=torch.uint8, device="cuda")
            keep += [t, u]
            sets.append((t.data_ptr(), u.data_ptr()))
            continue
        x, o = ctypes.c_uint64(), ctypes.c_uint64()
        ck(cu.cuMemAlloc_v2(ctypes.byref(x), ctypes.c_size_t(k * 4)), "alloc")
        ck(cu.cuMemAlloc_v2(ctypes.byref(o), ctypes.c_size_t(k // 32 * 34)), "alloc")
        if "--torch-data" in sys.argv:
            import torch

            chunk = (torch.randn(k) * 3).numpy().tobytes()
            buf = ctypes.create_string_buffer(chunk, len(chunk))
            ck(cu.cuMemcpyHtoD_v2(x, buf, ctypes.c_size_t(k * 4)), "HtoD")
        else:
            start = (s * 997) % 63 * k
            chunk = pool[start:start + k]
            ck(cu.cuMemcpyHtoD_v2(x, ctypes.c_void_p(chunk.buffer_info()[0]), ctypes.c_size_t(k * 4)), "HtoD")
        sets.append((x.value, o.value))
    stream = ctypes.c_void_p()
    ck(cu.cuStreamCreate(ctypes.byref(stream), 1), "stream")
    extra = int(sys.argv[sys.argv.index("--extra-graphs") + 1]) if "--extra-graphs" in sys.argv else 0
    execs = [capture(fn, 4, 256, sets, k, stream) for _ in range(1 + extra)]
    exe = execs[-1]
    for _ in range(5):
        ck(cu.cuGraphLaunch(exe, stream), "graph launch")
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 1
    for r in range(rounds):
        med, times = us_per_node(exe, stream, nsets)
        print(f"round {r}: {med:.2f} us a node ({' '.join(f'{t:.2f}' for t in times)})", flush=True)


if __name__ == "__main__":
    main()
