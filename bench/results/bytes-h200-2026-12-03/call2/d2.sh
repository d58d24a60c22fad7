#!/usr/bin/env bash
# Call 2 (2026-12-03, thirteenth session): where the decode attention's time goes. Nsight
# Compute (full set, source counters by SASS instruction) of HEAD's `attention_decode_q8_0_d128`
# `r4t256` at 4K and 32K keys, T = 1, and of the prompt attention's `w4qs` (Q8_0, L = 2048).
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/call2; rm -rf $R; mkdir -p $R
ck() { tar czf $O/call2.tgz -C /tmp call2; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/o && mkdir -p /tmp/o && tar xzf .carry/o.tgz -C /tmp/o
cp .carry/d2.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; ncu --version; } > $R/env.log 2>&1
prof() {
  local name=$1 regex=$2 case=$3 variant=$4
  timeout 200 ncu --clock-control none --set full --import-source no -k regex:$regex -c 1 -o $R/$name \
    $K bench --package /tmp/o/dist --kernel $case --variant $variant --replays 1 --bandwidth-bytes 67108864 > $R/$name.run.log 2>&1
  echo "$name rc $?"
  ncu -i $R/$name.ncu-rep --page details > $R/$name.details.txt 2>&1
  ncu -i $R/$name.ncu-rep --page source --print-source sass --csv > $R/$name.sass.csv 2>&1
  ls -la $R/$name.sass.csv | cut -c20-200; head -c 600 $R/$name.sass.csv; echo
  grep -E "Duration|Registers Per|Achieved Occ|Eligible Warps|No Eligible" $R/$name.details.txt | head -8
  rm -f $R/$name.ncu-rep
  ck
}
prof d4k attention_decode_q8_0_d128 attn_q8_0_ctx4k_t1 r4t256
prof d32k attention_decode_q8_0_d128 attn_q8_0_ctx32k_t1 r4t256
prof p2k attention_prefill_q8_0_d128 prefill_q8_0_l2k w4qs
