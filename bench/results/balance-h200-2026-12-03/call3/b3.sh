#!/usr/bin/env bash
# Call 3 (2026-12-03, fifteenth session): the next iteration's loads issued before this one's blocks
# are added (carried by the loop: `wide_t2_g1p`, `wide_t1_g2p`, 236-244 registers, 8 warps an SM),
# against the routed `wide_t2_g4` (128 registers, 16 warps) and `wide_t2_g1` (the same code
# without the carried loads).
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/call3; rm -rf $R; mkdir -p $R
ck() { tar czf $O/call3.tgz -C /tmp call3; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/p3 && mkdir -p /tmp/p3 && tar xzf .carry/p3.tgz -C /tmp/p3
cp .carry/b3.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
$K parity --device cuda --package /tmp/p3/dist --kernel gemv_q8_0_rp_k4 > $R/parity.log 2>&1; echo "parity rc $?"; tail -2 $R/parity.log
C=gemv_q8_0_rp_k4_n14336_t1,gemv_q8_0_rp_k4_n14336_t8,gemv_q8_0_rp_k4_n4096_t1,gemv_q8_0_rp_k4_n4096_t8,gemv_q8_0_rp_k4_n16896_t8
V1=wide_t2_g4,wide_t2_g1,wide_t2_g1p_c255,wide_t1_g2p_c255
V2=wide_t1_g2p_c255,wide_t2_g1p_c255,wide_t2_g1,wide_t2_g4
$K bench --package /tmp/p3/dist --kernel $C --variant $V1 --json $R/bench-a.json > $R/bench-a.log 2>&1; echo "a rc $?"; grep -v "^$" $R/bench-a.log | grep -v "^case\|^bandwidth" ; ck
$K bench --package /tmp/p3/dist --kernel $C --variant $V2 --json $R/bench-b.json > $R/bench-b.log 2>&1; echo "b rc $?"; grep -v "^$" $R/bench-b.log | grep -v "^case\|^bandwidth"; ck
