#!/usr/bin/env bash
# Call 3 (2026-12-02, eleventh session): SmolLM2-shaped decode with `short_r1t640` (one 640-lane
# workgroup a row: every split of up to 632 positions, the states in LDS; routed on sm_90 at head
# dim 64, 1-2 tokens, pos 249..632) against `r1` (forced) at ~587 positions, the other contexts
# as routed; logit digests, parity of the head-dim-64 attention families on cuda, then llama.cpp's
# llama-bench at depths 0 / 512 / 2048 on the same files, built in this call.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c3; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c3.tgz -C /tmp c3; }
K=./.carry/kiln
rm -rf /tmp/a && mkdir -p /tmp/a && tar xzf .carry/a.tgz -C /tmp/a
V=.carry/smol-vocab.gguf
cp .carry/c3.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
L=/tmp/llama-src
(
  mkdir -p $L && tar xzf .carry/engine/llama-src.tgz -C $L
  cmake -S $L -B $L/build -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_CURL=OFF \
    -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=ON
  nice -n 10 ninja -C $L/build -j12 llama-bench
  echo BUILD-END
) > $R/llama_build.log 2>&1 &
BPID=$!
( for q in q4_1 q8_0; do $K random-model --shape smollm2-135m --type $q --vocab-from $V -o /tmp/rs-$q.gguf; done ) > $R/models.log 2>&1
sha256sum /tmp/rs-*.gguf > $R/models.sha256
for n in 10 41; do for i in $(seq $n); do cat tools/engine/ref/generate.txt; done > /tmp/long-$n.txt; done
timeout 120 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/a/dist --device cuda --prompt hi -n 4 > $R/warm.log 2>&1
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c1-112) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
run() { # name model prompt-file [env]
  env ${4:-KILN_X=1} timeout 90 $K generate --model /tmp/$2.gguf --package /tmp/a/dist --device cuda --prompt-file $3 -n 128 --ctx 2304 --profile --json $R/prof-$1.json > $R/prof-$1.log 2>&1
  line "$1" $R/prof-$1.log
}
R1=KILN_ROUTE_ATTENTION_DECODE_ROPE_Q8_0_D64_Q8_1S=r1
for i in 1 2; do
  run q4_1-long10-t640-$i rs-q4_1 /tmp/long-10.txt
  run q4_1-long10-r1-$i rs-q4_1 /tmp/long-10.txt $R1
done
for q in q4_1 q8_0; do
  run $q-short rs-$q tools/engine/ref/generate.txt
  run $q-long41 rs-$q /tmp/long-41.txt
done
run q8_0-long10-t640 rs-q8_0 /tmp/long-10.txt
run q8_0-long10-r1 rs-q8_0 /tmp/long-10.txt $R1
ck
for q in q4_1 q8_0; do
  timeout 60 $K generate --model /tmp/rs-$q.gguf --package /tmp/a/dist --device cuda --oracle tools/engine/tests/data/oracle-$q.json --positions 16 > $R/digest-$q.log 2>&1
  echo "digest $q: $(grep -h 'digests' $R/digest-$q.log | cut -c1-100)"
done
ck
timeout 240 $K parity --device cuda --package /tmp/a/dist --kernel attention_decode_rope_q8_0_d64_q8_1s,attention_decode_q8_0_d64 > $R/parity.log 2>&1
echo "parity rc $?: $(grep -c '^ok' $R/parity.log) ok, $(grep -c '^FAIL' $R/parity.log) FAIL; $(tail -n 1 $R/parity.log | cut -c1-90)"
ck
wait $BPID
if [ -x $L/build/bin/llama-bench ]; then
  for m in rs-q4_1 rs-q8_0; do
    timeout 120 $L/build/bin/llama-bench -m /tmp/$m.gguf -ngl 99 -fa 1 -p 0 -n 128 -d 0,512,2048 -r 3 -o md > $R/llama-bench-$m.md 2> $R/llama-bench-$m.err
    echo "llama-bench $m:"; grep -h 'tg128' $R/llama-bench-$m.md
  done
else
  echo "llama-bench did not build"; tail -5 $R/llama_build.log
fi
tail -n 3 $R/llama_build.log > $R/llama_build-tail.log
ck
