#!/usr/bin/env bash
# The session's final device call: llama.cpp built in the background; kiln's whole sm_90 library
# parity on cuda, the device tests, the engine (digests, profiles, contexts) on random models of
# SmolLM2's and Llama-3-8B's shapes, then llama-bench on the same files. Results: $OUT/final.tgz.
set -x
OUT=${OUT:-/tmp/out}; R=/tmp/final; mkdir -p $R
K=./.carry/kiln
rm -rf /tmp/k; mkdir -p /tmp/k && tar xzf .carry/bundle.tgz -C /tmp/k
P=/tmp/k/dist
V=.carry/smol-vocab.gguf
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv; } > $R/env.log 2>&1
L=/tmp/llama-src
(
  if [ ! -x $L/build/bin/llama-bench ]; then
    mkdir -p $L && tar xzf .carry/engine/llama-src.tgz -C $L
    cmake -S $L -B $L/build -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_CURL=OFF \
      -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF \
      -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=ON
    ninja -C $L/build -j13 llama-bench
  fi
  echo BUILD-END
) > $R/llama_build.log 2>&1 &
BPID=$!
for q in q4_1 q8_0; do $K random-model --shape smollm2-135m --type $q --vocab-from $V -o /tmp/rs-$q.gguf; done
$K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf
sha256sum /tmp/rs-*.gguf /tmp/r8b-q8_0.gguf > $R/models.sha256
timeout 300 $K parity --device cuda --package $P > $R/parity-cuda.log 2>&1; tail -1 $R/parity-cuda.log
./.carry/tests/kiln_runtime --ignored cuda --test-threads=1 > $R/tests-runtime-cuda.log 2>&1; tail -2 $R/tests-runtime-cuda.log
./.carry/tests/kiln_tools --ignored cuda --test-threads=1 > $R/tests-tools-cuda.log 2>&1; tail -2 $R/tests-tools-cuda.log
for q in q4_1 q8_0; do
  $K generate --model /tmp/rs-$q.gguf --package $P --device cuda --oracle tools/engine/tests/data/oracle-$q.json --positions 16 > $R/digest-$q.log 2>&1
done
for m in rs-q4_1 rs-q8_0; do
  for i in 1 2 3; do
    $K generate --model /tmp/$m.gguf --package $P --device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile --json $R/prof-$m-$i.json > $R/prof-$m-$i.log 2>&1
  done
  for n in 128 512 1024 2048; do
    python3 - "$n" > /tmp/prompt_$n.txt <<'PY'
import sys
n = int(sys.argv[1])
text = open("tools/engine/ref/prompts.txt").read().replace("%%%\n", "")
print((text * (1 + 4 * n // len(text)))[: 4 * n])
PY
    $K generate --model /tmp/$m.gguf --package $P --device cuda --prompt-file /tmp/prompt_$n.txt -n 128 --ctx $((n * 2 + 256)) --profile --json $R/ctx-$m-$n.json > $R/ctx-$m-$n.log 2>&1
  done
done
for i in 1 2; do
  $K generate --model /tmp/r8b-q8_0.gguf --package $P --device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 512 --profile --json $R/prof-r8b-q8_0-$i.json > $R/prof-r8b-q8_0-$i.log 2>&1
done
$K bench --package $P --kernel attention_decode_q8_0_d128,attention_decode_q8_0_d64,kv_append_q8_0 --json $R/bench-attn.json > $R/bench-attn.log 2>&1
wait $BPID
tail -2 $R/llama_build.log
if [ -x $L/build/bin/llama-bench ]; then
  for m in rs-q4_1 rs-q8_0; do
    timeout 200 $L/build/bin/llama-bench -m /tmp/$m.gguf -ngl 99 -fa 1 -p 0 -n 128 -d 0,128,512,1024,2048 -r 5 -o md > $R/llama-bench-$m.md 2> $R/llama-bench-$m.err
  done
  timeout 200 $L/build/bin/llama-bench -m /tmp/r8b-q8_0.gguf -ngl 99 -fa 1 -p 0 -n 128 -d 0,512 -r 3 -o md > $R/llama-bench-r8b-q8_0.md 2> $R/llama-bench-r8b-q8_0.err
fi
grep -h "wall time\|decode:" $R/prof-*.log | head -20
cat $R/llama-bench-*.md
grep -h "digests" $R/digest-*.log
tar czf $OUT/final.tgz -C /tmp final
