#!/usr/bin/env bash
# The thirty-eighth session's call 1 (2026-12-06): where the i8 decode attention's time goes.
# Nsight Compute (full set, source counters by SASS instruction) of HEAD's
# `attention_decode_q8_0_i8_d128` `mma8_lds` / `mma8` at 32K keys, T = 8 and T = 1, then the
# runtime's device tests. Template: bench/results/bytes-h200-2026-12-03/call2/d2.sh. Carry: .cxd.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cN; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cN.tgz -C /tmp cN; }
C=$(pwd)/.cxd
xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; K=/tmp/kiln
rm -rf /tmp/pF; mkdir -p /tmp/pF; tar xJf $C/libF.txz -C /tmp/pF; P=/tmp/pF/dist
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; ncu --version; } > $R/env.log 2>&1
cat $R/env.log
prof() {
  local name=$1 regex=$2 case=$3 variant=$4
  timeout 150 ncu --clock-control none --set full --import-source no -k regex:$regex -c 1 -o $R/$name \
    $K bench --package $P --kernel $case --variant $variant --replays 1 --bandwidth-bytes 67108864 > $R/$name.run.log 2>&1
  echo "$name rc $?"
  ncu -i $R/$name.ncu-rep --page details > $R/$name.details.txt 2>&1
  ncu -i $R/$name.ncu-rep --page source --print-source sass --csv > $R/$name.sass.csv 2>&1
  grep -E "Duration|Registers Per|Achieved Occ|Eligible Warps|No Eligible|Issue Slots Busy|DRAM Throughput|Executed Ipc A" $R/$name.details.txt | head -10
  rm -f $R/$name.ncu-rep
  ck
}
prof t8lds attention_decode_q8_0_i8_d128 attn_q8_0_i8_ctx32k_t8 mma8_lds
prof t8 attention_decode_q8_0_i8_d128 attn_q8_0_i8_ctx32k_t8 mma8
prof t1lds attention_decode_q8_0_i8_d128 attn_q8_0_i8_ctx32k_t1 mma8_lds
timeout 120 $K bench --package $P --kernel attn_q8_0_i8_ctx32k_t1,attn_q8_0_i8_ctx32k_t8,attn_q8_0_i8_ctx32k_t4 --variant mma8,mma8_lds > $R/bench.log 2>&1
echo "bench rc $?"; grep -E "^attn" $R/bench.log | sort -u | cut -c1-200; ck
