#!/usr/bin/env bash
# The fortieth session's call C (2026-12-06): the i8 order's q loaded 4 values a lane (`libJ`,
# the same bytes) against call B's packages (`libF` HEAD before the session, `libI` the cheaper
# exp and P quant): cuda parity of the i8 families (libJ), the routed bench cases interleaved
# I, J twice, the f32 order's routed cases. Failed starts had used more than half the device
# time, so no peer here: call B timed llama.cpp and SDPA beside `I`. Carry: .cxd.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cC; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cC.tgz -C /tmp cC; }
T0=$SECONDS
C=$(pwd)/.cxd
xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; K=/tmp/kiln
for p in I J; do rm -rf /tmp/p$p; mkdir -p /tmp/p$p; tar xJf $C/lib$p.txz -C /tmp/p$p; done
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
timeout 150 $K parity --device cuda --package /tmp/pJ/dist --kernel attention_decode_q8_0_i8_d128,attention_decode_q8_0_i8_d64 > $R/parity.log 2>&1
echo "cuda parity rc $?: $(tail -n 1 $R/parity.log) ($((SECONDS - T0)) s)"; grep -E "^time|FAIL" $R/parity.log | head -8; ck
I=attn_q8_0_i8_ctx4k_t1,attn_q8_0_i8_ctx4k_t4,attn_q8_0_i8_ctx4k_t8,attn_q8_0_i8_ctx32k_t1,attn_q8_0_i8_ctx32k_t4,attn_q8_0_i8_ctx32k_t8
for i in 1 2; do for p in I J; do
  timeout 60 $K bench --package /tmp/p$p/dist --kernel $I --variant mma8,mma8_lds --json $R/i8-$p-$i.json > $R/i8-$p-$i.log 2>&1
  echo "i8 $p $i rc $? ($((SECONDS - T0)) s)"; grep -E "^attn" $R/i8-$p-$i.log | sort -u | cut -c1-200; ck
done; done
Q=attn_q8_0_ctx4k_t1,attn_q8_0_ctx4k_t4,attn_q8_0_ctx4k_t8,attn_q8_0_ctx32k_t1,attn_q8_0_ctx32k_t4,attn_q8_0_ctx32k_t8
timeout 60 $K bench --package /tmp/pJ/dist --kernel $Q --variant tuned_t1_short,tuned_t1_long,tuned_t2_5_short,tuned_t2_5_long,r8 --json $R/q8.json > $R/q8.log 2>&1
echo "q8 rc $? ($((SECONDS - T0)) s)"; grep -E "^attn" $R/q8.log | sort -u | cut -c1-150; ck
ck
echo "end ($((SECONDS - T0)) s)"
