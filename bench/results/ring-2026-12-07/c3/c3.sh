#!/usr/bin/env bash
# Call 3 (2026-12-07, forty-sixth session): `gemv_q8_0_rp_k4` `wide_t2_g4_s` (`wide_t2_g4` with
# the rest of its first trip copied into LDS by `cp.async` before the grid-dependency wait,
# `k4::build_wide_staged`; the ring variants of calls 1-2 removed). Package `libS`: cuda parity
# of the k4 family, then issue 12's N = 14336 cases, `wide_t2_g4` against `wide_t2_g4_s`, three
# runs. On an H200 (the issue's card) also llama.cpp's MUL_MAT on the same shapes, built in the
# background during the rest. Carry: .cxr (kiln, libS.txz, peers.txz, call.sh).
. "$(dirname "$0")/call.sh"
begin c3 540
rm -rf /tmp/pS; mkdir -p /tmp/pS; tar xJf $C/libS.txz -C /tmp/pS
P=/tmp/pS/dist
BP=
if grep -q H200 $R/env.log && [ ! -x /tmp/llb/bin/peer-bench ]; then
  mkdir -p /tmp/peers && tar xJf $C/peers.txz -C /tmp/peers
  grep -q PEER_FA_KV /tmp/peers/llamacpp/ggml/tests/peer-bench.cpp ||
    patch -p1 -d /tmp/peers/llamacpp < bench/peers/peer-bench-kiln.patch > $R/peer-patch.log 2>&1
  ( OUT=$R/peer STEPS="none" DEADLINE=290 BUILD_DEADLINE=285 nice -n 5 bash /tmp/peers/llamacpp/run.sh > $R/peer-build.log 2>&1; echo "rc $?" >> $R/peer-build.log ) &
  BP=$!
fi
timeout $(lim 90) $K parity --device cuda --package $P --kernel gemv_q8_0_rp_k4 > $R/parity.log 2>&1
echo "cuda parity k4 rc $?: $(tail -n 1 $R/parity.log) ($((SECONDS - T0)) s)"; grep -E "FAIL" $R/parity.log | head -5; ck
BIG=gemv_q8_0_rp_k4_n14336_t1,gemv_q8_0_rp_k4_n14336_t4,gemv_q8_0_rp_k4_n14336_t8
for i in 1 2 3; do
  timeout $(lim 80) $K bench --package $P --kernel $BIG --variant wide_t2_g4,wide_t2_g4_s --json $R/big-$i.json > $R/big-$i.log 2>&1
  echo "big $i rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/big-$i.log | sort -u | cut -c1-200; ck
done
if [ -n "$BP" ]; then
  wait $BP; echo "peer build: $(tail -n 1 $R/peer-build.log) ($((SECONDS - T0)) s)"
  if [ -x /tmp/llb/bin/peer-bench ] && [ $(left) -gt 40 ]; then
    OUT=$R/peer STEPS="peer" PEER_FA_KV=4096 DEADLINE=$(lim 150) timeout $(lim 155) bash /tmp/peers/llamacpp/run.sh > $R/peer-run.log 2>&1
    echo "peer rc $? ($((SECONDS - T0)) s)"
    grep -E "MUL_MAT" $R/peer/peer.txt 2>/dev/null | grep "mode=rot" | cut -c1-170 | head -24
  fi
  [ $(left) -gt 30 ] && {
    timeout $(lim 60) $K bench --package $P --kernel $BIG --variant wide_t2_g4,wide_t2_g4_s --json $R/big-4.json > $R/big-4.log 2>&1
    echo "big 4 rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/big-4.log | sort -u | cut -c1-200; }
fi
ck
echo "end ($((SECONDS - T0)) s)"
