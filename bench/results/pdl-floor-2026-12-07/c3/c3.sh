#!/usr/bin/env bash
# The forty-seventh session's third call (2026-12-07): `wide_t1_g4_w8_ps` and `wide_t2_g4_ps`
# (the routed k4 variants at N = 4096 and 14336 whose waves ask L2 for their slot's weight
# scales before the grid-dependency wait; ptxas sinks those loads past it, so a DRAM round trip
# followed the wait). Package `libT` (`kiln build --arch sm_90 --kernel gemv_q8_0_rp_k4`, this
# session's tree): cuda parity of the family, then each against its plain twin, three runs; on
# an H200 also bench/probes/pdl_floor.cu and issue 12's routed cases with HEAD's package
# (`libH`). Carry .cxd and .cxh; run from the repository root: `bash .cxd/c3.sh`.
. "$(dirname "$0")/call.sh"
begin c3 280
H200=0; grep -q H200 $R/env.log && H200=1
rm -rf /tmp/pT; mkdir -p /tmp/pT; tar xJf $(pwd)/.cxh/libT.txz -C /tmp/pT; T=/tmp/pT/dist
timeout $(lim 60) $K parity --device cuda --package $T --kernel gemv_q8_0_rp_k4 > $R/parity-t.log 2>&1
echo "cuda parity k4 (libT) rc $?: $(tail -n 1 $R/parity-t.log) ($((SECONDS - T0)) s)"; grep -E "FAIL" $R/parity-t.log | head -5; ck
SMALL=gemv_q8_0_rp_k4_n4096_t1,gemv_q8_0_rp_k4_n4096_t8
BIG=gemv_q8_0_rp_k4_n14336_t1,gemv_q8_0_rp_k4_n14336_t4,gemv_q8_0_rp_k4_n14336_t8
for i in 1 2 3; do
  [ $(left) -gt 40 ] || break
  timeout $(lim 45) $K bench --package $T --kernel $SMALL --variant wide_t1_g4_w8,wide_t1_g4_w8_ps --json $R/small-$i.json > $R/small-$i.log 2>&1
  echo "small $i rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/small-$i.log | sort -u | cut -c1-150; ck
  timeout $(lim 60) $K bench --package $T --kernel $BIG --variant wide_t2_g4,wide_t2_g4_ps --json $R/big-$i.json > $R/big-$i.log 2>&1
  echo "big $i rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/big-$i.log | sort -u | cut -c1-150; ck
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
