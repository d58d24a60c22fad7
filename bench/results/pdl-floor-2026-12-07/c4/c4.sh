#!/usr/bin/env bash
# The forty-seventh session's fourth call (2026-12-07): where `wide_t1_g4_w8`'s 3 us over a
# stream go at N = 4096. Package `libK` (`kiln build --arch sm_90 --kernel gemv_q8_0_rp_k4` of a
# throwaway tree, never committed): `_cut1` is `wide_t1_g4_w8` with everything after the
# grid-dependency wait but the slot partials' store and combine replaced by the held quants'
# bits (wrong results: timing only, no parity); `_cut2` also loads the activations after the
# wait. Three runs against the routed one; on an H200 also bench/probes/pdl_floor.cu and issue
# 12's routed cases with HEAD's package (`libH`). Carry .cxd and .cxh; `bash .cxd/c4.sh`.
. "$(dirname "$0")/call.sh"
begin c4 250
H200=0; grep -q H200 $R/env.log && H200=1
rm -rf /tmp/pK; mkdir -p /tmp/pK; tar xJf $(pwd)/.cxh/libK.txz -C /tmp/pK; X=/tmp/pK/dist
SMALL=gemv_q8_0_rp_k4_n4096_t1,gemv_q8_0_rp_k4_n4096_t8
for i in 1 2 3; do
  [ $(left) -gt 30 ] || break
  timeout $(lim 40) $K bench --package $X --kernel $SMALL --variant wide_t1_g4_w8,wide_t1_g4_w8_cut1,wide_t1_g4_w8_cut2 --json $R/cut-$i.json > $R/cut-$i.log 2>&1
  echo "cut $i rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/cut-$i.log | sort -u | cut -c1-160; ck
done
if [ $H200 = 1 ] && [ $(left) -gt 60 ]; then
  nvcc -O3 -arch=sm_90 -o /tmp/pdl_floor bench/probes/pdl_floor.cu > $R/pdl-build.log 2>&1
  timeout $(lim 30) /tmp/pdl_floor > $R/pdl-1.log 2>&1; echo "pdl_floor rc $? ($((SECONDS - T0)) s)"; cat $R/pdl-1.log; ck
  rm -rf /tmp/pH; mkdir -p /tmp/pH; tar xJf $(pwd)/.cxh/libH.txz -C /tmp/pH; P=/tmp/pH/dist
  G=gemv_q8_0_rp_n14336_t1,gemv_q8_0_rp_k4_n14336_t4,gemv_q8_0_rp_k4_n14336_t8,gemv_q8_0_rp_n4096_t1,gemv_q8_0_rp_k4_n4096_t8
  G=$G,gemv_q4_0_rp_n14336_t1,gemv_q4_1_rp_n14336_t1,gemv_moe_q8_0_qwen3_t1,gemv_moe_q8_0_qwen3_t8
  timeout $(lim 100) $K bench --package $P --kernel $G --json $R/gemv.json > $R/gemv.log 2>&1
  echo "gemv rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/gemv.log | sort -u | cut -c1-150; ck
fi
ck
echo "end ($((SECONDS - T0)) s)"
