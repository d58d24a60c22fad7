#!/usr/bin/env bash
# The forty-seventh session's first call (2026-12-07). (1) the probe bench/probes/read_paths.cu
# (plain 16-byte loads, cp.async, TMA bulk copies: the bytes a GEMV streams, 17 and 60 MiB);
# (2) and (3) on an H200 only (on another card (1) and (4) only): (2) issue 12's routed GEMV cases with HEAD's sm_90 package (`libH`); (3) the forty-sixth
# session's `wide_t2_g4_s` (the half of `wide_t2_g4`'s first trip it no longer holds across the
# wait copied into LDS before it; package `libS`, `kiln build --arch sm_90 --strict --kernel
# gemv_q8_0_rp_k4` at d5c9a89), never timed on an H200: cuda parity of the family, then against
# `wide_t2_g4` at N = 14336, T = 1 / 4 / 8, three runs interleaved; (4)
# `wide_t2_g2_w8`, `wide_t2_g1_w8` and `wide_t2_g4_w8_h32_r255` (eight waves over two tiles: half the activation reads
# after the wait; package `libX`, this session's tree, k4 only) against `wide_t1_g4_w8` at N =
# 4096, T = 1 / 8, and `wide_t2_g4_h32_r255` / `_h24_r160` (`wide_t2_g4` holding
# its whole / three quarters of its first trip across the wait under a cap of 255 / 160)
# against `wide_t2_g4` at N = 14336, interleaved with (3). Carry .cxd and .cxh; run
# from the repository root: `bash .cxd/c1.sh`.
. "$(dirname "$0")/call.sh"
begin c1 480
nvcc -O3 -arch=sm_90 -o /tmp/read_paths bench/probes/read_paths.cu > $R/probe-build.log 2>&1
echo "probe build rc $? ($((SECONDS - T0)) s)"
for i in 1 2; do timeout $(lim 60) /tmp/read_paths 17 60 > $R/probe-$i.log 2>&1; echo "probe $i rc $? ($((SECONDS - T0)) s)"; done
cat $R/probe-1.log; grep -h MiB $R/probe-2.log; ck
H200=0; grep -q H200 $R/env.log && H200=1
rm -rf /tmp/pH /tmp/pS /tmp/pX; mkdir -p /tmp/pH /tmp/pS /tmp/pX
tar xJf $(pwd)/.cxh/libH.txz -C /tmp/pH; tar xJf $(pwd)/.cxh/libS.txz -C /tmp/pS
P=/tmp/pH/dist; S=/tmp/pS/dist
G=gemv_q8_0_rp_n14336_t1,gemv_q8_0_rp_k4_n14336_t4,gemv_q8_0_rp_k4_n14336_t8,gemv_q8_0_rp_n4096_t1,gemv_q8_0_rp_k4_n4096_t8
G=$G,gemv_q4_0_rp_n14336_t1,gemv_q4_1_rp_n14336_t1,gemv_moe_q8_0_qwen3_t1,gemv_moe_q8_0_qwen3_t8
[ $H200 = 1 ] && timeout $(lim 100) $K bench --package $P --kernel $G --json $R/gemv.json > $R/gemv.log 2>&1
echo "gemv rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/gemv.log | sort -u | cut -c1-150; ck
[ $H200 = 1 ] && timeout $(lim 60) $K parity --device cuda --package $S --kernel gemv_q8_0_rp_k4 > $R/parity-s.log 2>&1
echo "cuda parity k4 (libS) rc $?: $(tail -n 1 $R/parity-s.log) ($((SECONDS - T0)) s)"; grep -E "FAIL" $R/parity-s.log | head -5; ck
tar xJf $(pwd)/.cxh/libX.txz -C /tmp/pX 2>/dev/null; X=/tmp/pX/dist
timeout $(lim 60) $K parity --device cuda --package $X --kernel gemv_q8_0_rp_k4 > $R/parity-x.log 2>&1
echo "cuda parity k4 (libX) rc $?: $(tail -n 1 $R/parity-x.log) ($((SECONDS - T0)) s)"; grep -E "FAIL" $R/parity-x.log | head -5; ck
SMALL=gemv_q8_0_rp_k4_n4096_t1,gemv_q8_0_rp_k4_n4096_t8
BIG=gemv_q8_0_rp_k4_n14336_t1,gemv_q8_0_rp_k4_n14336_t4,gemv_q8_0_rp_k4_n14336_t8
for i in 1 2 3; do
  [ $(left) -gt 40 ] || break
  [ $H200 = 1 ] && timeout $(lim 60) $K bench --package $S --kernel $BIG --variant wide_t2_g4,wide_t2_g4_s --json $R/staged-$i.json > $R/staged-$i.log 2>&1
  echo "staged $i rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/staged-$i.log | sort -u | cut -c1-150; ck
  timeout $(lim 60) $K bench --package $X --kernel $BIG --variant wide_t2_g4,wide_t2_g4_h32_r255,wide_t2_g4_h24_r160 --json $R/held-$i.json > $R/held-$i.log 2>&1
  echo "held $i rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/held-$i.log | sort -u | cut -c1-150; ck
  timeout $(lim 45) $K bench --package $X --kernel $SMALL --variant wide_t1_g4_w8,wide_t2_g2_w8,wide_t2_g1_w8,wide_t2_g4_w8_h32_r255 --json $R/two-$i.json > $R/two-$i.log 2>&1
  echo "two tiles $i rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/two-$i.log | sort -u | cut -c1-150; ck
done
ck
echo "end ($((SECONDS - T0)) s)"
