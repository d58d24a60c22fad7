#!/usr/bin/env bash
# Final device call of 2026-12-01: parity on cuda of the families new since the last whole-package
# parity (the folded-norm GEMVs, the fused attention and its short_r1 variant), the engine on random
# models of SmolLM2's and Llama-3-8B's shapes (digests against the cpu device's, profiles, time
# against context, the attention's short and short_r1 forced in turn), then llama-bench on the same
# files (built in the background). Everything is written under $OUT/e as it comes and tarred at the end.
set -x
R=$OUT/e; mkdir -p $R
K=./.carry/kiln
rm -rf /tmp/k; mkdir -p /tmp/k && tar xzf .carry/bundle.tgz -C /tmp/k
P=/tmp/k/dist
V=.carry/smol-vocab.gguf
cp .carry/c4.sh $R/
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
for q in q4_1 q8_0; do [ -f /tmp/rs-$q.gguf ] || $K random-model --shape smollm2-135m --type $q --vocab-from $V -o /tmp/rs-$q.gguf; done
( [ -f /tmp/r8b-q8_0.gguf ] || $K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf ) > $R/r8b-write.log 2>&1 &
WPID=$!
timeout 170 $K parity --device cuda --package $P --kernel ${NEW_KERNELS} > $R/parity-cuda.log 2>&1; tail -n 2 $R/parity-cuda.log
for q in q4_1 q8_0; do
  timeout 60 $K generate --model /tmp/rs-$q.gguf --package $P --device cuda --oracle tools/engine/tests/data/oracle-$q.json --positions 16 > $R/digest-$q-1.log 2>&1
  grep -h "digests" $R/digest-$q-1.log | cut -c1-200
done
A=KILN_ROUTE_attention_decode_rope_q8_0_d64_q8_1s
for m in rs-q4_1 rs-q8_0; do
  for i in 1 2; do
    timeout 60 $K generate --model /tmp/$m.gguf --package $P --device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile --json $R/prof-$m-$i.json > $R/prof-$m-$i.log 2>&1
  done
  for v in short short_r1; do
    env $A=$v timeout 60 $K generate --model /tmp/$m.gguf --package $P --device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile --json $R/route-$m-$v.json > $R/route-$m-$v.log 2>&1
  done
  for n in 128 512 1024 2048; do
    python3 - "$n" > /tmp/prompt_$n.txt <<'PY'
import sys
n = int(sys.argv[1])
text = open("tools/engine/ref/prompts.txt").read().replace("%%%\n", "")
print((text * (1 + 4 * n // len(text)))[: 4 * n])
PY
    timeout 60 $K generate --model /tmp/$m.gguf --package $P --device cuda --prompt-file /tmp/prompt_$n.txt -n 128 --ctx $((n * 2 + 256)) --json $R/ctx-$m-$n.json > $R/ctx-$m-$n.log 2>&1
  done
done
grep -h "wall time\|decode:" $R/prof-*.log $R/route-*.log
wait $WPID
timeout 90 $K generate --model /tmp/r8b-q8_0.gguf --package $P --device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile --json $R/prof-r8b-q8_0-1.json > $R/prof-r8b-q8_0-1.log 2>&1
for v in short short_r1; do
  env KILN_ROUTE_attention_decode_rope_q8_0_d128_q8_1s=$v timeout 90 $K generate --model /tmp/r8b-q8_0.gguf --package $P --device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile --json $R/route-r8b-$v.json > $R/route-r8b-$v.log 2>&1
done
grep -h "wall time\|decode:" $R/prof-r8b*.log $R/route-r8b*.log
tar czf $OUT/e.tgz -C $OUT e
wait $BPID
if [ -x $L/build/bin/llama-bench ]; then
  for m in rs-q4_1 rs-q8_0; do
    timeout 60 $L/build/bin/llama-bench -m /tmp/$m.gguf -ngl 99 -fa 1 -p 0 -n 128 -d 0,128,512,1024,2048 -r 3 -o md > $R/llama-bench-$m.md 2> $R/llama-bench-$m.err
  done
  timeout 90 $L/build/bin/llama-bench -m /tmp/r8b-q8_0.gguf -ngl 99 -fa 1 -p 0 -n 128 -d 0,512 -r 3 -o md > $R/llama-bench-r8b-q8_0.md 2> $R/llama-bench-r8b-q8_0.err
fi
cat $R/llama-bench-*.md
sha256sum /tmp/rs-*.gguf /tmp/r8b-q8_0.gguf > $R/models.sha256
tar czf $OUT/e.tgz -C $OUT e
rm -rf $R
