#!/usr/bin/env bash
# Call 1 (2026-12-03, sixteenth session): the `_res_rmsnorm` tail rewritten (a token a pass,
# each phase's loads issued ROW_BATCH = 4 loop trips at a time, package `full4`); parity on cuda; the
# residual GEMVs with and without the tail; Llama-3-8B's step with the norms apart (the
# engine's choice) and in the tails come in call 2, with this call's tuning; here the decode
# attention re-tuned with the async-K knob (`a`), the one-token spaces of the residual (with
# and without the tail) and gate/up GEMVs tuned, and the i8 family at 32K keys.
# Run as `bash .carry/c1.sh` with .carry/{kiln,full4.tgz,tune-att.tgz,tune-gemv.tgz}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c1; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c1.tgz -C /tmp c1; }
K=$(pwd)/.carry/kiln
for p in full4; do rm -rf /tmp/$p && mkdir -p /tmp/$p && tar xzf .carry/$p.tgz -C /tmp/$p; done
rm -rf /tmp/tune-att /tmp/tune-gemv && tar xzf .carry/tune-att.tgz -C /tmp && tar xzf .carry/tune-gemv.tgz -C /tmp
cp .carry/c1.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
timeout 150 $K parity --device cuda --package /tmp/full4/dist --kernel gemv_q8_0_rp_res_rmsnorm,gemv_q4_0_rp_res_rmsnorm,gemv_q4_1_rp_res_rmsnorm > $R/parity4.log 2>&1
echo "parity4 rc $?: $(tail -n 1 $R/parity4.log | cut -c1-100)"; grep -i "fail" $R/parity4.log | head -3
ck
for p in full4; do
  timeout 60 $K bench --package /tmp/$p/dist --kernel gemv_q8_0_rp_res,gemv_q8_0_rp_res_rmsnorm,rmsnorm_q8_1s_f32 --json $R/bench-res-$p.json > $R/bench-res-$p.log 2>&1
  echo "bench $p rc $?"; grep -E "^(gemv|rmsnorm)" $R/bench-res-$p.log | cut -c1-160
done
ck
timeout 120 $K tune --device cuda --kernel attention_decode_q8_0_d128 --candidates /tmp/tune-att --out $R/sm_90-att.ron --replays 10 > $R/tune-att.log 2>&1
echo "tune rc $?"; grep "^|" $R/tune-att.log | head -8; cp /tmp/tune-att/tune-progress.jsonl $R/ 2>/dev/null
ck
timeout 260 $K tune --device cuda --kernel gemv_q8_0_rp_res,gemv_q8_0_rp_res_rmsnorm,gemv_q8_0_rp_swiglu_q8_1s --candidates /tmp/tune-gemv --out $R/sm_90-gemv.ron --budget-s 230 > $R/tune-gemv.log 2>&1
echo "tune gemv rc $?"; grep "^|" $R/tune-gemv.log | head -12; cp /tmp/tune-gemv/tune-progress.jsonl $R/tune-gemv-progress.jsonl 2>/dev/null
ck
timeout 60 $K bench --package /tmp/full4/dist --kernel attn_q8_0_i8_ctx32k_t8,attn_q8_0_i8_ctx32k_t4,attn_q8_0_ctx32k_t8 --variant mma,mma_lds,r8,r8a --json $R/bench-i8.json > $R/bench-i8.log 2>&1
echo "i8 rc $?"; grep -E "^attn" $R/bench-i8.log | cut -c1-160
ck
