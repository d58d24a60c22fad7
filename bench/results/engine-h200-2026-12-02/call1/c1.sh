#!/usr/bin/env bash
# Call 1 (2026-12-02, eighth session): A/B of two sm_90 packages in one call on the engine's
# decode step: b = HEAD before this session's kernel changes, a = with them (decode attention's
# `short` variants load their K/V chunk before q; the `_swiglu_q8_1s_norm` GEMVs load their first
# weight blocks before the norm prologue). Both run with this session's kiln (the tied LM head
# on a repacked copy, `gemv_q8_0_rp`). Then parity of the changed families on cuda, the LM head
# shapes in kiln bench, and llama.cpp's llama-bench built and run on the same files.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c1; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c1.tgz -C /tmp c1; }
K=./.carry/kiln
for p in a b; do rm -rf /tmp/$p && mkdir -p /tmp/$p && tar xzf .carry/$p.tgz -C /tmp/$p; done
V=.carry/smol-vocab.gguf
cp .carry/c1.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
( for q in q4_1 q8_0; do $K random-model --shape smollm2-135m --type $q --vocab-from $V -o /tmp/rs-$q.gguf; done
  $K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf ) > $R/models.log 2>&1
sha256sum /tmp/rs-*.gguf /tmp/r8b-q8_0.gguf > $R/models.sha256
G="--device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile"
for p in a b; do timeout 120 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/$p/dist --device cuda --prompt hi -n 4 > $R/warm-$p.log 2>&1; done
for i in 1 2; do for p in a b; do for m in rs-q4_1 rs-q8_0; do
  timeout 60 $K generate --model /tmp/$m.gguf --package /tmp/$p/dist $G --json $R/prof-$m-$p-$i.json > $R/prof-$m-$p-$i.log 2>&1
  echo "$m $p $i: $(grep -h 'wall time' $R/prof-$m-$p-$i.log | cut -c1-110) | $(grep -h 'decode:' $R/prof-$m-$p-$i.log | cut -c30-90)"
done; done; done
ck
G8="--device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile"
for p in a b; do
  timeout 100 $K generate --model /tmp/r8b-q8_0.gguf --package /tmp/$p/dist $G8 --json $R/prof-r8b-$p.json > $R/prof-r8b-$p.log 2>&1
  echo "r8b $p: $(grep -h 'wall time' $R/prof-r8b-$p.log | cut -c1-110) | $(grep -h 'decode:' $R/prof-r8b-$p.log | cut -c30-90)"
done
ck
for q in q4_1 q8_0; do for p in a b; do
  timeout 60 $K generate --model /tmp/rs-$q.gguf --package /tmp/$p/dist --device cuda --oracle tools/engine/tests/data/oracle-$q.json --positions 16 > $R/digest-$q-$p.log 2>&1
  echo "digest $q $p: $(grep -h 'digests' $R/digest-$q-$p.log | cut -c1-100)"
done; done
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
timeout 60 $K bench --package /tmp/a/dist --kernel gemv_q8_0_n49152_k576_t1,gemv_q8_0_rp_n49152_k576_t1 --json $R/bench-lmhead.json > $R/bench-lmhead.log 2>&1
grep -E "^gemv" $R/bench-lmhead.log | cut -c1-140
ck
F=attention_decode_rope_q8_0_d64_q8_1s,attention_decode_rope_q8_0_d128_q8_1s,gemv_q4_1_rp_swiglu_q8_1s_norm,gemv_q8_0_rp_swiglu_q8_1s_norm,gemv_q4_0_rp_swiglu_q8_1s_norm,gemv_q8_0_rp
timeout 200 $K parity --device cuda --package /tmp/a/dist --kernel $F > $R/parity.log 2>&1
echo "parity rc $?: $(grep -c '^ok' $R/parity.log) ok; $(grep -h '^time' $R/parity.log | cut -c1-80 | tr '\n' ';') $(tail -n 1 $R/parity.log | cut -c1-90)"
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
tail -n 3 $R/llama_build.log > $R/llama_build-tail.log
ck
