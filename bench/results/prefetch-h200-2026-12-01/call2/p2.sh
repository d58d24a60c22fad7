#!/usr/bin/env bash
# Call 2 (2026-12-01, fifth session): package `pf2` (prefetch only in grids of <= 256 workgroups,
# the short attention's cache prefetch, the i8 decode-attention families) against `base` (call 1's:
# 5d8a40b's kernels), with the engine's repacked tied LM head in both. The engine's step first
# (quiet CPU), digests, then llama.cpp's build in the background, parity on cuda, kiln bench of
# the attention (f32 order and i8 order) and the large GEMVs, torch SDPA, then llama-bench.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/p2; rm -rf $R; mkdir -p $R
ck() { tar czf $O/p2.tgz -C /tmp p2; }
export PYTHONUNBUFFERED=1
K=./.carry/kiln
for p in base pf2; do rm -rf /tmp/$p && mkdir -p /tmp/$p && tar xzf .carry/$p.tgz -C /tmp/$p; done
V=.carry/smol-vocab.gguf
cp .carry/p2.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
( for q in q4_1 q8_0; do $K random-model --shape smollm2-135m --type $q --vocab-from $V -o /tmp/rs-$q.gguf; done
  $K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf ) > $R/models.log 2>&1
sha256sum /tmp/rs-*.gguf /tmp/r8b-q8_0.gguf > $R/models.sha256
G="--device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile"
for i in 1 2; do for p in base pf2; do for m in rs-q4_1 rs-q8_0; do
  timeout 60 $K generate --model /tmp/$m.gguf --package /tmp/$p/dist $G --json $R/prof-$m-$p-$i.json > $R/prof-$m-$p-$i.log 2>&1
  echo "$m $p $i: $(grep -h 'wall time' $R/prof-$m-$p-$i.log | cut -c1-100) | $(grep -h 'decode:' $R/prof-$m-$p-$i.log | cut -c30-80)"
done; done; done
G8="--device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile"
for p in base pf2; do
  timeout 100 $K generate --model /tmp/r8b-q8_0.gguf --package /tmp/$p/dist $G8 --json $R/prof-r8b-$p.json > $R/prof-r8b-$p.log 2>&1
  echo "r8b $p: $(grep -h 'wall time' $R/prof-r8b-$p.log | cut -c1-100) | $(grep -h 'decode:' $R/prof-r8b-$p.log | cut -c30-80)"
done
for q in q4_1 q8_0; do
  timeout 60 $K generate --model /tmp/rs-$q.gguf --package /tmp/pf2/dist --device cuda --oracle tools/engine/tests/data/oracle-$q.json --positions 16 > $R/digest-$q.log 2>&1
  grep -h "digests" $R/digest-$q.log | cut -c1-100
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
FAM=$(ls /tmp/pf2/dist | grep '^gemv_' | grep -v moe | paste -sd, -),attention_decode_rope_q8_0_d64_q8_1s,attention_decode_rope_q8_0_d128_q8_1s,attention_decode_q8_0_d64,attention_decode_q8_0_d128
timeout 150 $K parity --device cuda --package /tmp/pf2/dist --kernel $FAM > $R/parity-cuda.log 2>&1; echo "parity: $(tail -n 1 $R/parity-cuda.log)"
timeout 100 $K parity --device cuda --package /tmp/pf2/dist --kernel attention_decode_q8_0_i8_d64,attention_decode_q8_0_i8_d128 --large > $R/parity-i8-cuda.log 2>&1; echo "parity i8: $(tail -n 1 $R/parity-i8-cuda.log)"
ck
timeout 150 $K bench --package /tmp/pf2/dist --kernel attention_decode_q8_0_d128,attention_decode_q8_0_i8_d128 --variant r4t256,r8,r4,mma,mma_lds --replays 10 --bandwidth-bytes 536870912 --json $R/bench-attn.json > $R/bench-attn.log 2>&1
grep -E "^attn|bandwidth" $R/bench-attn.log | cut -c1-100
timeout 60 $K bench --package /tmp/pf2/dist --kernel gemv_q8_0_rp_n14336_t1,gemv_q8_0_rp_n4096_t1,gemv_q8_0_rp_n14336_t8 --variant p1r2u8w2,p8r4 --json $R/bench-gemv.json > $R/bench-gemv.log 2>&1
grep -E "^gemv" $R/bench-gemv.log | cut -c1-75
ck
timeout 90 python3 bench/attention_peers.py $R/sdpa.json > $R/sdpa.log 2>&1; cat $R/sdpa.log | tail -8
PYTHONPATH=.carry/py timeout 60 python3 bench/attention_ref.py --kiln $K --package /tmp/pf2/dist --device cuda --arch sm_90 --variants r4t256 --i8-variants baseline,mma > $R/attention-ref.log 2>&1; tail -4 $R/attention-ref.log
ck
wait $BPID
if [ -x $L/build/bin/llama-bench ]; then
  for m in rs-q4_1 rs-q8_0; do
    timeout 40 $L/build/bin/llama-bench -m /tmp/$m.gguf -ngl 99 -fa 1 -p 0 -n 128 -r 3 -o md > $R/llama-bench-$m.md 2> $R/llama-bench-$m.err
  done
  timeout 60 $L/build/bin/llama-bench -m /tmp/r8b-q8_0.gguf -ngl 99 -fa 1 -p 0 -n 128 -r 2 -o md > $R/llama-bench-r8b-q8_0.md 2> $R/llama-bench-r8b-q8_0.err
fi
cat $R/llama-bench-*.md 2>/dev/null | grep -E "tg"
tail -1 $R/llama_build.log
ck
