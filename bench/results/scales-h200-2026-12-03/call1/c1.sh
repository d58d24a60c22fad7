#!/usr/bin/env bash
# Call 1 (2026-12-03, seventeenth session): gemv_q8_0_rp_k4 with its scales by tile (`ws`
# [tile][block][16 rows], one 32-byte sector a tile and block instead of sixteen). Parity on
# cuda (the family and repack_q8_0_tile), then every variant of every bench case, with
# gemv_q8_0_rp beside it, then Nsight Compute of wide_t2_g4 at N = 14336, T = 8 (the call-5
# figures of bench/results/tail-h200-2026-12-03.md were taken with the scales [row][block]).
# Run as `bash .carry/c1.sh` with .carry/{kiln,k4s.tgz}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c1; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c1.tgz -C /tmp c1; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/k4s && mkdir -p /tmp/k4s && tar xzf .carry/k4s.tgz -C /tmp/k4s
cp .carry/c1.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
timeout 100 $K parity --device cuda --package /tmp/k4s/dist --kernel gemv_q8_0_rp_k4,repack_q8_0_tile --large > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-100)"; grep -i "fail" $R/parity.log | head -3
ck
timeout 150 $K bench --package /tmp/k4s/dist --kernel gemv_q8_0_rp_k4,gemv_q8_0_rp --json $R/bench.json > $R/bench.log 2>&1
echo "bench rc $?"; grep -E "^gemv" $R/bench.log | cut -c1-170
ck
v=wide_t2_g4
timeout 120 ncu --clock-control none --set full -k regex:gemv_q8_0_rp_k4 -c 1 -o $R/$v \
  $K bench --package /tmp/k4s/dist --kernel gemv_q8_0_rp_k4_n14336_t8 --variant $v --replays 1 --bandwidth-bytes 67108864 > $R/$v.run.log 2>&1
echo "ncu rc $?"
ncu -i $R/$v.ncu-rep --page details > $R/$v.details.txt 2>&1; rm -f $R/$v.ncu-rep
grep -E "Duration|Registers Per|Achieved Occ|DRAM Throughput|L1/TEX Cache|L2 Cache Thr|excessive" $R/$v.details.txt | head -12
ck
