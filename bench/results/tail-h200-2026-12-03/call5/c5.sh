#!/usr/bin/env bash
# Call 5 (2026-12-03, sixteenth session; the fifteenth session's call 5, never run then): why the async-copy GEMV (`wide_t2_a2`, call 4's
# package, commit 839679c) is 2.3x slower than `wide_t2_g4`: Nsight Compute (full set) of one
# launch of each at N = 14336, T = 8; stall reasons and the memory sections.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c5; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c5.tgz -C /tmp c5; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/p5 && mkdir -p /tmp/p5 && tar xzf .carry/p5.tgz -C /tmp/p5
cp .carry/c5.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; ncu --version; } > $R/env.log 2>&1
for v in wide_t2_a2 wide_t2_g4; do
  timeout 200 ncu --clock-control none --set full -k regex:gemv_q8_0_rp_k4 -c 1 -o $R/$v \
    $K bench --package /tmp/p5/dist --kernel gemv_q8_0_rp_k4_n14336_t8 --variant $v --replays 1 --bandwidth-bytes 67108864 > $R/$v.run.log 2>&1
  echo "$v rc $?"
  ncu -i $R/$v.ncu-rep --page details > $R/$v.details.txt 2>&1
  rm -f $R/$v.ncu-rep
  grep -E "Duration|Registers Per|Achieved Occ|Eligible Warps|No Eligible|Bank Conflicts|Stall|DRAM Throughput|Shared Memory|L1/TEX Hit" $R/$v.details.txt | head -30
  ck
done
