#!/usr/bin/env bash
# Call 1 (2026-12-03, sixteenth session): the `_res_rmsnorm` tail rewritten (a token a pass,
# each phase's loads issued ROW_BATCH loop trips at a time: packages `full4` (4, the commit) and
# `full2` (2: fewer registers, more warps an SM for the GEMV itself)); parity on cuda; the
# residual GEMVs with and without the tail; Llama-3-8B's step with the norms apart (the
# engine's choice) and in the tails; SmolLM2's step folded (its choice) and in the tails; the
# decode attention re-tuned with the async-K knob (`a`); the i8 family at 32K keys.
# Run as `bash .carry/c1.sh` with .carry/{kiln,full4.tgz,full2.tgz,tune-att.tgz,smol-vocab.gguf}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c1; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c1.tgz -C /tmp c1; }
K=$(pwd)/.carry/kiln
for p in full4 full2; do rm -rf /tmp/$p && mkdir -p /tmp/$p && tar xzf .carry/$p.tgz -C /tmp/$p; done
rm -rf /tmp/tune-att && tar xzf .carry/tune-att.tgz -C /tmp
V=.carry/smol-vocab.gguf
cp .carry/c1.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
timeout 150 $K parity --device cuda --package /tmp/full4/dist --kernel gemv_q8_0_rp_res_rmsnorm,gemv_q4_0_rp_res_rmsnorm,gemv_q4_1_rp_res_rmsnorm > $R/parity4.log 2>&1
echo "parity4 rc $?: $(tail -n 1 $R/parity4.log | cut -c1-100)"; grep -i "fail" $R/parity4.log | head -3
timeout 60 $K parity --device cuda --package /tmp/full2/dist --kernel gemv_q8_0_rp_res_rmsnorm > $R/parity2.log 2>&1
echo "parity2 rc $?: $(tail -n 1 $R/parity2.log | cut -c1-100)"
ck
for p in full4 full2; do
  timeout 60 $K bench --package /tmp/$p/dist --kernel gemv_q8_0_rp_res,gemv_q8_0_rp_res_rmsnorm,rmsnorm_q8_1s_f32 --json $R/bench-res-$p.json > $R/bench-res-$p.log 2>&1
  echo "bench $p rc $?"; grep -E "^(gemv|rmsnorm)" $R/bench-res-$p.log | cut -c1-160
done
ck
timeout 120 $K tune --device cuda --kernel attention_decode_q8_0_d128 --candidates /tmp/tune-att --out $R/sm_90-att.ron --replays 10 > $R/tune-att.log 2>&1
echo "tune rc $?"; grep "^|" $R/tune-att.log | head -8; cp /tmp/tune-att/tune-progress.jsonl $R/ 2>/dev/null
ck
( $K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf
  $K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf ) > $R/models.log 2>&1
{ time sha256sum /tmp/rs-q4_1.gguf /tmp/r8b-q8_0.gguf; } > $R/models.sha256 2>&1
G8="--device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile"
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c1-150) | $(grep -h 'ready in' $2 | grep -o 'ready in.*') | $(grep -h 'decode:' $2 | cut -c30-90)"; }
for run in "full4 apart" "full4 residual" "full2 residual"; do set -- $run
  timeout 120 $K generate --model /tmp/r8b-q8_0.gguf --package /tmp/$1/dist $G8 --norms $2 --json $R/prof-r8b-$1-$2.json > $R/prof-r8b-$1-$2.log 2>&1
  line "r8b $1 $2" $R/prof-r8b-$1-$2.log; ck
done
G="--device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile"
for run in "full4 auto" "full4 residual" "full2 residual"; do set -- $run
  timeout 40 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/$1/dist $G --norms $2 --json $R/prof-rs-$1-$2.json > $R/prof-rs-$1-$2.log 2>&1
  line "rs-q4_1 $1 $2" $R/prof-rs-$1-$2.log
done
for nm in auto residual; do
  timeout 40 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/full4/dist --device cuda --norms $nm --oracle tools/engine/tests/data/oracle-q4_1.json --positions 16 > $R/digest-q4_1-$nm.log 2>&1
  echo "digest q4_1 $nm: $(grep -h 'digests' $R/digest-q4_1-$nm.log | cut -c1-120)"
done
ck
timeout 60 $K bench --package /tmp/full4/dist --kernel attn_q8_0_i8_ctx32k_t8,attn_q8_0_i8_ctx32k_t4,attn_q8_0_ctx32k_t8 --variant mma,mma_lds,r8,r8a --json $R/bench-i8.json > $R/bench-i8.log 2>&1
echo "i8 rc $?"; grep -E "^attn" $R/bench-i8.log | cut -c1-160
ck
