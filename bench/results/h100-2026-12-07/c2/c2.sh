#!/usr/bin/env bash
# The forty-third session's GEMV call (2026-12-07): issue 12, with llama.cpp's peer-bench built
# in the background unless a warm machine has it. Package `libF` (HEAD's objects plus
# `gemv_q8_0_rp_k4` `wide_t2_g4_a`, which also asks L2 for the rest of each wave's slot before
# the grid-dependency wait): its cuda parity of the k4 family; the k4 cases `wide_t2_g4` against
# `wide_t2_g4_a`, twice; `kiln tune` of the one-token dense buckets with the new early knob
# value `e=2` (the rest of the rows asked of L2 before the wait; candidates `tuneF`, its plan cut to the
# 27 with u=8, the unroll of every one-token winner so far); the routed
# one-token cases; llama.cpp's MUL_MAT in the same call. Carry: .cxd and .cxb (the package and candidates).
. "$(dirname "$0")/call.sh"
begin c2 450
rm -rf /tmp/pF /tmp/tuneF; mkdir -p /tmp/pF; tar xJf $(pwd)/.cxb/libF.txz -C /tmp/pF; tar xJf $(pwd)/.cxb/tuneF.txz -C /tmp
P=/tmp/pF/dist
cp specs/tuning/sm_90.ron $R/sm_90.ron
BP=
if [ ! -x /tmp/llb/bin/peer-bench ] && [ -z "${NOPEER:-}" ]; then
  mkdir -p /tmp/peers && tar xJf $C/peers.txz -C /tmp/peers
  grep -q PEER_FA_KV /tmp/peers/llamacpp/ggml/tests/peer-bench.cpp ||
    patch -p1 -d /tmp/peers/llamacpp < bench/peers/peer-bench-kiln.patch > $R/peer-patch.log 2>&1
  ( OUT=$R/peer STEPS="none" DEADLINE=290 BUILD_DEADLINE=285 nice -n 5 bash /tmp/peers/llamacpp/run.sh > $R/peer-build.log 2>&1; echo "rc $?" >> $R/peer-build.log ) &
  BP=$!
fi
timeout $(lim 80) $K parity --device cuda --package $P --kernel gemv_q8_0_rp_k4 > $R/parity.log 2>&1
echo "cuda parity k4 rc $?: $(tail -n 1 $R/parity.log) ($((SECONDS - T0)) s)"; grep -E "FAIL" $R/parity.log | head -5; ck
GK=gemv_q8_0_rp_k4_n14336_t1,gemv_q8_0_rp_k4_n14336_t4,gemv_q8_0_rp_k4_n14336_t8
k4() { local i=$1
  timeout $(lim 60) $K bench --package $P --kernel $GK --variant wide_t2_g4,wide_t2_g4_a --json $R/k4-$i.json > $R/k4-$i.log 2>&1
  echo "k4 $i rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/k4-$i.log | sort -u | cut -c1-200; ck
}
k4 1
timeout $(lim 170) $K tune --device cuda --kernel gemv_q8_0_rp --shapes t1_nlo,t1_nhi --candidates /tmp/tuneF --out $R/sm_90.ron --budget-s 150 > $R/tuneF.log 2>&1
echo "tune rc $? ($((SECONDS - T0)) s)"; tail -n 6 $R/tuneF.log | cut -c1-220; cp /tmp/tuneF/tune-progress.jsonl $R/tuneF-progress.jsonl 2>/dev/null; ck
[ -n "$BP" ] && { wait $BP; echo "peer build: $(tail -n 1 $R/peer-build.log) ($((SECONDS - T0)) s)"; }
if [ -x /tmp/llb/bin/peer-bench ] && [ $(left) -gt 40 ]; then
  OUT=$R/peer STEPS="peer" PEER_FA_KV=4096 DEADLINE=$(lim 150) timeout $(lim 155) bash /tmp/peers/llamacpp/run.sh > $R/peer-run.log 2>&1
  echo "peer rc $? ($((SECONDS - T0)) s)"
  grep -E "MUL_MAT" $R/peer/peer.txt 2>/dev/null | grep "mode=rot" | cut -c1-170 | head -24
else echo "peer skipped: $(left) s left"; fi
ck
G=gemv_q8_0_rp_n14336_t1,gemv_q8_0_rp_n4096_t1,gemv_q8_0_rp_k4_n4096_t8
timeout $(lim 60) $K bench --package $P --kernel $G --json $R/routed.json > $R/routed.log 2>&1
echo "routed rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/routed.log | sort -u | cut -c1-200; ck
[ $(left) -gt 30 ] && k4 2
ck
echo "end ($((SECONDS - T0)) s)"
