#!/usr/bin/env bash
# The thirty-ninth session's call 3 (2026-12-06), the short form of call 2 after failed starts
# left too little device time for llama.cpp's build: the runtime's cuda device tests, then the
# i8 order's and the f32 order's routed bench cases at 4K and 32K with HEAD's package (`libG`),
# twice. No peer. Carry: .cxd.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cC; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cC.tgz -C /tmp cC; }
T0=$SECONDS
C=$(pwd)/.cxd
xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; K=/tmp/kiln
rm -rf /tmp/pG; mkdir -p /tmp/pG; tar xJf $C/libG.txz -C /tmp/pG; P=/tmp/pG/dist
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
xz -dc $C/rt-tests.xz > /tmp/rt-tests && chmod +x /tmp/rt-tests
timeout 60 /tmp/rt-tests --ignored cuda --test-threads=1 > $R/device-tests.log 2>&1
echo "device tests rc $?: $(grep -E '^test result' $R/device-tests.log)"; ck
I=attn_q8_0_i8_ctx4k_t1,attn_q8_0_i8_ctx4k_t4,attn_q8_0_i8_ctx4k_t8,attn_q8_0_i8_ctx32k_t1,attn_q8_0_i8_ctx32k_t4,attn_q8_0_i8_ctx32k_t8
Q=attn_q8_0_ctx4k_t1,attn_q8_0_ctx4k_t4,attn_q8_0_ctx4k_t8,attn_q8_0_ctx32k_t1,attn_q8_0_ctx32k_t4,attn_q8_0_ctx32k_t8
for i in 1 2; do
  timeout 60 $K bench --package $P --kernel $I --variant mma8,mma8_lds --json $R/i8-$i.json > $R/i8-$i.log 2>&1
  echo "i8 $i rc $? ($((SECONDS - T0)) s)"; grep -E "^attn" $R/i8-$i.log | sort -u | cut -c1-150; ck
  timeout 60 $K bench --package $P --kernel $Q --variant tuned_t1_short,tuned_t1_long,tuned_t2_5_short,tuned_t2_5_long,r8 --json $R/q8-$i.json > $R/q8-$i.log 2>&1
  echo "q8 $i rc $? ($((SECONDS - T0)) s)"; grep -E "^attn" $R/q8-$i.log | sort -u | cut -c1-150; ck
done
echo "end ($((SECONDS - T0)) s)"
