#!/usr/bin/env bash
# The forty-eighth session's first call (2026-12-07). `libA`: `kiln build --arch sm_90 --strict
# --kernel gemv_q8_0_rp_k4` at HEAD (the `_hs` / `_hsx` twins: the held blocks' weight scales
# loaded before the wait as one 16-byte vector a lane and read through LDS, and with `x` the
# activation scales staged in LDS after it). `libK`: the same with timing-only twins of
# `wide_t1_g4_w8` from a throwaway patch (`cut.patch` beside this script; wrong results, no
# parity): `_cut3` the held quants, activations and weight scales loaded and folded into the
# output, no arithmetic; `_cut4` the whole kernel with constant weight scales; `_cut5` with
# constant activation scales; `_cut6` both constant. (1) cuda parity of libA's k4 family;
# (2) N = 4096 T = 1 / 8, three runs, in turn with (3) N = 14336 T = 1 / 4 / 8, two runs; (4) the dense
# routed N = 4096 T = 1 (`libH`). Carry .cxd and .cxh; `bash .cxd/c1.sh`.
. "$(dirname "$0")/call.sh"
begin c1 420
rm -rf /tmp/pA /tmp/pK /tmp/pH; mkdir -p /tmp/pA /tmp/pK /tmp/pH
tar xJf $(pwd)/.cxh/libA.txz -C /tmp/pA; tar xJf $(pwd)/.cxh/libK.txz -C /tmp/pK
A=/tmp/pA/dist; X=/tmp/pK/dist
timeout $(lim 90) $K parity --device cuda --package $A --kernel gemv_q8_0_rp_k4 > $R/parity.log 2>&1
echo "cuda parity k4 rc $?: $(tail -n 1 $R/parity.log) ($((SECONDS - T0)) s)"; grep -E "FAIL" $R/parity.log | head -5; ck
SMALL=gemv_q8_0_rp_k4_n4096_t1,gemv_q8_0_rp_k4_n4096_t8
V=wide_t1_g4_w8,wide_t1_g4_w8_hs,wide_t1_g4_w8_hsx,wide_t1_g4_w8_cut3,wide_t1_g4_w8_cut4,wide_t1_g4_w8_cut5,wide_t1_g4_w8_cut6
BIG=gemv_q8_0_rp_k4_n14336_t1,gemv_q8_0_rp_k4_n14336_t4,gemv_q8_0_rp_k4_n14336_t8
# Small and big in turn, so that a call cut short still has both.
for i in 1 2 3; do
  [ $(left) -gt 50 ] || break
  timeout $(lim 60) $K bench --package $X --kernel $SMALL --variant $V --json $R/small-$i.json > $R/small-$i.log 2>&1
  echo "small $i rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/small-$i.log | sort -u | cut -c1-250; ck
  [ $i -le 2 ] && [ $(left) -gt 50 ] || continue
  timeout $(lim 60) $K bench --package $A --kernel $BIG --variant wide_t2_g4,wide_t2_g4_hs,wide_t2_g4_hsx --json $R/big-$i.json > $R/big-$i.log 2>&1
  echo "big $i rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/big-$i.log | sort -u | cut -c1-200; ck
done
if [ $(left) -gt 40 ]; then
  tar xJf $(pwd)/.cxh/libH.txz -C /tmp/pH
  timeout $(lim 40) $K bench --package /tmp/pH/dist --kernel gemv_q8_0_rp_n4096_t1 --variant tuned_t1_nlo,p1r2u8w2e --json $R/dense.json > $R/dense.log 2>&1
  echo "dense rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/dense.log | sort -u | cut -c1-200; ck
fi
ck
echo "end ($((SECONDS - T0)) s)"
