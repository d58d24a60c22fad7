#!/usr/bin/env bash
# The forty-second session's call 3 (2026-12-06): the one-token GEMV buckets re-tuned with the
# sound package (the activations after the grid-dependency wait; their entries were tuned on
# 2026-12-03 with them before it): `kiln tune --device cuda` of `gemv_q8_0_rp` t1_nlo / t1_nhi
# (candidates `tuneA`) and `gemv_q4_0_rp`, `gemv_q4_1_rp` t1_nhi (`tuneB`), built here with
# `--build-only`, every candidate gated on the baseline's bits on the device; then the package of
# 9d86e9f (`libB`: `mma8a` also routed for eight tokens from 16K): the runtime's cuda device
# tests and issue 13's i8 cases twice. Carry: .cxd.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c3; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c3.tgz -C /tmp c3; }
T0=$SECONDS; B=${BUDGET:-580}
left() { echo $((B - (SECONDS - T0))); }
lim() { local l; l=$(left); [ $l -gt $1 ] && echo $1 || echo $((l > 5 ? l : 5)); }
C=$(pwd)/.cxd
xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; K=/tmp/kiln
rm -rf /tmp/pB /tmp/tune; mkdir -p /tmp/pB /tmp/tune; tar xJf $C/libB.txz -C /tmp/pB; P=/tmp/pB/dist
tar xJf $C/tune.txz -C /tmp/tune
cp "$0" $R/; cp specs/tuning/sm_90.ron $R/sm_90.ron
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
timeout $(lim 250) $K tune --device cuda --kernel gemv_q8_0_rp --shapes t1_nlo,t1_nhi --candidates /tmp/tune/tuneA --out $R/sm_90.ron --budget-s 230 > $R/tuneA.log 2>&1
echo "tune A rc $? ($((SECONDS - T0)) s)"; tail -n 12 $R/tuneA.log | cut -c1-200; cp /tmp/tune/tuneA/tune-progress.jsonl $R/tuneA-progress.jsonl 2>/dev/null; ck
timeout $(lim 200) $K tune --device cuda --kernel gemv_q4_0_rp,gemv_q4_1_rp --shapes t1_nhi --candidates /tmp/tune/tuneB --out $R/sm_90.ron --budget-s 180 > $R/tuneB.log 2>&1
echo "tune B rc $? ($((SECONDS - T0)) s)"; tail -n 12 $R/tuneB.log | cut -c1-200; cp /tmp/tune/tuneB/tune-progress.jsonl $R/tuneB-progress.jsonl 2>/dev/null; ck
xz -dc $C/rt-tests.xz > /tmp/rt-tests && chmod +x /tmp/rt-tests
timeout $(lim 60) /tmp/rt-tests --ignored cuda --test-threads=1 > $R/device-tests.log 2>&1
echo "device tests rc $?: $(grep -E '^test result' $R/device-tests.log)"; ck
I=attn_q8_0_i8_ctx4k_t1,attn_q8_0_i8_ctx4k_t4,attn_q8_0_i8_ctx4k_t8,attn_q8_0_i8_ctx32k_t1,attn_q8_0_i8_ctx32k_t4,attn_q8_0_i8_ctx32k_t8
for i in 1 2; do
  timeout $(lim 40) $K bench --package $P --kernel $I --variant mma8,mma8_lds,mma8a --json $R/i8-$i.json > $R/i8-$i.log 2>&1
  echo "i8 $i rc $? ($((SECONDS - T0)) s)"; grep -E "^attn" $R/i8-$i.log | sort -u | cut -c1-200; ck
done
echo "end ($((SECONDS - T0)) s)"
