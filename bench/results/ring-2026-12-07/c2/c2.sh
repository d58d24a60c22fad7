#!/usr/bin/env bash
# Call 2 (2026-12-07, forty-sixth session): the k4 ring variants again, a trip's scales and
# activations now loaded before the wait for its quants, plus two groups a trip
# (`ring_t1_g2_s2_r80`). Package `libR` rebuilt: cuda parity of the k4 family, the cases twice
# against the routed variants, then Nsight Compute (one launch each, N = 14336, T = 8) of
# `ring_t1_s3_r64` and `wide_t2_g4`: stall reasons and the memory sections.
. "$(dirname "$0")/call.sh"
begin c2 540
rm -rf /tmp/pR; mkdir -p /tmp/pR; tar xJf $C/libR.txz -C /tmp/pR
P=/tmp/pR/dist
timeout $(lim 90) $K parity --device cuda --package $P --kernel gemv_q8_0_rp_k4 > $R/parity.log 2>&1
echo "cuda parity k4 rc $?: $(tail -n 1 $R/parity.log) ($((SECONDS - T0)) s)"; grep -E "FAIL" $R/parity.log | head -5; ck
BIG=gemv_q8_0_rp_k4_n14336_t1,gemv_q8_0_rp_k4_n14336_t4,gemv_q8_0_rp_k4_n14336_t8
SMALL=gemv_q8_0_rp_k4_n4096_t1,gemv_q8_0_rp_k4_n4096_t8
VB=wide_t2_g4,ring_t1_s2_r64,ring_t1_s3_r64,ring_t1_g2_s2_r80,ring_t2_s2_r96
VS=wide_t1_g4_w8,ring_t1_s2_w8_r64
run() { local i=$1
  timeout $(lim 100) $K bench --package $P --kernel $BIG --variant $VB --json $R/big-$i.json > $R/big-$i.log 2>&1
  echo "big $i rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/big-$i.log | sort -u | cut -c1-220; ck
  timeout $(lim 60) $K bench --package $P --kernel $SMALL --variant $VS --json $R/small-$i.json > $R/small-$i.log 2>&1
  echo "small $i rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/small-$i.log | sort -u | cut -c1-200; ck
}
run 1
run 2
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats"
for v in ring_t1_s3_r64 wide_t2_g4; do
  [ $(left) -lt 60 ] && break
  timeout $(lim 120) ncu --clock-control none $S -k regex:gemv_q8_0_rp_k4 -c 1 -o $R/$v \
    $K bench --package $P --kernel gemv_q8_0_rp_k4_n14336_t8 --variant $v --replays 1 --bandwidth-bytes 67108864 > $R/$v.run.log 2>&1
  echo "ncu $v rc $? ($((SECONDS - T0)) s)"
  ncu -i $R/$v.ncu-rep --page details > $R/$v.details.txt 2>&1
  rm -f $R/$v.ncu-rep
  grep -E "Duration|Achieved Occ|Eligible Warps|No Eligible|Stall|DRAM Throughput|Mem Busy|Max Bandwidth|L1/TEX Hit|L2 Hit|Issued Warp" $R/$v.details.txt | head -24
  ck
done
echo "end ($((SECONDS - T0)) s)"
