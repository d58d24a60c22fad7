#!/usr/bin/env bash
# The outside oracle of kiln-engine (issue 16): builds llama.cpp (CPU, or CUDA with
# ORACLE_CUDA=1) from the llama-cpp-python sdist on PyPI, builds tools/engine/ref/oracle.cpp
# against it, and writes the committed fixtures:
#   tools/engine/tests/data/tokens.json        llama-tokenize's ids for tricky strings
#   tools/engine/tests/data/oracle-q4_1.json   teacher-forced top-1 / top-8 logits of
#   tools/engine/tests/data/oracle-q8_0.json   tools/engine/ref/prompts.txt (Q8_0 KV cache)
# Needs scripts/fetch-smollm2.sh first, cmake (pip install cmake), g++ and python3.
# LLAMA_CPP=DIR reuses a llama.cpp source tree (with a build/ under it); WORK=DIR (default
# .peers/llamacpp-src, ignored) is where the sdist is unpacked and built.
set -euo pipefail
cd "$(dirname "$0")/.."
models=${KILN_MODELS:-models}
work=${WORK:-.peers/llamacpp-src}
if [ -z "${LLAMA_CPP:-}" ]; then
    mkdir -p "$work"
    if [ ! -d "$work/llama_cpp_python-0.3.36" ]; then
        python3 -m pip install --quiet cmake scikit-build-core
        python3 -m pip download --quiet --no-deps --no-binary :all: --no-build-isolation \
            llama-cpp-python==0.3.36 -d "$work"
        tar xzf "$work/llama_cpp_python-0.3.36.tar.gz" -C "$work"
    fi
    LLAMA_CPP="$work/llama_cpp_python-0.3.36/vendor/llama.cpp"
fi
L=$(cd "$LLAMA_CPP" && pwd)
if [ ! -x "$L/build/bin/llama-tokenize" ]; then
    cuda=OFF; [ "${ORACLE_CUDA:-0}" = 1 ] && cuda=ON
    cmake -S "$L" -B "$L/build" -DGGML_CUDA=$cuda -DLLAMA_CURL=OFF -DCMAKE_BUILD_TYPE=Release \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF -DBUILD_SHARED_LIBS=ON \
        -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
    cmake --build "$L/build" -j"${JOBS:-2}" --target llama-tokenize llama llama-bench
fi
oracle="$L/build/bin/kiln-oracle"
g++ -O2 -std=c++17 tools/engine/ref/oracle.cpp -I"$L/include" -I"$L/ggml/include" \
    -L"$L/build/bin" -lllama -lggml -lggml-base -Wl,-rpath,"$L/build/bin" -o "$oracle"
[ "${ORACLE_BUILD_ONLY:-0}" = 1 ] && { echo "$oracle"; exit 0; }
python3 - "$L/build/bin/llama-tokenize" "$models/SmolLM2-135M-Instruct.Q4_1.gguf" \
    tools/engine/tests/data/tokens.json <<'PY'
import json, subprocess, sys, tempfile
tok, model, out = sys.argv[1:]
texts = [
    "Hello world", "Hello  world", " leading space", "trailing space ", "  two leading",
    "\n\nnewlines\n", "\ttab\tseparated\t", "1234567890", "3.14 and 1,000,000 and 2e-5",
    "don't you'll I'm we've they'd it's", "CAPS and MiXeD case", "café naïve résumé",
    "日本語のテキスト", "Ελληνικά и русский", "emoji 🙂🚀 and 👨‍👩‍👧 family",
    "def f(x):\n    return x ** 2  # square\n", "if (a != b) { return a->c[0]; }",
    "<|im_start|>user\nhi there<|im_end|>\n<|im_start|>assistant\n", "<|endoftext|>",
    "a<|im_end|>b", "   \n  ", "multiple     spaces     inside", "https://example.com/a?b=c&d=1",
    "ÀÉÎÕÜ ß ﬁ", "x" * 40, "!!!???...---", "$100 + 50% = 'wow'",
]
cases = []
for t in texts:
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(t)
    r = subprocess.run([tok, "-m", model, "-f", f.name, "--ids", "--log-disable"],
                       capture_output=True, text=True, check=True)
    ids = json.loads(r.stdout.strip().splitlines()[-1])
    cases.append({"text": t, "ids": ids})
json.dump({"command": "scripts/engine-oracle.sh (llama-tokenize -f TEXT --ids, llama.cpp "
           "from llama-cpp-python 0.3.36)", "cases": cases}, open(out, "w"), ensure_ascii=False, indent=0)
print(f"{out}: {len(cases)} strings")
PY
for q in q4_1 q8_0; do
    out="tools/engine/tests/data/oracle-$q.json"
    "$oracle" "$models/SmolLM2-135M-Instruct.${q^^}.gguf" tools/engine/ref/prompts.txt > "$out.part"
    mv "$out.part" "$out"
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1] + ':', sum(len(p['ids']) for p in d['prompts']), 'positions over', len(d['prompts']), 'prompts')" "$out"
done
