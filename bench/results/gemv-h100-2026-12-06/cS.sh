#!/usr/bin/env bash
# The thirty-sixth session's device call (2026-12-06): issue 12's GEMV cases on an H200 with
# llama.cpp's peer-bench (MUL_MAT, MUL_MAT_ID) built and run in the same call, the runtime's cuda
# device tests and cuda parity of the GEMV families, all with this session's kiln (its package
# checks each IR file once, in parallel). The template is bench/results/across-2026-12-05's
# cB.sh and the thirty-fourth session's cN.sh. Carry: .cxc.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cS; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cS.tgz -C /tmp cS; }
T0=$SECONDS; B=${BUDGET:-570}
left() { echo $((B - (SECONDS - T0))); }
lim() { local l; l=$(left); [ $l -gt $1 ] && echo $1 || echo $((l > 5 ? l : 5)); }
C=$(pwd)/.cxc
xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; K=/tmp/kiln
rm -rf /tmp/pS; mkdir -p /tmp/pS; tar xJf $C/libS.txz -C /tmp/pS; P=/tmp/pS/dist
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
[ -d .peers/llamacpp ] || tar xJf $C/peers.txz
grep -q PEER_FA_KV .peers/llamacpp/ggml/tests/peer-bench.cpp 2>/dev/null ||
  patch -p1 -d .peers/llamacpp < bench/peers/peer-bench-kiln.patch > $R/peer-patch.log 2>&1
( OUT=$R/peer STEPS="none" nice -n 5 bash .peers/llamacpp/run.sh > $R/peer-build.log 2>&1 ) &
GPID=$!
xz -dc $C/rt-tests.xz > /tmp/rt-tests && chmod +x /tmp/rt-tests
timeout 90 /tmp/rt-tests --ignored cuda --test-threads=1 > $R/device-tests.log 2>&1
echo "device tests rc $?: $(grep -E '^test result' $R/device-tests.log)"; ck
G=gemv_q8_0_rp_k4_n14336_t1,gemv_q8_0_rp_k4_n14336_t4,gemv_q8_0_rp_k4_n14336_t8,gemv_q8_0_rp_k4_n4096_t1,gemv_q8_0_rp_k4_n4096_t8
timeout $(lim 120) $K bench --package $P --kernel $G --json $R/bench-k4.json > $R/bench-k4.log 2>&1
echo "bench k4 rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/bench-k4.log | sort -u | cut -c1-200; ck
G=gemv_q8_0_rp_n14336_t1,gemv_q8_0_rp_n4096_t1,gemv_q4_0_rp_n14336_t1,gemv_q4_1_rp_n14336_t1,gemv_moe_q8_0_qwen3_t1,gemv_moe_q8_0_qwen3_t8
timeout $(lim 140) $K bench --package $P --kernel $G --json $R/bench-t1.json > $R/bench-t1.log 2>&1
echo "bench t1/moe rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/bench-t1.log | sort -u | cut -c1-200; ck
if [ $(left) -gt 60 ]; then
  wait $GPID; echo "peer build: $(tail -n 2 $R/peer/build.txt 2>/dev/null | tr '\n' ' ' | cut -c1-200)"
  OUT=$R/peer STEPS="peer" DEADLINE=$(lim 150) bash .peers/llamacpp/run.sh > $R/peer-run.log 2>&1
  echo "peer rc $? ($((SECONDS - T0)) s)"
  grep -iE "MUL_MAT" $R/peer/peer.txt 2>/dev/null | grep -E "q8_0|q4" | grep -E "m=(4096|14336)|ID" | cut -c1-150 | head -24
else echo "peer skipped: $(left) s left"; fi
ck
if [ $(left) -gt 40 ]; then
  timeout $(lim 120) $K parity --device cuda --package $P --kernel gemv_q8_0_rp_k4,gemv_moe_q8_0_rp,gemv_q4_1_rp > $R/parity.log 2>&1
  echo "cuda parity rc $?: $(tail -n 1 $R/parity.log)"
else echo "parity skipped: $(left) s left"; fi
ck
echo "end ($((SECONDS - T0)) s)"
