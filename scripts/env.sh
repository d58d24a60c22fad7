# Sourced by the scripts: where LLVM 19 lives, and ptxas if pip installed one.
export LLVM_SYS_191_PREFIX="${LLVM_SYS_191_PREFIX:-/usr/lib/llvm-19}"
export PATH="$LLVM_SYS_191_PREFIX/bin:$PATH"
if [[ -z "${KILN_PTXAS:-}" ]] && ! command -v ptxas >/dev/null; then
    nvcc_dir=$(python3 -c 'import nvidia.cuda_nvcc, os; print(os.path.dirname(nvidia.cuda_nvcc.__file__))' 2>/dev/null || true)
    [[ -n "$nvcc_dir" && -x "$nvcc_dir/bin/ptxas" ]] && export KILN_PTXAS="$nvcc_dir/bin/ptxas"
fi
true
