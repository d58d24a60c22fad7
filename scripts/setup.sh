#!/usr/bin/env bash
# Installs what the build needs and is missing: LLVM 19 (static), lld, the LLVM tools, zstd,
# and ROCm's HIP headers for the `hip` feature. Safe to run again: it installs only what is absent.
set -euo pipefail

packages=(llvm-19-dev lld-19 llvm-19-tools libpolly-19-dev libzstd-dev libamdhip64-dev)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}" >&2
    sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# gguf and NumPy: the outside references (bench/gemv_ref.py) quantize with ggml's Python package.
if ! python3 -c 'import gguf, numpy' >/dev/null 2>&1; then
    python3 -m pip install -q gguf numpy >/dev/null 2>&1 \
        || { echo "setup: could not install gguf and numpy (pip); the outside references need them" >&2; exit 1; }
fi

# ptxas, so every PTX is assembled in the tests and `kiln build` reports NVIDIA registers, and
# nvdisasm, so the tests read the SASS where the order of instructions matters (early loads).
# Best effort: without them those checks say "not measured" / skip with a message.
if ! command -v ptxas >/dev/null && [[ -z "${KILN_PTXAS:-}" ]]; then
    if ! ls "$(python3 -c 'import site; print(site.getsitepackages()[0])')"/nvidia/*/bin/ptxas >/dev/null 2>&1; then
        python3 -m pip install -q nvidia-cuda-nvcc >/dev/null 2>&1 \
            || echo "setup: could not install nvidia-cuda-nvcc (ptxas); PTX checks will be skipped" >&2
    fi
fi
if ! command -v nvdisasm >/dev/null && [[ -z "${KILN_NVDISASM:-}" ]]; then
    if ! ls "$(python3 -c 'import site; print(site.getsitepackages()[0])')"/nvidia/*/bin/nvdisasm >/dev/null 2>&1; then
        python3 -m pip install -q nvidia-cuda-nvdisasm >/dev/null 2>&1 \
            || echo "setup: could not install nvidia-cuda-nvdisasm; SASS checks will be skipped" >&2
    fi
fi
