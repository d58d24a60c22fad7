#!/usr/bin/env bash
# The thirty-eighth session's call 7 (2026-12-06): the f32 order's `rR` variants with the
# combine's multi-pass fold at 32 states a trip (`libB`, the committed code) against HEAD's
# package (`libF`): the bench first (a second sample after call 6's `libE`, the same code), then
# cuda parity of the changed head-dim-128 families and the head-dim-64 Q8_0 ones. Carry: .cxd.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cW; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cW.tgz -C /tmp cW; }
T0=$SECONDS; B=${BUDGET:-440}
left() { echo $((B - (SECONDS - T0))); }
lim() { local l; l=$(left); [ $l -gt $1 ] && echo $1 || echo $((l > 5 ? l : 5)); }
C=$(pwd)/.cxd
xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; K=/tmp/kiln
for p in F B; do rm -rf /tmp/p$p; mkdir -p /tmp/p$p; tar xJf $C/lib$p.txz -C /tmp/p$p; done
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
Q=attn_q8_0_ctx4k_t1,attn_q8_0_ctx4k_t4,attn_q8_0_ctx4k_t8,attn_q8_0_ctx32k_t1,attn_q8_0_ctx32k_t4,attn_q8_0_ctx32k_t8
F=attn_f16_ctx4k_t1,attn_f16_ctx4k_t8,attn_f16_ctx32k_t1,attn_f16_ctx32k_t8
for p in F B; do
  timeout $(lim 80) $K bench --package /tmp/p$p/dist --kernel $Q --variant r4t256,r8,r4,tuned_t1_long,tuned_t2_5_long --json $R/q8-$p.json > $R/q8-$p.log 2>&1
  echo "q8 $p rc $?"; grep -E "^attn" $R/q8-$p.log | sort -u | cut -c1-230; ck
  timeout $(lim 50) $K bench --package /tmp/p$p/dist --kernel $F --variant r4,r8 --json $R/f16-$p.json > $R/f16-$p.log 2>&1
  echo "f16 $p rc $?"; grep -E "^attn" $R/f16-$p.log | sort -u | cut -c1-200; ck
done
for k in attention_decode_f16_d128 attention_decode_rope_q8_0_d128_q8_1s attention_decode_q8_0_d64 attention_decode_q8_0_d128; do
  timeout $(lim 200) $K parity --device cuda --package /tmp/pB/dist --kernel $k > $R/parity-$k.log 2>&1
  echo "cuda parity $k rc $?: $(tail -n 1 $R/parity-$k.log) ($((SECONDS - T0)) s)"; grep -E "FAIL" $R/parity-$k.log | head -3; ck
done
