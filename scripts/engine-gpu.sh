#!/usr/bin/env bash
# kiln-engine on the GPU machine (issue 16), from the repository root there, after
# scripts/engine-gpu-prepare.sh here (it says what to carry). Nothing is downloaded there.
#
#   bash .carry/engine/go.sh stash   list the model parts carried so far (one part a call: a
#                                    call carries at most 64 MiB, the Q4_1 file is 98 MB)
#   bash .carry/engine/go.sh         assemble the model, make the Q8_0 copy, then for both:
#     1. kiln generate --oracle: all 588 positions against llama.cpp's fixture, steps of 8 and
#        of 1 (top-1 agreement, logit differences);
#     2. kiln generate: 128 greedy tokens of tools/engine/ref/generate.txt, 3 times (text,
#        prompt and decode tokens/s), and decode tokens/s after prompts of ~128..2048 tokens;
#     3. llama.cpp (CUDA, built from the carried source in the background): llama-bench tg128
#        at depths 0..2048 (flash attention on, CUDA graphs on by default), and its greedy 128
#        tokens of the same prompt (kiln-oracle --generate), for the side-by-side table.
# Logs and JSON go to $OUT (default /tmp/out). KILN (default .carry/kiln) is the runtime-only
# binary with `generate`; PKG (default .carry/dist) a package with the engine's kernels.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
E=.carry/engine
KILN=${KILN:-./.carry/kiln}
PKG=${PKG:-.carry/dist}
M=${MODELS:-/tmp/kiln-models}
mkdir -p "$M"
q4=$M/SmolLM2-135M-Instruct.Q4_1.gguf
q8=$M/SmolLM2-135M-Instruct.Q8_0.gguf
parts=$(ls .carry/engine-m*/*.part* 2>/dev/null | sort)
if [ "${1:-}" = stash ]; then
    echo "parts here: ${parts:-none}"; exit 0
fi
if [ ! -s "$q4" ]; then
    [ -n "$parts" ] || { echo "no model parts (.carry/engine-m*/): carry them first"; exit 1; }
    cat $(ls .carry/engine-m*/SmolLM2-135M-Instruct.Q4_1.gguf.part* | sort) > "$q4"
    (cd "$M" && sha256sum -c --quiet "$OLDPWD/$E/SHA256SUMS.q4_1") \
        || { echo "the assembled Q4_1 file is wrong (a part missing?): ${parts}"; rm -f "$q4"; exit 1; }
fi
if [ ! -s "$q8" ]; then
    python3 -m pip install --quiet --no-deps --target /tmp/pygguf $E/gguf-*.whl
    PYTHONPATH=/tmp/pygguf python3 scripts/smollm2-q8_0.py "$q4" "$q8" || exit 1
fi
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv; sha256sum "$q4" "$q8"; } > "$OUT/env.log" 2>&1
cat "$OUT/env.log"

# llama.cpp (CUDA, sm_90) builds on the CPU while kiln runs.
L=/tmp/llama-src
(
    if [ ! -x $L/build/bin/llama-bench ]; then
        mkdir -p $L && tar xzf $E/llama-src.tgz -C $L
        cmake -S $L -B $L/build -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_CURL=OFF \
            -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF \
            -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=ON
        ninja -C $L/build -j14 llama-bench llama
    fi
    g++ -O2 -std=c++17 tools/engine/ref/oracle.cpp -I$L/include -I$L/ggml/include -L$L/build/bin \
        -lllama -lggml -lggml-base -Wl,-rpath,$L/build/bin -o $L/build/bin/kiln-oracle
) > "$OUT/llama_build.log" 2>&1 &
BPID=$!

for q in q4_1 q8_0; do
    model=$M/SmolLM2-135M-Instruct.${q^^}.gguf
    for chunk in 8 1; do
        echo "== kiln oracle $q, steps of $chunk =="
        timeout 120 $KILN generate --device cuda --package "$PKG" --model "$model" \
            --oracle tools/engine/tests/data/oracle-$q.json --chunk $chunk > "$OUT/oracle_${q}_t$chunk.log" 2>&1
        echo "rc=$?"; grep -v '^prompt ' "$OUT/oracle_${q}_t$chunk.log" | cut -c1-300 | tail -12
    done
    echo "== kiln generate $q: 128 tokens, 3 runs =="
    for r in 1 2 3; do
        timeout 60 $KILN generate --device cuda --package "$PKG" --model "$model" \
            --prompt-file tools/engine/ref/generate.txt -n 128 --json "$OUT/gen_${q}_$r.json" \
            > "$OUT/gen_${q}_$r.txt" 2> "$OUT/gen_${q}_$r.err"
        echo "rc=$? $(tail -1 "$OUT/gen_${q}_$r.err")"
    done
    echo "== kiln decode after long prompts $q =="
    for n in 128 512 1024 2048; do
        python3 - "$n" > /tmp/prompt_$n.txt <<'PY'
import sys
n = int(sys.argv[1])
text = open("tools/engine/ref/prompts.txt").read().replace("%%%\n", "")
# ~4 characters a token for this text; cut to about n tokens.
print((text * (1 + 4 * n // len(text)))[: 4 * n])
PY
        timeout 120 $KILN generate --device cuda --package "$PKG" --model "$model" \
            --prompt-file /tmp/prompt_$n.txt -n 128 --ctx $((n * 2 + 256)) --json "$OUT/ctx_${q}_$n.json" \
            > /dev/null 2> "$OUT/ctx_${q}_$n.err"
        echo "prompt ~$n: rc=$? $(tail -1 "$OUT/ctx_${q}_$n.err")"
    done
done

wait $BPID
echo "== llama.cpp build: $(tail -1 "$OUT/llama_build.log") =="
if [ -x $L/build/bin/llama-bench ]; then
    for q in q4_1 q8_0; do
        model=$M/SmolLM2-135M-Instruct.${q^^}.gguf
        echo "== llama-bench $q tg128 =="
        timeout 180 $L/build/bin/llama-bench -m "$model" -ngl 99 -fa 1 -p 0 -n 128 -d 0,128,512,1024,2048 \
            -r 5 -o md > "$OUT/llama_bench_$q.md" 2> "$OUT/llama_bench_$q.err"
        echo "rc=$?"; cat "$OUT/llama_bench_$q.md"
        timeout 60 $L/build/bin/kiln-oracle "$model" tools/engine/ref/generate.txt --generate 128 \
            > "$OUT/llama_gen_$q.json" 2> "$OUT/llama_gen_$q.err"
        python3 - "$OUT/llama_gen_$q.json" "$OUT/gen_${q}_1.json" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
n = next((i for i, (x, y) in enumerate(zip(a["ids"], b["ids"])) if x != y), min(len(a["ids"]), len(b["ids"])))
print(f"greedy: the first {n} tokens equal (llama.cpp {len(a['ids'])}, kiln {len(b['ids'])}); prompt ids equal: {a['prompt_ids'] == b['prompt_ids']}")
PY
    done
fi
