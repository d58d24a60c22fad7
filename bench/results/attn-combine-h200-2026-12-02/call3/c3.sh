#!/usr/bin/env bash
# Call 3 (2026-12-02, ninth session): two more changes to decode attention's `rR` path, on top
# of call 2's batched fold (package a there): p1 = the fold's first trip of state loads issued
# before the combine finds its weights (their round trips overlap); p2 = p1 and, in `r1`, the
# split's first K chunk loaded before q and stored after it (one barrier, overlapping loads).
# SmolLM2-shaped decode at ~173 / ~587 / ~2013 positions, llama.cpp's llama-bench at depths
# 0 / 512 / 2048 in the same call, the attention bench's r1 cases, parity on cuda.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c3; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c3.tgz -C /tmp c3; }
K=./.carry/kiln
for p in p1 p2; do rm -rf /tmp/$p && mkdir -p /tmp/$p && tar xzf .carry/$p.tgz -C /tmp/$p; done
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
for p in p1 p2; do timeout 120 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/$p/dist --device cuda --prompt hi -n 4 > $R/warm-$p.log 2>&1; done
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c1-112) | $(grep -h 'decode:' $2 | cut -c30-90) | $(grep -h ' attention_decode' $2 | head -1 | cut -c1-90)"; }
run() { # name package model prompt-file
  timeout 90 $K generate --model /tmp/$3.gguf --package /tmp/$2/dist --device cuda --prompt-file $4 -n 128 --ctx 2304 --profile --json $R/prof-$1.json > $R/prof-$1.log 2>&1
  line "$1" $R/prof-$1.log
}
for i in 1 2; do for p in p1 p2; do
  run q4_1-$p-long10-$i $p rs-q4_1 /tmp/long-10.txt
  run q4_1-$p-long41-$i $p rs-q4_1 /tmp/long-41.txt
done; done
for p in p1 p2; do
  run q4_1-$p-short $p rs-q4_1 tools/engine/ref/generate.txt
  run q8_0-$p-short $p rs-q8_0 tools/engine/ref/generate.txt
  run q8_0-$p-long10 $p rs-q8_0 /tmp/long-10.txt
  run q8_0-$p-long41 $p rs-q8_0 /tmp/long-41.txt
done
ck
for q in q4_1 q8_0; do
  timeout 60 $K generate --model /tmp/rs-$q.gguf --package /tmp/p2/dist --device cuda --oracle tools/engine/tests/data/oracle-$q.json --positions 16 > $R/digest-$q-p2.log 2>&1
  echo "digest $q p2: $(grep -h 'digests' $R/digest-$q-p2.log | cut -c1-100)"
done
ck
F=attention_decode_rope_q8_0_d64_q8_1s,attention_decode_q8_0_d64,attention_decode_f16_d64,attention_decode_f16_d128
timeout 170 $K parity --device cuda --package /tmp/p2/dist --kernel $F > $R/parity.log 2>&1
echo "parity rc $?: $(grep -h '^time' $R/parity.log | cut -c1-80 | tr '\n' ';') $(tail -n 1 $R/parity.log | cut -c1-120)"
ck
wait $BPID
if [ -x $L/build/bin/llama-bench ]; then
  for m in rs-q4_1 rs-q8_0; do
    timeout 100 $L/build/bin/llama-bench -m /tmp/$m.gguf -ngl 99 -fa 1 -p 0 -n 128 -d 0,512,2048 -r 3 -o md > $R/llama-bench-$m.md 2> $R/llama-bench-$m.err
    echo "llama-bench $m:"; grep -h 'tg128' $R/llama-bench-$m.md
  done
else
  echo "llama-bench did not build"; tail -5 $R/llama_build.log
fi
tail -n 3 $R/llama_build.log > $R/llama_build-tail.log
rm -f $R/llama_build.log
ck
