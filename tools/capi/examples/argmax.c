/* kiln's C API end to end: open a package, pick a device, check a launch's refusal, run
 * argmax_rows on random logits (with ties, NaN and -inf rows) and compare with the argmax
 * computed here, then capture a one-node decode graph and replay it with a variable changed.
 * The buffers are one group, the launches run under an L2 window over it (applied on cuda,
 * ignored elsewhere: the results are the same), and a runtime loaded with only other kernels
 * refuses argmax_rows.
 *
 * Usage: argmax PACKAGE_DIR cpu|cuda|hip [SEED [CPU_ARCH]]; exits 0 when every check holds.
 * Built and run by tools/capi/tests/c_program.rs (cpu device, in CI) and by hand on a GPU. */
#include "kiln.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                     \
    do {                                                                                \
        KilnStatus s_ = (call);                                                         \
        if (s_ != KILN_STATUS_OK) {                                                     \
            fprintf(stderr, "%s:%d: %s -> status %d: %s\n", __FILE__, __LINE__, #call,  \
                    (int)s_, kiln_last_error());                                        \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static unsigned long long state;
static unsigned long long next(void) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

/* torch.argmax: the first NaN wins; else the first largest; a row of -inf gives 0. */
static int argmax(const float *x, unsigned n) {
    int best = 0;
    for (unsigned i = 0; i < n; i++) {
        if (isnan(x[i])) return (int)i;
        if (x[i] > x[best]) best = (int)i;
    }
    return best;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s PACKAGE_DIR cpu|cuda|hip [SEED [CPU_ARCH]]\n", argv[0]);
        return 2;
    }
    state = argc > 3 ? strtoull(argv[3], NULL, 10) | 1 : 0x9e3779b97f4a7c15ull;
    const char *cpu_arch = argc > 4 ? argv[4] : NULL;
    printf("seed %llu\n", state);

    KilnPackage *pkg = NULL;
    KilnDevice *dev = NULL;
    KilnRuntime *rt = NULL;
    CHECK(kiln_package_open(argv[1], &pkg));
    CHECK(kiln_device_open(argv[2], 0, cpu_arch, &dev));
    CHECK(kiln_runtime_load(dev, pkg, &rt));

    enum { ROWS = 3, N = 4099 };
    static float logits[ROWS * N];
    for (unsigned i = 0; i < ROWS * N; i++)
        logits[i] = (float)((double)(next() % 2000000) / 1000.0 - 1000.0);
    /* Row 1: a tie for the largest (the first wins) and a -inf; row 2: a NaN after a large one. */
    logits[1 * N + 17] = 5000.0f;
    logits[1 * N + 4000] = 5000.0f;
    logits[1 * N + 3] = -INFINITY;
    logits[2 * N + 5] = 7000.0f;
    logits[2 * N + 2001] = NAN;

    /* The logits and the ids side by side in one group, the group's range in an L2 window:
     * the logits persisting, the ids after them streaming. */
    KilnDtype dtypes[2] = {KILN_DTYPE_F32, KILN_DTYPE_I32};
    size_t lens[2] = {ROWS * N, ROWS};
    KilnBuffer *group[2] = {NULL, NULL};
    CHECK(kiln_buffer_alloc_group(dev, dtypes, lens, 2, group));
    KilnBuffer *x = group[0], *out = group[1];
    uint64_t ax = 0, aout = 0;
    CHECK(kiln_buffer_device_address(x, &ax));
    CHECK(kiln_buffer_device_address(out, &aout));
    if (aout <= ax) {
        fprintf(stderr, "the group's second buffer (%llx) is not after its first (%llx)\n",
                (unsigned long long)aout, (unsigned long long)ax);
        return 1;
    }
    KilnL2Window window = {ax, aout + ROWS * 4 - ax, 0.5f, KILN_L2_ACCESS_PERSISTING,
                           KILN_L2_ACCESS_STREAMING};
    KilnL2Applied applied;
    CHECK(kiln_device_set_l2_window(dev, &window, &applied));
    int on_cuda = strcmp(argv[2], "cuda") == 0;
    if ((applied.result == KILN_L2_RESULT_APPLIED) != on_cuda) {
        fprintf(stderr, "L2 window: result %d on %s\n", (int)applied.result, argv[2]);
        return 1;
    }
    printf("L2 window: result %d, %llu bytes set aside\n", (int)applied.result,
           (unsigned long long)applied.set_aside);
    window.hit_ratio = 2.0f;
    if (kiln_device_set_l2_window(dev, &window, NULL) != KILN_STATUS_DEVICE ||
        !strstr(kiln_last_error(), "hit ratio")) {
        fprintf(stderr, "a hit ratio of 2 was not refused: %s\n", kiln_last_error());
        return 1;
    }
    CHECK(kiln_buffer_write(x, (const unsigned char *)logits, sizeof logits));

    /* A runtime with only other kernels loaded has no argmax_rows. */
    const char *others[1] = {"no_such_kernel"};
    KilnRuntime *none = NULL;
    CHECK(kiln_runtime_load_only(dev, pkg, others, 1, &none));

    /* A launch without its input is refused before it runs, naming the parameter. */
    KilnArgs *bad = kiln_args_new();
    CHECK(kiln_args_buffer(bad, "out", out));
    CHECK(kiln_args_scalar(bad, "rows", KILN_DTYPE_U32, ROWS));
    CHECK(kiln_args_scalar(bad, "n", KILN_DTYPE_U32, N));
    KilnStatus s = kiln_launch(rt, "argmax_rows", bad, NULL, 0);
    if (s != KILN_STATUS_LAUNCH || !strstr(kiln_last_error(), "logits")) {
        fprintf(stderr, "expected a launch error naming logits, got %d: %s\n", (int)s,
                kiln_last_error());
        return 1;
    }
    printf("refused: %s\n", kiln_last_error());
    s = kiln_launch(none, "argmax_rows", bad, NULL, 0);
    if (s == KILN_STATUS_OK || !strstr(kiln_last_error(), "argmax_rows")) {
        fprintf(stderr, "a runtime without argmax_rows launched it: %d: %s\n", (int)s,
                kiln_last_error());
        return 1;
    }
    printf("not loaded: %s\n", kiln_last_error());
    kiln_runtime_free(none);
    kiln_args_free(bad);

    KilnArgs *args = kiln_args_new();
    CHECK(kiln_args_buffer(args, "logits", x));
    CHECK(kiln_args_buffer(args, "out", out));
    CHECK(kiln_args_scalar(args, "rows", KILN_DTYPE_U32, ROWS));
    CHECK(kiln_args_scalar(args, "n", KILN_DTYPE_U32, N));
    char variant[64];
    CHECK(kiln_launch(rt, "argmax_rows", args, variant, sizeof variant));
    CHECK(kiln_synchronize(rt));
    int got[ROWS];
    CHECK(kiln_buffer_read(out, (unsigned char *)got, sizeof got));
    for (unsigned r = 0; r < ROWS; r++) {
        int want = argmax(logits + r * N, N);
        if (got[r] != want) {
            fprintf(stderr, "launch (%s): row %u: kiln %d, expected %d\n", variant, r, got[r], want);
            return 1;
        }
    }
    printf("launch ok: variant %s, argmax %d %d %d\n", variant, got[0], got[1], got[2]);
    kiln_args_free(args);

    /* One node, rows from the variable `rows`: captured once, replayed for 1 then 3 rows. */
    KilnGraph *g = kiln_graph_new();
    CHECK(kiln_graph_add_buffer(g, "x", x));
    CHECK(kiln_graph_add_buffer(g, "y", out));
    KilnNodeArgs *na = kiln_node_args_new();
    CHECK(kiln_node_args_buffer(na, "logits", "x"));
    CHECK(kiln_node_args_buffer(na, "out", "y"));
    CHECK(kiln_node_args_var(na, "rows", "rows"));
    CHECK(kiln_node_args_scalar(na, "n", KILN_DTYPE_U32, N));
    CHECK(kiln_graph_set_u32(g, "rows", 1));
    CHECK(kiln_graph_add_node(g, rt, "argmax_rows", na));
    kiln_node_args_free(na);
    KilnCaptured *cap = NULL;
    CHECK(kiln_graph_capture(g, rt, &cap));
    /* Free the graph and the runtime first: the captured graph keeps what it needs alive. */
    kiln_graph_free(g);
    kiln_runtime_free(rt);
    int minus[ROWS] = {-1, -1, -1};
    CHECK(kiln_buffer_write(out, (const unsigned char *)minus, sizeof minus));
    CHECK(kiln_captured_replay(cap));
    CHECK(kiln_buffer_read(out, (unsigned char *)got, sizeof got));
    if (got[0] != argmax(logits, N) || got[1] != -1 || got[2] != -1) {
        fprintf(stderr, "replay rows=1: %d %d %d\n", got[0], got[1], got[2]);
        return 1;
    }
    CHECK(kiln_captured_set_u32(cap, "rows", ROWS));
    CHECK(kiln_captured_replay(cap));
    CHECK(kiln_buffer_read(out, (unsigned char *)got, sizeof got));
    for (unsigned r = 0; r < ROWS; r++) {
        if (got[r] != argmax(logits + r * N, N)) {
            fprintf(stderr, "replay rows=3: row %u: kiln %d\n", r, got[r]);
            return 1;
        }
    }
    printf("graph ok: replayed with rows=1 then rows=%d\n", ROWS);
    kiln_captured_free(cap);
    CHECK(kiln_device_set_l2_window(dev, NULL, &applied));
    if ((applied.result == KILN_L2_RESULT_CLEARED) != on_cuda) {
        fprintf(stderr, "clearing the L2 window: result %d\n", (int)applied.result);
        return 1;
    }
    kiln_buffer_free(x);
    kiln_buffer_free(out);
    kiln_device_free(dev);
    kiln_package_free(pkg);
    printf("all checks passed\n");
    return 0;
}
