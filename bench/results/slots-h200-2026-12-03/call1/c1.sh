#!/usr/bin/env bash
# Call 1 (2026-12-03, nineteenth session): gemv_q8_0_rp_k4 with eight K slots at n <= 8192
# (k4::slots_for) and the eight-wave wide variants, against four-wave `wide_t2_g4`; Q4_0 / Q4_1
# N = 14336 T = 1 and the MoE cases re-timed; the Q4 one-token bucket re-tuned (with knob e);
# llama.cpp's peer-bench (with bench/peers/peer-bench-kiln.patch) in the same call.
# Run as `bash .carry/c1.sh` with .carry/{kiln,k1.tgz,tune-q4} and .peers/llamacpp.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c1; rm -rf $R; mkdir -p $R/peer
ck() { tar czf $O/c1.tgz -C /tmp c1; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/k1; mkdir -p /tmp/k1; tar xzf .carry/k1.tgz -C /tmp/k1
N=/tmp/k1/dist
cp .carry/c1.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
( OUT=$R/peer STEPS="none" bash .peers/llamacpp/run.sh > $R/peer-build.log 2>&1 ) &
BPID=$!
timeout 150 $K parity --device cuda --package $N --kernel gemv_q8_0_rp_k4 --large > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-100)"; grep -i "fail" $R/parity.log | head -3
ck
C=gemv_q8_0_rp_k4_n14336_t1,gemv_q8_0_rp_k4_n14336_t4,gemv_q8_0_rp_k4_n14336_t8,gemv_q8_0_rp_k4_n4096_t1,gemv_q8_0_rp_k4_n4096_t8
for i in 1 2; do
  timeout 100 $K bench --package $N --kernel $C --variant wide_t2_g4,wide_t1_g2_w8,wide_t1_g4_w8,wide_t2_g2_w8,wide_t1_g2p --json $R/bench-k4-$i.json > $R/bench-k4-$i.log 2>&1
  echo "bench k4 $i rc $?"; grep -E "^gemv" $R/bench-k4-$i.log | sort -u | cut -c1-150
  ck
done
Q=gemv_q4_0_rp_n14336_t1,gemv_q4_1_rp_n14336_t1,gemv_moe_q8_0_qwen3_t1,gemv_moe_q8_0_qwen3_t8,gemv_q8_0_rp_n4096_t1
timeout 100 $K bench --package $N --kernel $Q --json $R/bench-q4.json > $R/bench-q4.log 2>&1
echo "bench q4 rc $?"; grep -E "^gemv" $R/bench-q4.log | sort -u | cut -c1-150
ck
rm -rf /tmp/tq; mkdir -p /tmp/tq; tar xzf .carry/tune-q4.tgz -C /tmp/tq
timeout 110 $K tune --device cuda --arch sm_90 --kernel gemv_q4_1_rp,gemv_q4_0_rp --shapes t1_nhi --candidates /tmp/tq/tune-q4 --out $R/tune-q4.ron --budget-s 90 > $R/tune-q4.log 2>&1
echo "tune rc $?"; tail -n 6 $R/tune-q4.log | cut -c1-160
ck
wait $BPID; echo "peer build: $(tail -n 2 $R/peer/build.txt 2>/dev/null | tr '\n' ' ' | cut -c1-200)"
OUT=$R/peer STEPS="peer" timeout 170 bash .peers/llamacpp/run.sh > $R/peer-run.log 2>&1
echo "peer rc $?"; grep -iE "type=q4|m=4096 n=(1|8) |m=14336 n=(1|8) |MUL_MAT_ID" $R/peer/peer.txt 2>/dev/null | grep rot | head -20
ck
