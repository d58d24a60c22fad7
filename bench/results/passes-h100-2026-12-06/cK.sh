#!/usr/bin/env bash
# The thirty-seventh session's second device call (2026-12-06): `gemv_q8_0_rp_k4`
# `wide_t1_g4_w8_s2` (two row groups a workgroup, one after another: half the workgroups, so
# that two calls' fit an SM) against the routed `wide_t1_g4_w8` at N = 4096 (issue 12's T = 8
# case), twice; then `kiln parity --device cuda` of every family of the sm_90 package (this
# session's interpreter as the reference), then the runtime's device tests. Carry: .cxd.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cK; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cK.tgz -C /tmp cK; }
T0=$SECONDS; B=${BUDGET:-580}
left() { echo $((B - (SECONDS - T0))); }
lim() { local l; l=$(left); [ $l -gt $1 ] && echo $1 || echo $((l > 5 ? l : 5)); }
C=$(pwd)/.cxd
xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; K=/tmp/kiln
rm -rf /tmp/pF; mkdir -p /tmp/pF; tar xJf $C/libF.txz -C /tmp/pF; P=/tmp/pF/dist
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
G=gemv_q8_0_rp_k4_n4096_t1,gemv_q8_0_rp_k4_n4096_t8,gemv_q8_0_rp_n4096_t1
for i in 1 2; do
  timeout $(lim 100) $K bench --package $P --kernel $G --json $R/bench-k4-$i.json > $R/bench-k4-$i.log 2>&1
  echo "bench $i rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/bench-k4-$i.log | sort -u | cut -c1-260; ck
done
xz -dc $C/rt-tests.xz > /tmp/rt-tests && chmod +x /tmp/rt-tests
timeout 90 /tmp/rt-tests --ignored cuda --test-threads=1 > $R/device-tests.log 2>&1
echo "device tests rc $?: $(grep -E '^test result' $R/device-tests.log)"; ck
timeout $(lim 420) $K parity --device cuda --package $P > $R/parity-all.log 2>&1
echo "cuda parity (every family) rc $?: $(tail -n 1 $R/parity-all.log) ($((SECONDS - T0)) s)"
grep -E "^time " $R/parity-all.log | tail -n 5; grep -cE "^FAIL|^fail" $R/parity-all.log
ck
echo "end ($((SECONDS - T0)) s)"
