#!/usr/bin/env bash
# The forty-seventh session's second call (2026-12-07). (1) bench/probes/pdl_floor.cu: what a
# kernel that only streams a GEMV's bytes keeps of the floor when replayed against itself under
# programmatic launch (its loads before the wait, or after, or with an activation read after
# it), twice; bench/probes/read_paths.cu once; (2) the routed cases of the same sizes with HEAD's
# sm_90 package (`libH`), so the probe and kiln are on the same card in the same call; (3) on
# an H200 only: the rest of issue 12's routed cases, and `wide_t2_g4_s` (package `libS`, at
# d5c9a89) against `wide_t2_g4`, never timed on an H200. Carry .cxd and .cxh; run from the
# repository root: `bash .cxd/c2.sh`.
. "$(dirname "$0")/call.sh"
begin c2 420
H200=0; grep -q H200 $R/env.log && H200=1
{ which nsys ncu; nvcc --version | tail -2; } > $R/tools.log 2>&1
nvcc -O3 -arch=sm_90 -o /tmp/pdl_floor bench/probes/pdl_floor.cu > $R/pdl-build.log 2>&1
nvcc -O3 -arch=sm_90 -o /tmp/read_paths bench/probes/read_paths.cu > $R/probe-build.log 2>&1
echo "probe builds rc $? ($((SECONDS - T0)) s)"; cat $R/pdl-build.log | head -5
for i in 1 2; do timeout $(lim 60) /tmp/pdl_floor > $R/pdl-$i.log 2>&1; echo "pdl_floor $i rc $? ($((SECONDS - T0)) s)"; done
cat $R/pdl-1.log; grep -h " MB " $R/pdl-2.log; ck
timeout $(lim 60) /tmp/read_paths 17 60 > $R/probe-1.log 2>&1; echo "read_paths rc $? ($((SECONDS - T0)) s)"; grep -E "copy|MiB" $R/probe-1.log; ck
rm -rf /tmp/pH /tmp/pS; mkdir -p /tmp/pH /tmp/pS
tar xJf $(pwd)/.cxh/libH.txz -C /tmp/pH; tar xJf $(pwd)/.cxh/libS.txz -C /tmp/pS
P=/tmp/pH/dist; S=/tmp/pS/dist
G=gemv_q8_0_rp_n4096_t1,gemv_q8_0_rp_k4_n4096_t1,gemv_q8_0_rp_k4_n4096_t8,gemv_q8_0_rp_n14336_t1,gemv_q8_0_rp_k4_n14336_t8
[ $H200 = 1 ] && G=$G,gemv_q8_0_rp_k4_n14336_t4,gemv_q4_0_rp_n14336_t1,gemv_q4_1_rp_n14336_t1,gemv_moe_q8_0_qwen3_t1,gemv_moe_q8_0_qwen3_t8
timeout $(lim 100) $K bench --package $P --kernel $G --json $R/gemv.json > $R/gemv.log 2>&1
echo "gemv rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/gemv.log | sort -u | cut -c1-150; ck
if [ $H200 = 1 ]; then
  timeout $(lim 60) $K parity --device cuda --package $S --kernel gemv_q8_0_rp_k4 > $R/parity-s.log 2>&1
  echo "cuda parity k4 (libS) rc $?: $(tail -n 1 $R/parity-s.log) ($((SECONDS - T0)) s)"; grep -E "FAIL" $R/parity-s.log | head -5; ck
  BIG=gemv_q8_0_rp_k4_n14336_t1,gemv_q8_0_rp_k4_n14336_t4,gemv_q8_0_rp_k4_n14336_t8
  for i in 1 2; do
    [ $(left) -gt 40 ] || break
    timeout $(lim 60) $K bench --package $S --kernel $BIG --variant wide_t2_g4,wide_t2_g4_s --json $R/staged-$i.json > $R/staged-$i.log 2>&1
    echo "staged $i rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/staged-$i.log | sort -u | cut -c1-150; ck
  done
fi
ck
echo "end ($((SECONDS - T0)) s)"
