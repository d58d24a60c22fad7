#!/usr/bin/env bash
# Call 1 (2026-12-03, fifteenth session): is the matrix-unit Q8_0 GEMV held back by how its
# workgroups fall on the SMs? `wide_t2_g4` at N = 14336 runs 448 workgroups, four at most an SM
# (128 registers): 52 SMs get four and 80 get three. N = 12672 (396: three on every SM) and
# N = 16896 (528: four on every SM) are the balanced shapes around it; `wide_t1_g4` (896
# workgroups of one tile) the finer grain. ncu's per-SM active cycles (min / avg / max) say it.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/call1; rm -rf $R; mkdir -p $R
ck() { tar czf $O/call1.tgz -C /tmp call1; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/p1 && mkdir -p /tmp/p1 && tar xzf .carry/p1.tgz -C /tmp/p1
cp .carry/b1.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; ncu --version; } > $R/env.log 2>&1
C=gemv_q8_0_rp_k4_n14336_t1,gemv_q8_0_rp_k4_n14336_t8,gemv_q8_0_rp_k4_n12672_t1,gemv_q8_0_rp_k4_n12672_t8,gemv_q8_0_rp_k4_n16896_t1,gemv_q8_0_rp_k4_n16896_t8,gemv_q8_0_rp_k4_n4096_t1,gemv_q8_0_rp_k4_n4096_t8
# parity: call 1 first run, 88 passed / 0 failed (parity.log)
$K bench --package /tmp/p1/dist --kernel $C --variant wide_t2_g4,wide_t1_g4,wide_t2_g1 --json $R/bench-a.json > $R/bench-a.log 2>&1; echo "a rc $?"; cat $R/bench-a.log; ck
$K bench --package /tmp/p1/dist --kernel $C --variant wide_t1_g4,wide_t2_g1,wide_t2_g4 --json $R/bench-b.json > $R/bench-b.log 2>&1; echo "b rc $?"; cat $R/bench-b.log; ck
M=sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.avg,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
for c in n12672_t8 n16896_t8; do for v in wide_t2_g4 wide_t1_g4; do
  timeout 120 ncu --clock-control none --metrics $M -k regex:gemv_q8_0_rp_k4 -c 1 $K bench --package /tmp/p1/dist --kernel gemv_q8_0_rp_k4_$c --variant $v --replays 1 --bandwidth-bytes 67108864 > $R/ncu-$c-$v.log 2>&1
  echo "== $c $v"; grep -E "sm__|gpu__|dram__" $R/ncu-$c-$v.log
done; done; ck
