# Sourced by the scripts: where LLVM 19 lives, and ptxas if pip installed one.
export LLVM_SYS_191_PREFIX="${LLVM_SYS_191_PREFIX:-/usr/lib/llvm-19}"
export PATH="$LLVM_SYS_191_PREFIX/bin:$PATH"
if [[ -z "${KILN_PTXAS:-}" ]] && ! command -v ptxas >/dev/null; then
    # pip's nvidia-cuda-nvcc puts ptxas under site-packages/nvidia/<cu13|cuda_nvcc>/bin.
    for site in $(python3 -c 'import site; print(" ".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null); do
        for p in "$site"/nvidia/*/bin/ptxas; do
            [[ -x "$p" ]] && { export KILN_PTXAS="$p"; break 2; }
        done
    done
fi
true
