#!/usr/bin/env bash
# Call 2 (2026-12-03, fifteenth session): call 1 found the matrix-unit GEMV's time follows the
# warps an SM holds (not how its workgroups fall on the SMs). Does a warp with more loads in
# flight (a higher register cap: `wide_t2_g4` takes 160 registers at 168 or 255 where 128 held
# it; 8 groups; 4 tiles) make up for fewer warps?
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/call2; rm -rf $R; mkdir -p $R
ck() { tar czf $O/call2.tgz -C /tmp call2; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/p2 && mkdir -p /tmp/p2 && tar xzf .carry/p2.tgz -C /tmp/p2
cp .carry/b2.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
$K parity --device cuda --package /tmp/p2/dist --kernel gemv_q8_0_rp_k4 > $R/parity.log 2>&1; echo "parity rc $?"; tail -2 $R/parity.log
C=gemv_q8_0_rp_k4_n14336_t1,gemv_q8_0_rp_k4_n14336_t8,gemv_q8_0_rp_k4_n4096_t1,gemv_q8_0_rp_k4_n4096_t8,gemv_q8_0_rp_k4_n16896_t8
V1=wide_t2_g4,wide_t2_g4_c168,wide_t2_g4_c255,wide_t2_g8_c255,wide_t4_g4_c255
V2=wide_t4_g4_c255,wide_t2_g8_c255,wide_t2_g4_c255,wide_t2_g4_c168,wide_t2_g4
$K bench --package /tmp/p2/dist --kernel $C --variant $V1 --json $R/bench-a.json > $R/bench-a.log 2>&1; echo "a rc $?"; grep -v "^$" $R/bench-a.log | grep -v "^case\|^bandwidth" ; ck
$K bench --package /tmp/p2/dist --kernel $C --variant $V2 --json $R/bench-b.json > $R/bench-b.log 2>&1; echo "b rc $?"; grep -v "^$" $R/bench-b.log | grep -v "^case\|^bandwidth"; ck
