#!/usr/bin/env bash
# Call 1 (2026-12-02, sixth session): the engine's decode steps queued one ahead of the token
# read (`Decoder::queue_greedy`, the runtime's `ReadBack`), on SmolLM2's shape (Q4_1, Q8_0) and
# Llama-3-8B's (Q8_0), quiet CPU first; the tied LM head's new `gemv_q8_0` variants (p1r4, p1r8,
# forced) timed alone and in the step, with the logit digests; the runtime's cuda tests; parity
# of gemv_q8_0 on cuda; then llama.cpp's llama-bench built and run on the same files.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/p1; rm -rf $R; mkdir -p $R
ck() { tar czf $O/p1.tgz -C /tmp p1; }
K=./.carry/kiln
rm -rf /tmp/a && mkdir -p /tmp/a && tar xzf .carry/a.tgz -C /tmp/a
V=.carry/smol-vocab.gguf
cp .carry/p1.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
( for q in q4_1 q8_0; do $K random-model --shape smollm2-135m --type $q --vocab-from $V -o /tmp/rs-$q.gguf; done
  $K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf ) > $R/models.log 2>&1
sha256sum /tmp/rs-*.gguf /tmp/r8b-q8_0.gguf > $R/models.sha256
G="--device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile"
# A first run JIT-compiles the package's PTX (tens of seconds): not timed.
timeout 120 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/a/dist --device cuda --prompt hi -n 4 > $R/warm.log 2>&1
for i in 1 2; do for m in rs-q4_1 rs-q8_0; do
  timeout 60 $K generate --model /tmp/$m.gguf --package /tmp/a/dist $G --json $R/prof-$m-$i.json > $R/prof-$m-$i.log 2>&1
  echo "$m $i: $(grep -h 'wall time' $R/prof-$m-$i.log | cut -c1-100) | $(grep -h 'decode:' $R/prof-$m-$i.log | cut -c30-90)"
done; done
for v in p1r4 p1r8; do
  KILN_ROUTE_GEMV_Q8_0=$v timeout 60 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/a/dist $G --json $R/prof-rs-q4_1-$v.json > $R/prof-rs-q4_1-$v.log 2>&1
  echo "rs-q4_1 lm head $v: $(grep -h 'wall time' $R/prof-rs-q4_1-$v.log | cut -c1-100) | $(grep -h 'decode:' $R/prof-rs-q4_1-$v.log | cut -c30-90) | $(grep -h ' gemv_q8_0 ' $R/prof-rs-q4_1-$v.log)"
done
G8="--device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile"
timeout 100 $K generate --model /tmp/r8b-q8_0.gguf --package /tmp/a/dist $G8 --json $R/prof-r8b.json > $R/prof-r8b.log 2>&1
echo "r8b: $(grep -h 'wall time' $R/prof-r8b.log | cut -c1-100) | $(grep -h 'decode:' $R/prof-r8b.log | cut -c30-90)"
ck
for q in q4_1 q8_0; do
  timeout 60 $K generate --model /tmp/rs-$q.gguf --package /tmp/a/dist --device cuda --oracle tools/engine/tests/data/oracle-$q.json --positions 16 > $R/digest-$q.log 2>&1
  echo "digest $q: $(grep -h 'digests' $R/digest-$q.log | cut -c1-100)"
done
for v in p1r4 p1r8; do
  KILN_ROUTE_GEMV_Q8_0=$v timeout 60 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/a/dist --device cuda --oracle tools/engine/tests/data/oracle-q4_1.json --positions 16 > $R/digest-q4_1-$v.log 2>&1
  echo "digest q4_1 lm head $v: $(grep -h 'digests' $R/digest-q4_1-$v.log | cut -c1-100)"
done
ck
L=/tmp/llama-src
(
  mkdir -p $L && tar xzf .carry/engine/llama-src.tgz -C $L
  cmake -S $L -B $L/build -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_CURL=OFF \
    -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=ON
  ninja -C $L/build -j16 llama-bench
  echo BUILD-END
) > $R/llama_build.log 2>&1 &
BPID=$!
timeout 60 ./.carry/rt-tests --ignored cuda:: --test-threads 1 > $R/rt-cuda.log 2>&1; echo "runtime cuda tests: $(grep -h 'test result' $R/rt-cuda.log)"
timeout 90 $K parity --device cuda --package /tmp/a/dist --kernel gemv_q8_0 > $R/parity-gemv_q8_0.log 2>&1; echo "parity gemv_q8_0: ok $(grep -c '^ok' $R/parity-gemv_q8_0.log); $(tail -n 1 $R/parity-gemv_q8_0.log | cut -c1-90)"
timeout 60 $K bench --package /tmp/a/dist --kernel gemv_q8_0_n49152_k576_t1 --json $R/bench-lmhead.json > $R/bench-lmhead.log 2>&1
grep -E "^gemv|  " $R/bench-lmhead.log | cut -c1-110 | head -20
ck
wait $BPID
if [ -x $L/build/bin/llama-bench ]; then
  for m in rs-q4_1 rs-q8_0 r8b-q8_0; do
    timeout 60 $L/build/bin/llama-bench -m /tmp/$m.gguf -ngl 99 -fa 1 -p 0 -n 128 -r 3 -o md > $R/llama-bench-$m.md 2> $R/llama-bench-$m.err
    echo "llama-bench $m: $(grep -h 'tg128' $R/llama-bench-$m.md)"
  done
else
  echo "llama-bench did not build"; tail -5 $R/llama_build.log
fi
ck
