// What the probes of this folder share: a CUDA error check, random bytes (never timed on
// zeros), and the timing `kiln bench` uses (a CUDA graph of launches, warm-up, CUDA events, the
// median of the replays). Not a kiln source; nothing of kiln is built from it.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                            \
    do {                                                                                 \
        cudaError_t e_ = (x);                                                            \
        if (e_ != cudaSuccess) {                                                         \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

// Prints the current device's name and SM count; returns the count.
static int print_device() {
    int dev = 0, sms = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    printf("device %s, %d SMs\n", prop.name, sms);
    return sms;
}

// `words` random 32-bit words, none zero (a xorshift from `seed`).
static std::vector<unsigned> random_words(size_t words, uint64_t seed) {
    std::vector<unsigned> h(words);
    uint64_t x = seed;
    for (auto& w : h) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        w = (unsigned)x | 1u;
    }
    return h;
}

// Median us a launch of `launches` launches captured in one graph, `launch(i)` the i-th.
template <typename F>
static double time_graph(cudaStream_t st, int launches, int reps, F launch) {
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < launches; i++) launch(i);
    CK(cudaStreamEndCapture(st, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    for (int w = 0; w < 3; w++) CK(cudaGraphLaunch(ge, st));
    CK(cudaStreamSynchronize(st));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<double> t;
    for (int r = 0; r < reps; r++) {
        CK(cudaEventRecord(a, st));
        CK(cudaGraphLaunch(ge, st));
        CK(cudaEventRecord(b, st));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms * 1000.0 / launches);
    }
    std::sort(t.begin(), t.end());
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    return t[t.size() / 2];
}
