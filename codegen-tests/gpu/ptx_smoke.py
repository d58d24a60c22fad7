# Device check of kiln's PTX on an NVIDIA GPU (no Rust needed there): loads the PTX with the CUDA
# driver through ctypes, runs the example kernels and compares the results bitwise with a Python
# model of the same butterflies and orders. Make the PTX files here first:
#   D=target/debug/examples/dump   (cargo build -p kiln-codegen-tests --example dump)
#   $D wave_sum b sm_90 > wave_sum.ptx; $D tsum_tokens p8 sm_90 > tsum.ptx
#   $D tsum_tokens p4 sm_90 > tsum4.ptx; $D workgroup_sum b sm_90 > wgsum.ptx
#   $D argmax_row b sm_90 > argmax.ptx
# then run `python3 ptx_smoke.py` in this directory on the GPU machine.
# Loads kiln's PTX with the CUDA driver (ctypes), runs wave_sum and tsum_tokens, and compares
# with a Python model of the same butterflies (float32, bitwise).
import ctypes, struct, random, sys, os
cu = ctypes.CDLL("libcuda.so.1")
def ck(r, what):
    if r != 0:
        s = ctypes.c_char_p(); cu.cuGetErrorString(r, ctypes.byref(s)); sys.exit(f"{what}: {r} {s.value}")
ck(cu.cuInit(0), "init"); dev = ctypes.c_int(); ck(cu.cuDeviceGet(ctypes.byref(dev), 0), "dev")
ctx = ctypes.c_void_p(); ck(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "ctx"); ck(cu.cuCtxSetCurrent(ctx), "set")
def f32(x): return struct.unpack('f', struct.pack('f', x))[0]
def load(path, name):
    m = ctypes.c_void_p(); ck(cu.cuModuleLoadData(ctypes.byref(m), open(path,'rb').read() + b'\0'), "load " + path)
    f = ctypes.c_void_p(); ck(cu.cuModuleGetFunction(ctypes.byref(f), m, name.encode()), "func"); return f
def buf(vals):
    p = ctypes.c_uint64(); n = 4 * max(1, len(vals)); ck(cu.cuMemAlloc_v2(ctypes.byref(p), n), "alloc")
    data = struct.pack(f'{len(vals)}f', *vals); ck(cu.cuMemcpyHtoD_v2(p, data, len(data)), "h2d"); return p
def get(p, n):
    b = ctypes.create_string_buffer(4 * n); ck(cu.cuMemcpyDtoH_v2(b, p, 4 * n), "d2h"); return list(struct.unpack(f'{n}f', b.raw))
def launch(f, grid, block, args):
    arr = (ctypes.c_void_p * len(args))(*[ctypes.cast(ctypes.byref(a), ctypes.c_void_p) for a in args])
    ck(cu.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, None, arr, None), "launch"); ck(cu.cuCtxSynchronize(), "sync")
def bfly(v):
    v = list(v); o = 16
    while o >= 1:
        v = [f32(v[i] + v[i ^ o]) for i in range(32)]; o //= 2
    return v
random.seed(1); W = 32; bad = 0
# wave_sum
G = 64; x = [f32(random.uniform(-1e3, 1e3) * 2 ** random.randint(-20, 20)) for _ in range(G * W)]
px, po = buf(x), buf([0.0] * G)
launch(load("wave_sum.ptx", "wave_sum"), G, W, [px, po, ctypes.c_uint32(G)])
got = get(po, G)
for g in range(G):
    want = bfly(x[g*W:(g+1)*W])[0]
    if struct.pack('f', got[g]) != struct.pack('f', want): bad += 1; print("wave_sum", g, got[g], want)
# tsum<p> over t=p tokens: token k alone through the same butterfly
for path, P in [("tsum.ptx", 8), ("tsum4.ptx", 4)]:
    T = P; x = [f32(random.uniform(-1, 1) * 2 ** random.randint(-30, 30)) for _ in range(G * T * W)]
    px, po = buf(x), buf([0.0] * G * T)
    launch(load(path, "tsum_tokens"), G, W, [px, po, ctypes.c_uint32(G)])
    got = get(po, G * T)
    for g in range(G):
        for k in range(T):
            lane = k * W // P
            want = bfly(x[(g*T + k)*W:(g*T + k + 1)*W])[lane]
            if struct.pack('f', got[g*T + k]) != struct.pack('f', want): bad += 1; print("tsum", P, g, k, got[g*T+k], want)
# workgroup_sum: 256 lanes, lane t sums i = t, t+256, ...; wave butterflies; wave 0 reduces the 8 partials
L, n, R = 256, 1000, 16
x = [f32(random.uniform(-1, 1) * 2 ** random.randint(-10, 10)) for _ in range(R * n)]
px, po = buf(x), buf([0.0] * R)
launch(load("wgsum.ptx", "workgroup_sum"), R, L, [px, po, ctypes.c_uint32(n), ctypes.c_uint32(R)])
got = get(po, R)
for r in range(R):
    acc = [0.0] * L
    for t in range(L):
        for i in range(t, n, L): acc[t] = f32(acc[t] + x[r*n + i])
    parts = [bfly(acc[w*32:(w+1)*32])[0] for w in range(L // 32)] + [0.0] * (32 - L // 32)
    want = bfly(parts)[0]
    if struct.pack('f', got[r]) != struct.pack('f', want): bad += 1; print("workgroup_sum", r, got[r], want)
# argmax_row: ties to the lowest index, NaN largest
x = [float(random.randint(0, 50)) for _ in range(R * n)]
x[3*n + 777] = float('nan'); x[3*n + 900] = float('nan')
px = buf(x); po = buf([0.0] * R)
launch(load("argmax.ptx", "argmax_row"), R, L, [px, po, ctypes.c_uint32(n), ctypes.c_uint32(R)])
b = ctypes.create_string_buffer(4 * R); ck(cu.cuMemcpyDtoH_v2(b, po, 4 * R), "d2h"); got = struct.unpack(f'{R}I', b.raw)
for r in range(R):
    row = x[r*n:(r+1)*n]
    nans = [i for i, v in enumerate(row) if v != v]
    want = nans[0] if nans else row.index(max(row))
    if got[r] != want: bad += 1; print("argmax", r, got[r], want)
print(f"{3*G - bad} groups ok, {bad} mismatches" if bad else "wave_sum, tsum<8>, tsum<4>, workgroup_sum, argmax_row: all bitwise equal to the butterfly model")
