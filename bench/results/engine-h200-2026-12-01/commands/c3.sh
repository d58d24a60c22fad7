#!/usr/bin/env bash
# Device call 1 of 2026-12-01: the merged fusions (norm folded into the GEMVs, RoPE/quantize in the
# attention): parity of the new families on cuda, the engine's digests (against the cpu device's,
# computed before the call), profiles and time against context on random models of SmolLM2's
# shape, the Llama-3-8B shape with the norms folded and apart, then llama-bench on the same files
# (built in the background meanwhile). Every file is written under $OUT as it comes.
set -x
OUT=${OUT:-/tmp/out}; R=$OUT; mkdir -p $R
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
    ninja -C $L/build -j12 llama-bench
  fi
  echo BUILD-END
) > $R/llama_build.log 2>&1 &
BPID=$!
for q in q4_1 q8_0; do $K random-model --shape smollm2-135m --type $q --vocab-from $V -o /tmp/rs-$q.gguf; done
( $K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf > $R/r8b-write.log 2>&1 ) &
WPID=$!
timeout 150 $K parity --device cuda --package $P --kernel ${NEW_KERNELS} > $R/parity-cuda-new.log 2>&1; tail -n 3 $R/parity-cuda-new.log
timeout 90 $K generate --model /tmp/rs-q4_1.gguf --package $P --device cuda --oracle tools/engine/tests/data/oracle-q4_1.json --positions 16 > $R/digest-q4_1.log 2>&1
grep -h "logits" $R/digest-q4_1.log | sed 's/.*logits //' 
for m in rs-q4_1 rs-q8_0; do
  for i in 1 2; do
    timeout 60 $K generate --model /tmp/$m.gguf --package $P --device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile --json $R/prof-$m-$i.json > $R/prof-$m-$i.log 2>&1
  done
  timeout 60 $K generate --model /tmp/$m.gguf --package $P --device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile --norms apart --json $R/prof-$m-apart.json > $R/prof-$m-apart.log 2>&1
  for n in 128 512 2048; do
    python3 - "$n" > /tmp/prompt_$n.txt <<'PY'
import sys
n = int(sys.argv[1])
text = open("tools/engine/ref/prompts.txt").read().replace("%%%\n", "")
print((text * (1 + 4 * n // len(text)))[: 4 * n])
PY
    timeout 60 $K generate --model /tmp/$m.gguf --package $P --device cuda --prompt-file /tmp/prompt_$n.txt -n 128 --ctx $((n * 2 + 256)) --json $R/ctx-$m-$n.json > $R/ctx-$m-$n.log 2>&1
  done
done
grep -h "decode" $R/prof-*.log | head -20
wait $WPID
for nm in auto apart; do
  timeout 90 $K generate --model /tmp/r8b-q8_0.gguf --package $P --device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile --norms $nm --json $R/prof-r8b-$nm.json > $R/prof-r8b-$nm.log 2>&1
done
grep -h "decode" $R/prof-r8b-*.log | head
wait $BPID
if [ -x $L/build/bin/llama-bench ]; then
  for m in rs-q4_1 rs-q8_0; do
    timeout 60 $L/build/bin/llama-bench -m /tmp/$m.gguf -ngl 99 -fa 1 -p 0 -n 128 -d 0,128,512,2048 -r 3 -o md > $R/llama-bench-$m.md 2> $R/llama-bench-$m.err
  done
  timeout 90 $L/build/bin/llama-bench -m /tmp/r8b-q8_0.gguf -ngl 99 -fa 1 -p 0 -n 128 -d 0,512 -r 3 -o md > $R/llama-bench-r8b-q8_0.md 2> $R/llama-bench-r8b-q8_0.err
fi
cat $R/llama-bench-*.md
sha256sum /tmp/rs-*.gguf /tmp/r8b-q8_0.gguf > $R/models.sha256
