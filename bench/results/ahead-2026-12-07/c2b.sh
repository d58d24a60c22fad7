#!/usr/bin/env bash
# The forty-fourth session's short GEMV call (2026-12-07): c2.sh cut to what fits the device time
# left after failed starts. No peers (their figures of 2026-12-06 stand beside these; the A/B
# below has its baseline in the same call). Package `libF` (7e2b7c0): cuda parity of
# `gemv_q8_0_rp_k4`; `wide_t2_g4` against `wide_t2_g4_a` at N = 14336 T = 1/4/8, twice;
# `kiln tune` of `gemv_q8_0_rp` t1_nlo over six candidates (`tuneG`: the bucket's winner and
# runner-up knobs and `p1_r2_u8_w2`, each with e = 1 and e = 2); the routed N = 4096 T = 1.
# Carry: .cxd and .cxb.
. "$(dirname "$0")/call.sh"
begin c2b 250
rm -rf /tmp/pF /tmp/tuneF; mkdir -p /tmp/pF; tar xJf $(pwd)/.cxb/libF.txz -C /tmp/pF; tar xJf $(pwd)/.cxb/tuneG.txz -C /tmp
P=/tmp/pF/dist
cp specs/tuning/sm_90.ron $R/sm_90.ron
GK=gemv_q8_0_rp_k4_n14336_t1,gemv_q8_0_rp_k4_n14336_t4,gemv_q8_0_rp_k4_n14336_t8
k4() { local i=$1
  timeout $(lim 50) $K bench --package $P --kernel $GK --variant wide_t2_g4,wide_t2_g4_a --json $R/k4-$i.json > $R/k4-$i.log 2>&1
  echo "k4 $i rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/k4-$i.log | sort -u | cut -c1-200; ck
}
# The A/B first: with little device time left it is the one figure that decides a route.
k4 1
timeout $(lim 45) $K parity --device cuda --package $P --kernel gemv_q8_0_rp_k4 > $R/parity.log 2>&1
echo "cuda parity k4 rc $?: $(tail -n 1 $R/parity.log) ($((SECONDS - T0)) s)"; grep -E "FAIL" $R/parity.log | head -5; ck
[ $(left) -gt 60 ] && timeout $(lim 90) $K tune --device cuda --kernel gemv_q8_0_rp --shapes t1_nlo --candidates /tmp/tuneF --out $R/sm_90.ron --budget-s 75 > $R/tuneG.log 2>&1
echo "tune rc $? ($((SECONDS - T0)) s)"; tail -n 8 $R/tuneG.log | cut -c1-220; cp /tmp/tuneF/tune-progress.jsonl $R/tuneG-progress.jsonl 2>/dev/null; ck
timeout $(lim 40) $K bench --package $P --kernel gemv_q8_0_rp_n4096_t1 --json $R/routed.json > $R/routed.log 2>&1
echo "routed rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/routed.log | sort -u | cut -c1-200; ck
[ $(left) -gt 45 ] && k4 2
ck
echo "end ($((SECONDS - T0)) s)"
