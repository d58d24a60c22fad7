#!/usr/bin/env bash
# Call 2 (2026-12-03, sixteenth session): the `_res_rmsnorm` tail's count on 32 slot counters
# and a top one (`last_of_many`) instead of one counter; parity on cuda; the residual GEMVs
# with and without the tail; the tail family's one-token space re-tuned; Llama-3-8B's step with
# the norms apart (the engine's choice) and in the tails (call 1's tuned routes for the tail
# family); SmolLM2's step folded and in the tails, with the logit digests of both; the
# re-tuned decode attention (t2_5_long: r8 with async K) timed on the bench cases; parity of
# the attention family with its tuned variants.
# Run as `bash .carry/c2.sh` with .carry/{kiln,full5.tgz,tune-gemv2.tgz,smol-vocab.gguf}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c2; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c2.tgz -C /tmp c2; }
K=$(pwd)/.carry/kiln
P=/tmp/full5/dist
rm -rf /tmp/full5 && mkdir -p /tmp/full5 && tar xzf .carry/full5.tgz -C /tmp/full5
rm -rf /tmp/tune-gemv2 && tar xzf .carry/tune-gemv2.tgz -C /tmp
V=.carry/smol-vocab.gguf
cp .carry/c2.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
( $K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf
  $K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf ) > $R/models.log 2>&1 &
MPID=$!
timeout 100 $K parity --device cuda --package $P --kernel gemv_q8_0_rp_res_rmsnorm,gemv_q4_0_rp_res_rmsnorm,gemv_q4_1_rp_res_rmsnorm > $R/parity-res.log 2>&1
echo "parity res rc $?: $(tail -n 1 $R/parity-res.log | cut -c1-100)"; grep -i "fail" $R/parity-res.log | head -3
timeout 60 $K bench --package $P --kernel gemv_q8_0_rp_res,gemv_q8_0_rp_res_rmsnorm,rmsnorm_q8_1s_f32 --json $R/bench-res.json > $R/bench-res.log 2>&1
echo "bench rc $?"; grep -E "^(gemv|rmsnorm)" $R/bench-res.log | sort -u | cut -c1-200
ck
timeout 150 $K tune --device cuda --kernel gemv_q8_0_rp_res_rmsnorm --candidates /tmp/tune-gemv2 --out $R/sm_90-res-rmsnorm.ron --budget-s 130 > $R/tune-res-rmsnorm.log 2>&1
echo "tune rc $?"; grep "^|" $R/tune-res-rmsnorm.log | head -6; cp /tmp/tune-gemv2/tune-progress.jsonl $R/tune-res-rmsnorm-progress.jsonl 2>/dev/null
ck
wait $MPID
{ time sha256sum /tmp/rs-q4_1.gguf /tmp/r8b-q8_0.gguf; } > $R/models.sha256 2>&1
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c1-150) | $(grep -h 'ready in' $2 | grep -o 'ready in.*') | $(grep -h 'decode:' $2 | cut -c30-90)"; }
G8="--device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile"
for nm in apart residual; do
  timeout 120 $K generate --model /tmp/r8b-q8_0.gguf --package $P $G8 --norms $nm --json $R/prof-r8b-$nm.json > $R/prof-r8b-$nm.log 2>&1
  line "r8b $nm" $R/prof-r8b-$nm.log; grep -A12 "kernel  " $R/prof-r8b-$nm.log | cut -c1-100; ck
done
G="--device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile"
for nm in auto residual; do
  timeout 40 $K generate --model /tmp/rs-q4_1.gguf --package $P $G --norms $nm --json $R/prof-rs-$nm.json > $R/prof-rs-$nm.log 2>&1
  line "rs-q4_1 $nm" $R/prof-rs-$nm.log
  timeout 40 $K generate --model /tmp/rs-q4_1.gguf --package $P --device cuda --norms $nm --oracle tools/engine/tests/data/oracle-q4_1.json --positions 16 > $R/digest-q4_1-$nm.log 2>&1
  echo "digest q4_1 $nm: $(grep -h 'digest' $R/digest-q4_1-$nm.log | cut -c1-120)"
done
ck
A=attn_q8_0_ctx4k_t1,attn_q8_0_ctx4k_t4,attn_q8_0_ctx4k_t8,attn_q8_0_ctx32k_t1,attn_q8_0_ctx32k_t4,attn_q8_0_ctx32k_t8
timeout 60 $K bench --package $P --kernel $A --json $R/bench-attn.json > $R/bench-attn.log 2>&1
echo "attn rc $?"; grep -E "^attn" $R/bench-attn.log | sort -u | cut -c1-220
ck
timeout 150 $K parity --device cuda --package $P --kernel attention_decode_q8_0_d128 > $R/parity-attn.log 2>&1
echo "parity attn rc $?: $(tail -n 1 $R/parity-attn.log | cut -c1-100)"
ck
