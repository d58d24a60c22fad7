#!/usr/bin/env bash
# Call 2 (2026-12-03, nineteenth session): gemv_q8_0_rp_k4 with 16 K slots at n <= 4096 (8 up to
# 8192, 4 above: k4::slots_for) and the sixteen-wave wide variants. No peers in this call.
# Run as `bash .carry/c2.sh` with .carry/{kiln,k2.tgz}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c2; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c2.tgz -C /tmp c2; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/k2; mkdir -p /tmp/k2; tar xzf .carry/k2.tgz -C /tmp/k2
N=/tmp/k2/dist
cp .carry/c2.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
timeout 150 $K parity --device cuda --package $N --kernel gemv_q8_0_rp_k4 --large > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-100)"; grep -i "fail" $R/parity.log | head -3
ck
C=gemv_q8_0_rp_k4_n14336_t1,gemv_q8_0_rp_k4_n14336_t8,gemv_q8_0_rp_k4_n4096_t1,gemv_q8_0_rp_k4_n4096_t8,gemv_q8_0_rp_k4_n8192_t1,gemv_q8_0_rp_k4_n8192_t8
for i in 1 2; do
  timeout 100 $K bench --package $N --kernel $C --variant wide_t2_g2_w16,wide_t1_g2_w16,wide_t1_g4_w8,wide_t2_g4 --json $R/bench-k4-$i.json > $R/bench-k4-$i.log 2>&1
  echo "bench k4 $i rc $?"; grep -E "^gemv" $R/bench-k4-$i.log | sort -u | cut -c1-160
  ck
done
