#!/usr/bin/env bash
# Call 3 (2026-12-01, fifth session): the final engine figures and one more A/B: `pf3` (GEMV
# prefetch in grids of <= 256 workgroups: main at 55cd99a) against `pf4` (prefetch by the first 256
# workgroups of any grid), the engine's step (SmolLM2 and Llama-3-8B shapes, the ggml LM head),
# kiln bench of the large GEMVs under both, the i8 attention variants, parity of pf4's GEMVs.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/p3; rm -rf $R; mkdir -p $R
ck() { tar czf $O/p3.tgz -C /tmp p3; }
K=./.carry/kiln
for p in pf3 pf4; do rm -rf /tmp/$p && mkdir -p /tmp/$p && tar xzf .carry/$p.tgz -C /tmp/$p; done
V=.carry/smol-vocab.gguf
cp .carry/p3.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
( for q in q4_1 q8_0; do $K random-model --shape smollm2-135m --type $q --vocab-from $V -o /tmp/rs-$q.gguf; done
  $K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf ) > $R/models.log 2>&1
sha256sum /tmp/rs-*.gguf /tmp/r8b-q8_0.gguf > $R/models.sha256
G="--device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile"
G8="--device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile"
for i in 1 2; do for p in pf3 pf4; do
  timeout 40 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/$p/dist $G --json $R/prof-rs-q4_1-$p-$i.json > $R/prof-rs-q4_1-$p-$i.log 2>&1
  echo "rs-q4_1 $p $i: $(grep -h 'wall time' $R/prof-rs-q4_1-$p-$i.log | cut -c1-100) | $(grep -h 'decode:' $R/prof-rs-q4_1-$p-$i.log | cut -c30-90)"
done; done
for p in pf3 pf4; do
  timeout 40 $K generate --model /tmp/rs-q8_0.gguf --package /tmp/$p/dist $G --json $R/prof-rs-q8_0-$p-1.json > $R/prof-rs-q8_0-$p-1.log 2>&1
  echo "rs-q8_0 $p: $(grep -h 'wall time' $R/prof-rs-q8_0-$p-1.log | cut -c1-100) | $(grep -h 'decode:' $R/prof-rs-q8_0-$p-1.log | cut -c30-90)"
  timeout 60 $K generate --model /tmp/r8b-q8_0.gguf --package /tmp/$p/dist $G8 --json $R/prof-r8b-$p.json > $R/prof-r8b-$p.log 2>&1
  echo "r8b $p: $(grep -h 'wall time' $R/prof-r8b-$p.log | cut -c1-100) | $(grep -h 'decode:' $R/prof-r8b-$p.log | cut -c30-90)"
done
ck
for q in q4_1 q8_0; do for p in pf4; do
  timeout 30 $K generate --model /tmp/rs-$q.gguf --package /tmp/$p/dist --device cuda --oracle tools/engine/tests/data/oracle-$q.json --positions 16 > $R/digest-$q-$p.log 2>&1
  echo "digest $q $p: $(grep -h 'digests' $R/digest-$q-$p.log | cut -c36-60)"
done; done
for p in pf3 pf4; do
  timeout 40 $K bench --package /tmp/$p/dist --kernel gemv_q8_0_rp_n14336_t1,gemv_q8_0_rp_n4096_t1,gemv_q8_0_rp_n14336_t8,gemv_q8_0_rp_n4096_t8 --variant p1r2u8w2,p8r4,tuned_t5_8_nlo --json $R/bench-gemv-$p.json > $R/bench-gemv-$p.log 2>&1
  echo "bench $p"; grep -E "^gemv" $R/bench-gemv-$p.log | cut -c1-75
done
ck
timeout 60 $K bench --package /tmp/pf4/dist --kernel attention_decode_q8_0_i8_d128 --replays 10 --bandwidth-bytes 536870912 --json $R/bench-i8.json > $R/bench-i8.log 2>&1
grep -E "^attn" $R/bench-i8.log | cut -c1-140
ck
timeout 40 $K parity --device cuda --package /tmp/pf4/dist --kernel gemv_q8_0_rp,gemv_q8_0_rp_res,gemv_q8_0_rp_qkv_cache,gemv_q8_0_rp_swiglu_q8_1s,gemv_q4_1_rp_qkv_cache_norm,gemv_q4_1_rp_swiglu_q8_1s_norm,gemv_q4_1_rp_res > $R/parity-cuda.log 2>&1
echo "parity: ok $(grep -c '^ok' $R/parity-cuda.log), not ok: $(grep -vc '^ok' $R/parity-cuda.log); $(tail -n 1 $R/parity-cuda.log | cut -c1-80)"
timeout 30 $K parity --device cuda --package /tmp/pf4/dist --kernel attention_decode_q8_0_i8_d128,attention_decode_q8_0_i8_d64 > $R/parity-i8.log 2>&1
echo "parity i8: ok $(grep -c '^ok' $R/parity-i8.log); $(tail -n 1 $R/parity-i8.log | cut -c1-80)"
ck
