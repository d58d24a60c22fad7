#!/usr/bin/env bash
# The thirty-seventh session's device call (2026-12-06): the MoE GEMV's prefetching variants
# (`slot_rRwWuUep`: few workgroups, each wave's rows asked of L2 before the grid-dependency
# wait) against `slot` and the early twins, cuda parity of both MoE families first, then
# llama.cpp's MUL_MAT_ID on the same shapes in the same call, and the runtime's device tests.
# Template: bench/results/gemv-h100-2026-12-06/cS.sh. Carry: .cxd.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cM; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cM.tgz -C /tmp cM; }
T0=$SECONDS; B=${BUDGET:-570}
left() { echo $((B - (SECONDS - T0))); }
lim() { local l; l=$(left); [ $l -gt $1 ] && echo $1 || echo $((l > 5 ? l : 5)); }
C=$(pwd)/.cxd
xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; K=/tmp/kiln
rm -rf /tmp/pM; mkdir -p /tmp/pM; tar xJf $C/libM.txz -C /tmp/pM; P=/tmp/pM/dist
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
[ -d .peers/llamacpp ] || tar xJf $C/peers.txz
grep -q PEER_FA_KV .peers/llamacpp/ggml/tests/peer-bench.cpp 2>/dev/null ||
  patch -p1 -d .peers/llamacpp < bench/peers/peer-bench-kiln.patch > $R/peer-patch.log 2>&1
( OUT=$R/peer STEPS="none" nice -n 5 bash .peers/llamacpp/run.sh > $R/peer-build.log 2>&1 ) &
GPID=$!
timeout $(lim 150) $K parity --device cuda --package $P --kernel gemv_moe_q8_0_rp,gemv_moe_q4_0_rp > $R/parity.log 2>&1
echo "cuda parity rc $?: $(tail -n 1 $R/parity.log) ($((SECONDS - T0)) s)"; ck
G=gemv_moe_q8_0_qwen3_t1,gemv_moe_q8_0_qwen3_t8
for i in 1 2; do
  timeout $(lim 100) $K bench --package $P --kernel $G --json $R/bench-moe-$i.json > $R/bench-moe-$i.log 2>&1
  echo "bench moe $i rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/bench-moe-$i.log | sort -u | cut -c1-200; ck
done
xz -dc $C/rt-tests.xz > /tmp/rt-tests && chmod +x /tmp/rt-tests
timeout 90 /tmp/rt-tests --ignored cuda --test-threads=1 > $R/device-tests.log 2>&1
echo "device tests rc $?: $(grep -E '^test result' $R/device-tests.log)"; ck
if [ $(left) -gt 60 ]; then
  wait $GPID; echo "peer build: $(tail -n 2 $R/peer/build.txt 2>/dev/null | tr '\n' ' ' | cut -c1-200)"
  OUT=$R/peer STEPS="peer" DEADLINE=$(lim 150) bash .peers/llamacpp/run.sh > $R/peer-run.log 2>&1
  echo "peer rc $? ($((SECONDS - T0)) s)"
  grep -iE "MUL_MAT_ID" $R/peer/peer.txt 2>/dev/null | cut -c1-150 | head -12
else echo "peer skipped: $(left) s left"; fi
ck
echo "end ($((SECONDS - T0)) s)"
