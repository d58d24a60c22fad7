// How fast can a kernel stream bytes from HBM, by the three ways sm_90 has to read them: plain
// 16-byte loads into registers, 16-byte `cp.async` into shared memory, and 1-D bulk copies by the
// Tensor Memory Accelerator (`cp.async.bulk` completed on an mbarrier). A probe for the k4 GEMV's
// question (docs/gemv.md: "Weight bytes in LDS by async copies"): whether bytes in flight that
// hold no register and skip the L1's request path stream faster. Not a kiln kernel; nothing of
// kiln is built from it. Written 2026-12-07 (forty-sixth session); first run on an H100 in the
// forty-seventh (bench/results/held-2026-12-07.md: bulk copies 3.5-10% slower than plain loads).
//
// Each kernel reads `bytes` from one of `copies` buffers (rotated, together past the L2), folds
// every 32-bit word into an xor a thread (so no load is dead) and writes one word a block.
// Timing as kiln bench does: a CUDA graph of `launches` launches (each the next buffer), after
// warm-up, CUDA events, the median of `reps` replays; us a launch and GB/s.
//
// Build: nvcc -O3 -arch=sm_90 -o read_paths read_paths.cu
// Run:   ./read_paths [MiB ...]   (default: 17 and 60, the N = 4096 and N = 14336 GEMVs' bytes)
#include "probe.cuh"

// Plain loads: each thread `U` 16-byte loads in flight, then folds them; grid-stride over uint4.
template <int U>
__global__ void read_ld(const uint4* __restrict__ src, size_t n, unsigned* out) {
    unsigned acc = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (U - 1) * stride < n; i += U * stride) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++) v[u] = __ldg(src + i + u * stride);
#pragma unroll
        for (int u = 0; u < U; u++) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < n; i += stride) {
        uint4 v = __ldg(src + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) out[blockIdx.x] = acc;  // never true on random data: keeps the loads
}

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

// `cp.async` (16 bytes a thread a stage) into a ring of `S` stages, `S - 1` ahead; each thread
// reads back its own chunks. A block takes a contiguous range of `per_block` uint4.
template <int S, int PER>
__global__ void read_cpasync(const uint4* __restrict__ src, size_t per_block, unsigned* out) {
    extern __shared__ uint4 ring[];  // [S][PER][blockDim]
    const uint4* base = src + (size_t)blockIdx.x * per_block;
    size_t stage_items = (size_t)PER * blockDim.x;
    size_t trips = per_block / stage_items;
    unsigned acc = 0;
    auto issue = [&](size_t trip) {
        int s = trip % S;
#pragma unroll
        for (int p = 0; p < PER; p++) {
            uint4* d = ring + ((size_t)s * PER + p) * blockDim.x + threadIdx.x;
            const uint4* g = base + trip * stage_items + (size_t)p * blockDim.x + threadIdx.x;
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_addr(d)), "l"(g)
                         : "memory");
        }
    };
    for (int t = 0; t < S - 1; t++) {
        if (t < trips) issue(t);
        asm volatile("cp.async.commit_group;" ::: "memory");
    }
    for (size_t t = 0; t < trips; t++) {
        if (t + S - 1 < trips) issue(t + S - 1);
        asm volatile("cp.async.commit_group;" ::: "memory");
        asm volatile("cp.async.wait_group %0;" ::"n"(S - 1) : "memory");
        int s = t % S;
#pragma unroll
        for (int p = 0; p < PER; p++) {
            uint4 v = ring[((size_t)s * PER + p) * blockDim.x + threadIdx.x];
            acc ^= v.x ^ v.y ^ v.z ^ v.w;
        }
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    if (acc == 0x9e3779b9u) out[blockIdx.x] = acc;
}

// 1-D bulk copies: thread 0 issues one `cp.async.bulk` of `stage_bytes` a stage, completed on
// the stage's mbarrier (`expect_tx`); every thread waits for the stage's phase, folds its part
// of it, and the block syncs before the stage is refilled.
template <int S>
__global__ void read_bulk(const uint4* __restrict__ src, size_t per_block, unsigned stage_bytes,
                          unsigned* out) {
    extern __shared__ __align__(128) unsigned char smem[];
    uint64_t* bars = reinterpret_cast<uint64_t*>(smem);
    unsigned char* ring = smem + 128;
    const unsigned char* base =
        reinterpret_cast<const unsigned char*>(src + (size_t)blockIdx.x * per_block);
    size_t trips = per_block * 16 / stage_bytes;
    if (threadIdx.x == 0) {
        for (int s = 0; s < S; s++)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&bars[s])));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    auto issue = [&](size_t trip) {
        int s = trip % S;
        unsigned bar = smem_addr(&bars[s]);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
                     "r"(stage_bytes)
                     : "memory");
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
            "[%3];" ::"r"(smem_addr(ring + (size_t)s * stage_bytes)),
            "l"(base + trip * stage_bytes), "r"(stage_bytes), "r"(bar)
            : "memory");
    };
    if (threadIdx.x == 0)
        for (int t = 0; t < S - 1 && t < trips; t++) issue(t);
    unsigned acc = 0;
    for (size_t t = 0; t < trips; t++) {
        if (threadIdx.x == 0 && t + S - 1 < trips) issue(t + S - 1);
        int s = t % S;
        unsigned parity = (t / S) & 1;
        unsigned bar = smem_addr(&bars[s]);
        asm volatile(
            "{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
            " @!p bra W;\n}" ::"r"(bar),
            "r"(parity)
            : "memory");
        const uint4* st = reinterpret_cast<const uint4*>(ring + (size_t)s * stage_bytes);
        for (unsigned j = threadIdx.x; j < stage_bytes / 16; j += blockDim.x) {
            uint4 v = st[j];
            acc ^= v.x ^ v.y ^ v.z ^ v.w;
        }
        __syncthreads();  // the stage is read before thread 0 refills it (S - 1 trips on)
    }
    if (acc == 0x9e3779b9u) out[blockIdx.x] = acc;
}

int main(int argc, char** argv) {
    std::vector<double> mibs;
    for (int i = 1; i < argc; i++) mibs.push_back(atof(argv[i]));
    if (mibs.empty()) mibs = {17, 60};
    int sms = print_device();
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    const size_t total = 512ull << 20;  // the copies together, past the L2
    unsigned* out;
    CK(cudaMalloc(&out, 1 << 20));
    // Copy bandwidth (as kiln bench measures it): a 1 GiB device-to-device copy.
    {
        void *a, *b;
        size_t n = 1ull << 30;
        CK(cudaMalloc(&a, n));
        CK(cudaMalloc(&b, n));
        CK(cudaMemset(a, 1, n));
        double us = time_graph(st, 1, 10, [&](int) { CK(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, st)); });
        printf("copy bandwidth %.1f GB/s (1 GiB copy %.1f us)\n", 2.0 * n / us / 1e3, us);
        CK(cudaFree(a));
        CK(cudaFree(b));
    }
    for (double mib : mibs) {
        const unsigned stage_bytes = 8192;  // the bulk copies' stage
        size_t blocks_all = (size_t)sms * 8;
        // Bytes a call: a multiple of every kernel's unit (8 blocks an SM x one 8 KB stage each:
        // every grid below divides it, and a block's range is whole stages of both copy kinds).
        size_t unit = blocks_all * 8192;
        size_t bytes = std::max<size_t>(unit, (size_t)(mib * (1 << 20)) / unit * unit);
        int copies = (int)std::max<size_t>(2, total / bytes);
        std::vector<unsigned char*> bufs(copies);
        for (auto& p : bufs) {
            CK(cudaMalloc(&p, bytes));
            // Random bytes (never timed on zeros): a cheap generator on the host, copied once.
        }
        {
            std::vector<unsigned> h = random_words(bytes / 4, 0x243f6a8885a308d3ull);
            for (auto p : bufs) CK(cudaMemcpy(p, h.data(), bytes, cudaMemcpyHostToDevice));
        }
        size_t n16 = bytes / 16;
        const int launches = 20, reps = 15;
        auto report = [&](const char* what, double us) {
            printf("%7.2f MiB  %-28s %8.2f us  %7.1f GB/s\n", bytes / 1048576.0, what, us,
                   bytes / us / 1e3);
        };
        for (int bpsm : {4, 8}) {
            int grid = sms * bpsm;
            char name[64];
            snprintf(name, sizeof name, "ld16 u4 %d/SM x256", bpsm);
            report(name, time_graph(st, launches, reps, [&](int i) {
                       read_ld<4><<<grid, 256, 0, st>>>((const uint4*)bufs[i % copies], n16, out);
                   }));
            snprintf(name, sizeof name, "ld16 u8 %d/SM x256", bpsm);
            report(name, time_graph(st, launches, reps, [&](int i) {
                       read_ld<8><<<grid, 256, 0, st>>>((const uint4*)bufs[i % copies], n16, out);
                   }));
        }
        {
            // cp.async: 8 blocks an SM of 256 threads, 2 uint4 a thread a stage, 4 stages (32 KB).
            int grid = (int)blocks_all;
            size_t per_block = n16 / grid;
            size_t sm = 4 * 2 * 256 * 16;
            CK(cudaFuncSetAttribute(read_cpasync<4, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm));
            report("cp.async 4x8KB 8/SM", time_graph(st, launches, reps, [&](int i) {
                       read_cpasync<4, 2><<<grid, 256, sm, st>>>((const uint4*)bufs[i % copies], per_block, out);
                   }));
        }
        for (int bpsm : {2, 4, 8}) {
            // Bulk: `bpsm` blocks an SM of 128 threads, 8 KB stages, as many stages as fit 200 KB.
            int grid = sms * bpsm;
            size_t per_block = n16 / grid;
            int stages = bpsm == 2 ? 8 : (bpsm == 4 ? 4 : 2);
            size_t sm = 128 + (size_t)stages * stage_bytes;
            char name[64];
            snprintf(name, sizeof name, "bulk %dx8KB %d/SM", stages, bpsm);
            auto go = [&](auto kern) {
                CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm));
                report(name, time_graph(st, launches, reps, [&](int i) {
                           kern<<<grid, 128, sm, st>>>((const uint4*)bufs[i % copies], per_block, stage_bytes, out);
                       }));
            };
            if (stages == 8) go(read_bulk<8>);
            if (stages == 4) go(read_bulk<4>);
            if (stages == 2) go(read_bulk<2>);
        }
        for (auto p : bufs) CK(cudaFree(p));
        CK(cudaGetLastError());
    }
    printf("done\n");
    return 0;
}
