#!/usr/bin/env bash
# The forty-second session's call 1 (2026-12-06): HEAD's sm_90 package (`libA`, a39bcd6):
# cuda parity of the i8 attention families (their committed objects had run only on the
# interpreter); issue 12's GEMV cases, every variant; llama.cpp's peer-bench (MUL_MAT,
# MUL_MAT_ID, FLASH_ATTN_EXT) built in the background and run in the same call. Carry: .cxd.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c1; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c1.tgz -C /tmp c1; }
T0=$SECONDS; B=${BUDGET:-575}
left() { echo $((B - (SECONDS - T0))); }
lim() { local l; l=$(left); [ $l -gt $1 ] && echo $1 || echo $((l > 5 ? l : 5)); }
C=$(pwd)/.cxd
xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; K=/tmp/kiln
rm -rf /tmp/pA; mkdir -p /tmp/pA; tar xJf $C/libA.txz -C /tmp/pA; P=/tmp/pA/dist
mkdir -p /tmp/peers && tar xJf $C/peers.txz -C /tmp/peers
grep -q PEER_FA_KV /tmp/peers/llamacpp/ggml/tests/peer-bench.cpp ||
  patch -p1 -d /tmp/peers/llamacpp < bench/peers/peer-bench-kiln.patch > $R/peer-patch.log 2>&1
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
( OUT=$R/peer STEPS="none" DEADLINE=290 BUILD_DEADLINE=285 nice -n 5 bash /tmp/peers/llamacpp/run.sh > $R/peer-build.log 2>&1; echo "rc $?" >> $R/peer-build.log ) &
BP=$!
timeout $(lim 110) $K parity --device cuda --package $P --kernel attention_decode_q8_0_i8_d128,attention_decode_q8_0_i8_d64 > $R/parity.log 2>&1
echo "cuda parity rc $?: $(tail -n 1 $R/parity.log) ($((SECONDS - T0)) s)"; grep -E "FAIL" $R/parity.log | head -5; ck
G=gemv_q8_0_rp_k4_n14336_t1,gemv_q8_0_rp_k4_n14336_t4,gemv_q8_0_rp_k4_n14336_t8,gemv_q8_0_rp_k4_n4096_t1,gemv_q8_0_rp_k4_n4096_t8
timeout $(lim 120) $K bench --package $P --kernel $G --json $R/bench-k4.json > $R/bench-k4.log 2>&1
echo "bench k4 rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/bench-k4.log | sort -u | cut -c1-200; ck
G=gemv_q8_0_rp_n14336_t1,gemv_q8_0_rp_n4096_t1,gemv_q4_0_rp_n14336_t1,gemv_q4_1_rp_n14336_t1,gemv_moe_q8_0_qwen3_t1,gemv_moe_q8_0_qwen3_t8
timeout $(lim 140) $K bench --package $P --kernel $G --json $R/bench-t1.json > $R/bench-t1.log 2>&1
echo "bench t1/moe rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/bench-t1.log | sort -u | cut -c1-200; ck
wait $BP; echo "peer build: $(tail -n 1 $R/peer-build.log) ($((SECONDS - T0)) s)"; ck
if [ -x /tmp/llb/bin/peer-bench ] && [ $(left) -gt 40 ]; then
  OUT=$R/peer STEPS="peer" PEER_FA_KV=4096,32768 DEADLINE=$(lim 200) timeout $(lim 205) bash /tmp/peers/llamacpp/run.sh > $R/peer-run.log 2>&1
  echo "peer rc $? ($((SECONDS - T0)) s)"
  grep -E "MUL_MAT|FLASH" $R/peer/peer.txt 2>/dev/null | grep "mode=rot" | cut -c1-170 | head -40
else echo "peer skipped: $(left) s left"; fi
ck
echo "end ($((SECONDS - T0)) s)"
