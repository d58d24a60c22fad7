// What a GEMV-shaped kernel can reach under programmatic dependent launch (PDL), replayed against
// itself in a CUDA graph as `kiln bench` does: each thread loads its share of the weights' bytes
// (16-byte loads, all in flight at once), and the variants differ only in where the
// grid-dependency wait falls and what is read after it. A probe for issue 12's small calls (N =
// 4096: docs/gemv.md): how much of the floor a kernel that does nothing but stream can keep, with
// its loads before the wait, and what reading the activations after the wait (as the sound k4
// variants must) costs. Not a kiln kernel; nothing of kiln is built from it. Written 2026-12-07
// (forty-seventh session).
//
// Modes (a kernel each):
//   plain       no PDL attribute: each launch starts after the one before has ended
//   pdl-entry   PDL, `griddepcontrol.launch_dependents` and `griddepcontrol.wait` at entry
//   pdl-early   PDL, launch_dependents at entry, the weights' loads, then the wait
//   pdl-act N   pdl-early, then each block reads N bytes of a small (L2-resident) buffer after
//               the wait, as the k4 waves read their activations (36 KiB a block of eight waves
//               at T = 8, 4.5 KiB at T = 1)
// Blocks of 256 threads take 100 KiB of dynamic shared memory, so two fit an SM (as the k4
// family's eight-wave workgroups at 128 registers): the next launch's blocks take an SM's slots
// only as this launch's leave it.
//
// Build: nvcc -O3 -arch=sm_90 -o pdl_floor pdl_floor.cu
// Run:   ./pdl_floor
#include "probe.cuh"

constexpr int THREADS = 256;
constexpr int V = 17;  // 16-byte vectors a thread: 272 bytes (N = 4096: 256 blocks)

enum Mode { PLAIN = 0, PDL_ENTRY = 1, PDL_EARLY = 2, PDL_ACT = 3 };

// A coherent 16-byte load (`ld.global`): ptxas (CUDA 13, sm_90) moves `ld.global.nc` loads
// above `griddepcontrol.wait` (docs/gemv.md, "The activations stay after the wait"), never these.
__device__ __forceinline__ uint4 load_coherent(const uint4* p) {
    uint4 a;
    asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(a.x), "=r"(a.y), "=r"(a.z), "=r"(a.w)
                 : "l"(p)
                 : "memory");
    return a;
}

template <int MODE>
__global__ void __launch_bounds__(THREADS) stream(const uint4* __restrict__ w, const uint4* act,
                                                  int act_vectors, unsigned* out) {
    if (MODE != PLAIN) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    if (MODE == PDL_ENTRY) asm volatile("griddepcontrol.wait;" ::: "memory");
    const uint4* mine = w + (size_t)blockIdx.x * THREADS * V + threadIdx.x;
    uint4 v[V];
#pragma unroll
    for (int u = 0; u < V; u++)
        v[u] = MODE == PDL_ENTRY ? load_coherent(mine + u * THREADS) : __ldg(mine + u * THREADS);
    unsigned held = 0;  // every loaded bit, folded
#pragma unroll
    for (int u = 0; u < V; u++) held ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    if (MODE >= PDL_EARLY) {
        // Keep the loads before the wait, as kiln's `prefetch::hold` does: a prefetch whose
        // address depends on every loaded bit stays before it (without one ptxas sinks the
        // loads below `ACQBULK`).
        const char* at = reinterpret_cast<const char*>(w) + (held == 0x9e3779b9u);
        asm volatile("prefetch.global.L2 [%0];" ::"l"(at) : "memory");
        asm volatile("griddepcontrol.wait;" ::: "memory");
    }
    unsigned acc = held;
    if (MODE == PDL_ACT) {
        // Coherent loads (the grid before may have written them), after the wait.
        for (int i = threadIdx.x; i < act_vectors; i += THREADS) {
            uint4 a = load_coherent(act + i);
            acc += a.x ^ a.y ^ a.z ^ a.w;
        }
    }
    if (acc == 0x9e3779b9u) out[blockIdx.x] = acc;  // never true on random data: keeps the loads
}

using Kernel = void (*)(const uint4*, const uint4*, int, unsigned*);

// The kernel of mode `mode`.
static Kernel kernel_of(int mode) {
    static const Kernel kernels[] = {stream<PLAIN>, stream<PDL_ENTRY>, stream<PDL_EARLY>,
                                     stream<PDL_ACT>};
    return kernels[mode];
}

// The launch of mode `mode` on weights `w`: programmatic (a PDL edge to the launch before it in
// the graph) for every mode but `PLAIN`.
static void launch(cudaStream_t st, int blocks, int mode, const uint4* w, const uint4* act,
                   int act_vectors, unsigned* out) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = 100 << 10;
    cfg.stream = st;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = mode == PLAIN ? 0 : 1;
    CK(cudaLaunchKernelEx(&cfg, kernel_of(mode), w, act, act_vectors, out));
}

int main() {
    print_device();
    for (int mode = PLAIN; mode <= PDL_ACT; mode++)
        CK(cudaFuncSetAttribute(kernel_of(mode), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                100 << 10));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, stream<PDL_ACT>, THREADS, 100 << 10));
    printf("blocks an SM: %d\n", per_sm);
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    unsigned* out;
    CK(cudaMalloc(&out, 1 << 20));
    uint4* act;
    CK(cudaMalloc(&act, 64 << 10));
    {
        std::vector<unsigned> h = random_words((64 << 10) / 4, 0x13198a2e03707344ull);
        CK(cudaMemcpy(act, h.data(), 64 << 10, cudaMemcpyHostToDevice));
    }
    // The k4 family's weight bytes at K = 4096 (quants and scales), rounded to whole blocks.
    const size_t unit = (size_t)THREADS * V * 16;
    for (size_t want : {(size_t)4096 * 4096 * 34 / 32, (size_t)14336 * 4096 * 34 / 32}) {
        int blocks = (int)((want + unit - 1) / unit);
        size_t bytes = blocks * unit;
        int copies = (int)std::max<size_t>(2, (512ull << 20) / bytes);
        std::vector<uint4*> bufs(copies);
        std::vector<unsigned> h = random_words(bytes / 4, 0x243f6a8885a308d3ull);
        for (auto& p : bufs) {
            CK(cudaMalloc(&p, bytes));
            CK(cudaMemcpy(p, h.data(), bytes, cudaMemcpyHostToDevice));
        }
        auto report = [&](const char* what, double us) {
            printf("%8.2f MB  %4d blocks  %-28s %8.2f us  %7.1f GB/s\n", bytes / 1e6, blocks, what,
                   us, bytes / us / 1e3);
        };
        const int launches = 20, reps = 15;
        auto time = [&](int mode, int act_vectors) {
            return time_graph(st, launches, reps, [&](int i) {
                launch(st, blocks, mode, bufs[i % copies], act, act_vectors, out);
            });
        };
        report("plain", time(PLAIN, 0));
        report("pdl-entry", time(PDL_ENTRY, 0));
        report("pdl-early", time(PDL_EARLY, 0));
        for (int act_bytes : {4608, 36864}) {
            char name[64];
            snprintf(name, sizeof name, "pdl-act %d", act_bytes);
            report(name, time(PDL_ACT, act_bytes / 16));
        }
        for (auto p : bufs) CK(cudaFree(p));
        CK(cudaGetLastError());
    }
    printf("done\n");
    return 0;
}
