#!/usr/bin/env bash
# The thirty-eighth session's call 8 (2026-12-06): step 3's fold at 64 states a trip (`lib64`,
# not committed) against the committed 32 (`lib32`), the same card: cuda parity of the i8
# family with 64, then the bench of both i8 and f32 Q8_0 head-dim-128 cases, one run each.
# Carry: .cxd.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cX; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cX.tgz -C /tmp cX; }
C=$(pwd)/.cxd
xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; K=/tmp/kiln
for p in 32 64; do rm -rf /tmp/p$p; mkdir -p /tmp/p$p; tar xJf $C/lib$p.txz -C /tmp/p$p; done
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
timeout 60 $K parity --device cuda --package /tmp/p64/dist --kernel attention_decode_q8_0_i8_d128 > $R/parity.log 2>&1
echo "cuda parity rc $?: $(tail -n 1 $R/parity.log)"; grep -E "FAIL" $R/parity.log | head -3; ck
I=attn_q8_0_i8_ctx4k_t1,attn_q8_0_i8_ctx4k_t4,attn_q8_0_i8_ctx4k_t8,attn_q8_0_i8_ctx32k_t1,attn_q8_0_i8_ctx32k_t4,attn_q8_0_i8_ctx32k_t8
Q=attn_q8_0_ctx4k_t1,attn_q8_0_ctx4k_t4,attn_q8_0_ctx4k_t8,attn_q8_0_ctx32k_t1,attn_q8_0_ctx32k_t4,attn_q8_0_ctx32k_t8
for p in 32 64; do
  timeout 40 $K bench --package /tmp/p$p/dist --kernel $I --variant mma8,mma8_lds --json $R/i8-$p.json > $R/i8-$p.log 2>&1
  echo "i8 $p rc $?"; grep -E "^attn" $R/i8-$p.log | sort -u | cut -c1-200; ck
  timeout 50 $K bench --package /tmp/p$p/dist --kernel $Q --variant r8,tuned_t1_long,tuned_t2_5_long --json $R/q8-$p.json > $R/q8-$p.log 2>&1
  echo "q8 $p rc $?"; grep -E "^attn" $R/q8-$p.log | sort -u | cut -c1-200; ck
done
