#!/usr/bin/env bash
# The forty-sixth session's first call (2026-12-07): the k4 ring variants (weight quants by
# async copies into an LDS ring, the first trips before the grid-dependency wait;
# `k4::build_ring`), never run on a GPU before. Package `libR` (this session's sm_90 package):
# cuda parity of the k4 family, then issue 12's k4 cases, the ring variants against the routed
# `wide_t2_g4` (N = 14336) and `wide_t1_g4_w8` (N = 4096), twice, interleaved by run; the routed
# one-token dense GEMV for reference. Carry: .cxr (runtime-only kiln, libR.txz, call.sh).
. "$(dirname "$0")/call.sh"
begin c1 520
rm -rf /tmp/pR; mkdir -p /tmp/pR; tar xJf $C/libR.txz -C /tmp/pR
P=/tmp/pR/dist
timeout $(lim 90) $K parity --device cuda --package $P --kernel gemv_q8_0_rp_k4 > $R/parity.log 2>&1
echo "cuda parity k4 rc $?: $(tail -n 1 $R/parity.log) ($((SECONDS - T0)) s)"; grep -E "FAIL" $R/parity.log | head -5; ck
BIG=gemv_q8_0_rp_k4_n14336_t1,gemv_q8_0_rp_k4_n14336_t4,gemv_q8_0_rp_k4_n14336_t8
SMALL=gemv_q8_0_rp_k4_n4096_t1,gemv_q8_0_rp_k4_n4096_t8
VB=wide_t2_g4,ring_t1_s2_r64,ring_t1_s3_r64,ring_t1_s4_r64,ring_t2_s2_r96
VS=wide_t1_g4_w8,ring_t1_s2_w8_r64
run() { local i=$1
  timeout $(lim 100) $K bench --package $P --kernel $BIG --variant $VB --json $R/big-$i.json > $R/big-$i.log 2>&1
  echo "big $i rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/big-$i.log | sort -u | cut -c1-200; ck
  timeout $(lim 60) $K bench --package $P --kernel $SMALL --variant $VS --json $R/small-$i.json > $R/small-$i.log 2>&1
  echo "small $i rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/small-$i.log | sort -u | cut -c1-200; ck
}
run 1
G=gemv_q8_0_rp_n14336_t1,gemv_q8_0_rp_n4096_t1
timeout $(lim 60) $K bench --package $P --kernel $G --json $R/routed.json > $R/routed.log 2>&1
echo "routed rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/routed.log | sort -u | cut -c1-200; ck
[ $(left) -gt 60 ] && run 2
ck
echo "end ($((SECONDS - T0)) s)"
