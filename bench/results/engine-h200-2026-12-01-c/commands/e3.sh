#!/usr/bin/env bash
# Engine call 3 of 2026-12-01 (third session), the final one: the Q8_0 / Q4_0 gate/up norm
# GEMVs gain a one-token pass (`p1`). Parity on cuda of those families, both models' digests
# against the interpreter's, profiles of SmolLM2's and Llama-3-8B's shapes (the engine's own
# placement), time against context, then llama-bench on the same files.
set -uo pipefail
O=${OUT:-/tmp/out}; R=$O/e; mkdir -p $R
K=./.carry/kiln
rm -rf /tmp/k && mkdir -p /tmp/k && tar xzf .carry/bundle.tgz -C /tmp/k; P=/tmp/k/dist
V=.carry/smol-vocab.gguf
cp .carry/e3.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
L=/tmp/llama-src
(
  if [ ! -x $L/build/bin/llama-bench ]; then
    mkdir -p $L && tar xzf .carry/engine/llama-src.tgz -C $L
    cmake -S $L -B $L/build -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_CURL=OFF \
      -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF \
      -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=ON
    ninja -C $L/build -j10 llama-bench
  fi
  echo BUILD-END
) > $R/llama_build.log 2>&1 &
BPID=$!
( for q in q4_1 q8_0; do [ -f /tmp/rs-$q.gguf ] || $K random-model --shape smollm2-135m --type $q --vocab-from $V -o /tmp/rs-$q.gguf; done
  [ -f /tmp/r8b-q8_0.gguf ] || $K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf ) > $R/models.log 2>&1 &
WPID=$!
timeout 100 $K parity --device cuda --package $P --kernel gemv_q8_0_rp_swiglu_q8_1s_norm,gemv_q4_0_rp_swiglu_q8_1s_norm --large > $R/parity-cuda.log 2>&1; tail -n 1 $R/parity-cuda.log
wait $WPID; sha256sum /tmp/rs-*.gguf /tmp/r8b-q8_0.gguf > $R/models.sha256; cat $R/models.sha256
for q in q4_1 q8_0; do
  timeout 60 $K generate --model /tmp/rs-$q.gguf --package $P --device cuda --oracle tools/engine/tests/data/oracle-$q.json --positions 16 > $R/digest-$q.log 2>&1
  grep -h "digests" $R/digest-$q.log | cut -c1-120
done
G="--package $P --device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile"
for m in rs-q4_1 rs-q8_0; do
  for i in 1 2; do
    timeout 60 $K generate --model /tmp/$m.gguf $G --json $R/prof-$m-$i.json > $R/prof-$m-$i.log 2>&1
    echo "$m $i: $(grep -h 'wall time' $R/prof-$m-$i.log | cut -c1-110) | $(grep -h 'decode:' $R/prof-$m-$i.log)"
  done
  for n in 128 512 1024 2048; do
    python3 - "$n" > /tmp/prompt_$n.txt <<'PY'
import sys
n = int(sys.argv[1])
text = open("tools/engine/ref/prompts.txt").read().replace("%%%\n", "")
print((text * (1 + 4 * n // len(text)))[: 4 * n])
PY
    timeout 60 $K generate --model /tmp/$m.gguf --package $P --device cuda --prompt-file /tmp/prompt_$n.txt -n 128 --ctx $((n * 2 + 256)) --json $R/ctx-$m-$n.json > $R/ctx-$m-$n.log 2>&1
    echo "$m ctx $n: $(grep -h 'decode:' $R/ctx-$m-$n.log)"
  done
done
G8="--package $P --device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile"
timeout 100 $K generate --model /tmp/r8b-q8_0.gguf $G8 --json $R/prof-r8b-q8_0.json > $R/prof-r8b-q8_0.log 2>&1
echo "r8b: $(grep -h 'wall time' $R/prof-r8b-q8_0.log | cut -c1-110) | $(grep -h 'decode:' $R/prof-r8b-q8_0.log)"
tar czf $O/e.tgz -C $O e
wait $BPID
if [ -x $L/build/bin/llama-bench ]; then
  for m in rs-q4_1 rs-q8_0; do
    timeout 60 $L/build/bin/llama-bench -m /tmp/$m.gguf -ngl 99 -fa 1 -p 0 -n 128 -d 0,128,512,1024,2048 -r 3 -o md > $R/llama-bench-$m.md 2> $R/llama-bench-$m.err
  done
  timeout 90 $L/build/bin/llama-bench -m /tmp/r8b-q8_0.gguf -ngl 99 -fa 1 -p 0 -n 128 -d 0,512 -r 3 -o md > $R/llama-bench-r8b-q8_0.md 2> $R/llama-bench-r8b-q8_0.err
fi
cat $R/llama-bench-*.md 2>/dev/null | grep -E "tg"
tail -1 $R/llama_build.log
tar czf $O/e.tgz -C $O e
rm -rf $R
