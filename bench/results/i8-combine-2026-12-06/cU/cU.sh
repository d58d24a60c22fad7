#!/usr/bin/env bash
# The thirty-eighth session's call 5 (2026-12-06): two more ways for the i8 order's combine to
# wait fewer round trips, the same ops (the same bits): `batch` (each pass by the batched fold,
# 32 states a trip) and `u32` (the pass loop unrolled 32 times instead of 16), against HEAD
# (`F`), alternately on one card; cuda parity of both first. Carry: .cxd.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cU; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cU.tgz -C /tmp cU; }
C=$(pwd)/.cxd
xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; K=/tmp/kiln
for p in F batch u32; do rm -rf /tmp/p$p; mkdir -p /tmp/p$p; tar xJf $C/lib$p.txz -C /tmp/p$p; done
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
for p in batch u32; do
  timeout 100 $K parity --device cuda --package /tmp/p$p/dist --kernel attention_decode_q8_0_i8_d128 > $R/parity-$p.log 2>&1
  echo "cuda parity $p rc $?: $(tail -n 1 $R/parity-$p.log)"; grep -E "FAIL" $R/parity-$p.log | head -3; ck
done
I=attn_q8_0_i8_ctx4k_t1,attn_q8_0_i8_ctx4k_t4,attn_q8_0_i8_ctx4k_t8,attn_q8_0_i8_ctx32k_t1,attn_q8_0_i8_ctx32k_t4,attn_q8_0_i8_ctx32k_t8
for i in 1 2; do for p in F batch u32; do
  timeout 100 $K bench --package /tmp/p$p/dist --kernel $I --variant mma8,mma8_lds,mma --json $R/i8-$p-$i.json > $R/i8-$p-$i.log 2>&1
  echo "i8 $p $i rc $?"; grep -E "^attn" $R/i8-$p-$i.log | sort -u | cut -c1-200; ck
done; done
