# Device check of kiln's mma.sync lowering on an NVIDIA GPU (sm_80+; no Rust needed there): loads
# the GEMM-tile PTX (kiln_specs::mma::tile, 2 K steps) with the CUDA driver through ctypes and
# compares D with a Python model of the plain product: int8 bit for bit (i32 wrapping), f16 as the
# largest abs / ulp difference from the interpreter's model (products exact, each K step summed
# in f64 from C and rounded once to f32), which is the bound to state. Make the PTX here first:
#   cargo build -p kiln-codegen-tests --example dump; D=target/debug/examples/dump
#   $D mma_tile m16n8k32 sm_90 > mma_i8.ptx; $D mma_tile m16n8k32_u8 sm_90 > mma_u8.ptx
#   $D mma_tile m16n8k16 sm_90 > mma_f16.ptx
# then run `python3 mma_smoke.py` in this directory on the GPU machine. Exit status 1 on an int8
# mismatch or an f16 NaN/inf mismatch; the f16 difference is printed, not judged.
import ctypes, struct, random, sys, math
cu = ctypes.CDLL("libcuda.so.1")
def ck(r, what):
    if r != 0:
        s = ctypes.c_char_p(); cu.cuGetErrorString(r, ctypes.byref(s)); sys.exit(f"{what}: {r} {s.value}")
ck(cu.cuInit(0), "init"); dev = ctypes.c_int(); ck(cu.cuDeviceGet(ctypes.byref(dev), 0), "dev")
ctx = ctypes.c_void_p(); ck(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "ctx"); ck(cu.cuCtxSetCurrent(ctx), "set")
def load(path, name):
    m = ctypes.c_void_p(); ck(cu.cuModuleLoadData(ctypes.byref(m), open(path, 'rb').read() + b'\0'), "load " + path)
    f = ctypes.c_void_p(); ck(cu.cuModuleGetFunction(ctypes.byref(f), m, name.encode()), "func"); return f
def buf(data):
    p = ctypes.c_uint64(); ck(cu.cuMemAlloc_v2(ctypes.byref(p), max(4, len(data))), "alloc")
    ck(cu.cuMemcpyHtoD_v2(p, data, len(data)), "h2d"); return p
def get(p, n):
    b = ctypes.create_string_buffer(n); ck(cu.cuMemcpyDtoH_v2(b, p, n), "d2h"); return b.raw
def run(f, a, b, c, nd):
    pa, pb, pc = buf(a), buf(b), buf(c); pd = buf(b'\xa5' * nd)
    args = [pa, pb, pc, pd]
    arr = (ctypes.c_void_p * 4)(*[ctypes.cast(ctypes.byref(x), ctypes.c_void_p) for x in args])
    ck(cu.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, None, arr, None), "launch"); ck(cu.cuCtxSynchronize(), "sync")
    return get(pd, nd)

M, N, STEPS = 16, 8, 2
failed = 0

def int_tile(path, k, a_unsigned):
    global failed
    kt = k * STEPS
    f = load(path, "mma_i8")
    afmt = 'B' if a_unsigned else 'b'
    cases = []
    r = random.Random(1)
    for name in ["random", "random", "-128 x -128 past i32::MAX", "-128 x 127 from i32::MIN"]:
        if name == "random":
            a = [r.randrange(256) if a_unsigned else r.randrange(-128, 128) for _ in range(M * kt)]
            b = [r.randrange(-128, 128) for _ in range(kt * N)]
            c = [r.randrange(-2**31, 2**31) for _ in range(M * N)]
        elif name.startswith("-128 x -128"):
            a = [255 if a_unsigned else -128] * (M * kt); b = [-128] * (kt * N)
            c = [0x7fffff00 + i % 256 for i in range(M * N)]
        else:
            a = [255 if a_unsigned else -128] * (M * kt); b = [127] * (kt * N); c = [-2**31] * (M * N)
        cases.append((name, a, b, c))
    for name, a, b, c in cases:
        got = struct.unpack(f'{M*N}i', run(f, struct.pack(f'{len(a)}{afmt}', *a), struct.pack(f'{len(b)}b', *b),
                                           struct.pack(f'{len(c)}i', *c), 4 * M * N))
        want = []
        for i in range(M):
            for j in range(N):
                s = c[i * N + j] + sum(a[i * kt + kk] * b[j * kt + kk] for kk in range(kt))
                want.append((s + 2**31) % 2**32 - 2**31)
        bad = [x for x in range(M * N) if got[x] != want[x]]
        print(f"{'ok  ' if not bad else 'FAIL'} {path} [{name}]" + (f": {len(bad)} differ, first D[{bad[0]}] = {got[bad[0]]} want {want[bad[0]]}" if bad else ""))
        failed += bool(bad)

def f32(x): return struct.unpack('f', struct.pack('f', x))[0]
def ordered(x):
    b = struct.unpack('<i', struct.pack('<f', x))[0]
    return b if b >= 0 else -2**31 - b
def f16_tile(path, k):
    global failed
    kt = k * STEPS
    f = load(path, "mma_f16")
    r = random.Random(2)
    half = lambda x: struct.unpack('e', struct.pack('e', x))[0]
    cases = []
    for name, scale in [("random", 1.0), ("random, wide", 100.0), ("random, tiny", 1e-3)]:
        a = [half(r.gauss(0, scale)) for _ in range(M * kt)]; b = [half(r.gauss(0, scale)) for _ in range(kt * N)]
        c = [f32(r.gauss(0, 10)) for _ in range(M * N)]
        cases.append((name, a, b, c))
    b = [65504.0] * (kt * N); b[0] = math.inf; b[1] = math.nan
    cases.append(("f16 max, inf and NaN in column 0", [65504.0] * (M * kt), b, [0.0] * (M * N)))
    for name, a, b, c in cases:
        got = struct.unpack(f'{M*N}f', run(f, struct.pack(f'{len(a)}e', *a), struct.pack(f'{len(b)}e', *b),
                                           struct.pack(f'{len(c)}f', *c), 4 * M * N))
        max_abs, max_ulp, special = 0.0, 0, 0
        for i in range(M):
            for j in range(N):
                acc = c[i * N + j]
                for s in range(STEPS):
                    t = acc
                    for kk in range(s * k, (s + 1) * k):
                        t += a[i * kt + kk] * b[j * kt + kk]
                    acc = f32(t) if math.isfinite(t) else t
                g = got[i * N + j]
                if not (math.isfinite(acc) and math.isfinite(g)):
                    special += not ((math.isnan(acc) and math.isnan(g)) or acc == g)
                    continue
                max_abs = max(max_abs, abs(acc - g)); max_ulp = max(max_ulp, abs(ordered(acc) - ordered(g)))
        print(f"{'ok  ' if not special else 'FAIL'} {path} [{name}]: max abs diff {max_abs:.3g}, max ulp diff {max_ulp}, NaN/inf mismatches {special}")
        failed += bool(special)

int_tile("mma_i8.ptx", 32, False)
int_tile("mma_u8.ptx", 32, True)
f16_tile("mma_f16.ptx", 16)
sys.exit(1 if failed else 0)
