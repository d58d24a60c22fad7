#!/usr/bin/env bash
# Prepares the GPU run of kiln-engine (scripts/engine-gpu.sh) in ROOT/.carry (ROOT: the checkout
# that calls the device, default this one), from models/ (scripts/fetch-smollm2.sh) and the
# llama-cpp-python sdist's llama.cpp (scripts/engine-oracle.sh unpacks it):
#   .carry/engine/      go.sh, llama.cpp's sources for CUDA (~8 MB), the gguf wheel, checksums
#   .carry/engine-m0..2 the Q4_1 model in three parts of ~33 MB (a call carries 64 MiB at most)
# Also needed there, as for the other GPU runs: .carry/kiln (the runtime-only binary:
# cargo build --release -p kiln --no-default-features) and .carry/dist (a package with the
# engine's kernels for sm_90; the whole library has them).
# On the device, while the machine stays warm (30 s between calls):
#   call 1: carry .carry/kiln .carry/dist .carry/engine .carry/engine-m0; bash .carry/engine/go.sh stash
#   call 2: carry .carry/engine-m1;  bash .carry/engine/go.sh stash
#   call 3: carry .carry/engine-m2;  bash .carry/engine/go.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=${1:-.}
models=${KILN_MODELS:-models}
L=${LLAMA_CPP:-.peers/llamacpp-src/llama_cpp_python-0.3.36/vendor/llama.cpp}
[ -d "$L/ggml" ] || { echo "no llama.cpp source at $L: run scripts/engine-oracle.sh (or set LLAMA_CPP)"; exit 1; }
E=$ROOT/.carry/engine
mkdir -p "$E"
cp scripts/engine-gpu.sh "$E/go.sh"
tar czf "$E/llama-src.tgz" -C "$L" --exclude='ggml/src/ggml-vulkan' --exclude='ggml/src/ggml-sycl' \
    --exclude='ggml/src/ggml-opencl' --exclude='ggml/src/ggml-cann' --exclude='ggml/src/ggml-metal' \
    --exclude='ggml/src/ggml-musa' --exclude='ggml/src/ggml-webgpu' --exclude='ggml/src/ggml-hexagon' \
    --exclude='ggml/src/ggml-et' --exclude='tools/server/public*' --exclude=build \
    CMakeLists.txt cmake common ggml include src tools vendor licenses LICENSE app
rm -f "$E"/gguf-*.whl
python3 -m pip download --quiet --no-deps gguf==0.19.0 -d "$E"
(cd "$models" && sha256sum SmolLM2-135M-Instruct.Q4_1.gguf) > "$E/SHA256SUMS.q4_1"
q4="$models/SmolLM2-135M-Instruct.Q4_1.gguf"
size=$(stat -c %s "$q4")
part=$(( (size + 2) / 3 ))
for i in 0 1 2; do
    mkdir -p "$ROOT/.carry/engine-m$i"
    rm -f "$ROOT/.carry/engine-m$i"/*.part*
    dd if="$q4" of="$ROOT/.carry/engine-m$i/SmolLM2-135M-Instruct.Q4_1.gguf.part$i" bs=1M \
        iflag=skip_bytes,count_bytes skip=$((i * part)) count=$part status=none
done
du -sh "$E" "$ROOT"/.carry/engine-m*
