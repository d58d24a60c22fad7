#!/usr/bin/env bash
# Call 3 (2026-12-03, sixteenth session): `gemv_q8_0_rp_k4` with one tile and four / three
# groups in flight a workgroup (`wide_t1_g4`, `wide_t1_g3`: 896 workgroups at N = 14336, finer
# units on the 132 SMs than `wide_t2_g4`'s 448) against the routes, two bench runs in opposite
# variant orders, after parity; then the decode attention (Q8_0, head dim 128) with the routes
# re-tuned in call 1 (the t2_5_long bucket: `r8` with async K chunks), against `r4t256`, `r8`,
# `r8a`, with torch SDPA (bf16) in the same call.
# Run as `bash .carry/c3.sh` with .carry/{kiln,p3.tgz}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c3; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c3.tgz -C /tmp c3; }
K=$(pwd)/.carry/kiln
P=/tmp/p3/dist
rm -rf /tmp/p3 && mkdir -p /tmp/p3 && tar xzf .carry/p3.tgz -C /tmp/p3
cp .carry/c3.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
timeout 100 $K parity --device cuda --package $P --kernel gemv_q8_0_rp_k4 > $R/parity-k4.log 2>&1
echo "parity k4 rc $?: $(tail -n 1 $R/parity-k4.log | cut -c1-100)"; grep -i "fail" $R/parity-k4.log | head -3
C=gemv_q8_0_rp_k4_n14336_t1,gemv_q8_0_rp_k4_n14336_t4,gemv_q8_0_rp_k4_n14336_t8,gemv_q8_0_rp_k4_n12672_t8,gemv_q8_0_rp_k4_n16896_t8,gemv_q8_0_rp_k4_n4096_t1,gemv_q8_0_rp_k4_n4096_t8
V1=wide_t2_g4,wide_t1_g4,wide_t1_g3,wide_t1_g2p
V2=wide_t1_g2p,wide_t1_g3,wide_t1_g4,wide_t2_g4
timeout 60 $K bench --package $P --kernel $C --variant $V1 --json $R/bench-k4-a.json > $R/bench-k4-a.log 2>&1; echo "k4 a rc $?"; grep -E "^gemv" $R/bench-k4-a.log | sort -u | cut -c1-200; ck
timeout 60 $K bench --package $P --kernel $C --variant $V2 --json $R/bench-k4-b.json > $R/bench-k4-b.log 2>&1; echo "k4 b rc $?"; grep -E "^gemv" $R/bench-k4-b.log | sort -u | cut -c1-200; ck
A=attn_q8_0_ctx4k_t1,attn_q8_0_ctx4k_t4,attn_q8_0_ctx4k_t8,attn_q8_0_ctx32k_t1,attn_q8_0_ctx32k_t4,attn_q8_0_ctx32k_t8
timeout 100 $K bench --package $P --kernel $A --variant tuned_t2_5_short,tuned_t2_5_long,r4t256,r8,r8a --replays 10 --json $R/bench-attn.json > $R/bench-attn.log 2>&1
echo "attn rc $?"; grep -E "^attn" $R/bench-attn.log | sort -u | cut -c1-200; ck
timeout 120 python3 bench/attention_peers.py $R/sdpa.json > $R/sdpa.log 2>&1
echo "sdpa rc $?: $(tail -n 8 $R/sdpa.log | tr '\n' ' ' | cut -c1-400)"; ck
