#!/usr/bin/env bash
# The thirty-eighth session's call 6 (2026-12-06): the committed i8 change (the `mma` variants'
# combine 32 states a trip; `libI`, both i8 families) against HEAD's package (`libF`): cuda
# parity, then the i8 bench; then, for the timing only, the f32 order's `rR` variants with the
# same unroll (`libE`, not committed) against `libF`; then the runtime's cuda device tests.
# Carry: .cxd.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cV; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cV.tgz -C /tmp cV; }
C=$(pwd)/.cxd
xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; K=/tmp/kiln
for p in F I E; do rm -rf /tmp/p$p; mkdir -p /tmp/p$p; tar xJf $C/lib$p.txz -C /tmp/p$p; done
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
timeout 150 $K parity --device cuda --package /tmp/pI/dist --kernel attention_decode_q8_0_i8_d128,attention_decode_q8_0_i8_d64 > $R/parity.log 2>&1
echo "cuda parity rc $?: $(tail -n 1 $R/parity.log)"; grep -E "FAIL" $R/parity.log | head -3; ck
I=attn_q8_0_i8_ctx4k_t1,attn_q8_0_i8_ctx4k_t4,attn_q8_0_i8_ctx4k_t8,attn_q8_0_i8_ctx32k_t1,attn_q8_0_i8_ctx32k_t4,attn_q8_0_i8_ctx32k_t8
for i in 1 2; do for p in F I; do
  timeout 80 $K bench --package /tmp/p$p/dist --kernel $I --variant mma8,mma8_lds --json $R/i8-$p-$i.json > $R/i8-$p-$i.log 2>&1
  echo "i8 $p $i rc $?"; grep -E "^attn" $R/i8-$p-$i.log | sort -u | cut -c1-200; ck
done; done
Q=attn_q8_0_ctx4k_t1,attn_q8_0_ctx4k_t4,attn_q8_0_ctx4k_t8,attn_q8_0_ctx32k_t1,attn_q8_0_ctx32k_t4,attn_q8_0_ctx32k_t8
F=attn_f16_ctx4k_t1,attn_f16_ctx4k_t8,attn_f16_ctx32k_t1,attn_f16_ctx32k_t8
for p in F E; do
  timeout 80 $K bench --package /tmp/p$p/dist --kernel $Q --variant r4t256,r8,r4,tuned_t1_long,tuned_t2_5_long --json $R/q8-$p.json > $R/q8-$p.log 2>&1
  echo "q8 $p rc $?"; grep -E "^attn" $R/q8-$p.log | sort -u | cut -c1-230; ck
  timeout 50 $K bench --package /tmp/p$p/dist --kernel $F --variant r4,r8 --json $R/f16-$p.json > $R/f16-$p.log 2>&1
  echo "f16 $p rc $?"; grep -E "^attn" $R/f16-$p.log | sort -u | cut -c1-200; ck
done
xz -dc $C/rt-tests.xz > /tmp/rt-tests && chmod +x /tmp/rt-tests
timeout 90 /tmp/rt-tests --ignored cuda --test-threads=1 > $R/device-tests.log 2>&1
echo "device tests rc $?: $(grep -E '^test result' $R/device-tests.log)"; ck
