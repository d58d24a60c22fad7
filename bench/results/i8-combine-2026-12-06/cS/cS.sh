#!/usr/bin/env bash
# The thirty-eighth session's call 2 (2026-12-06): the i8 order's `mma8s2` / `mma8s4` (the row
# tiles of a split sharing its staged chunk) against `mma8` / `mma8_lds`: cuda parity of the
# family, then the bench at 4K and 32K with 1, 4 and 8 tokens, twice. Carry: .cxd.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cS; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cS.tgz -C /tmp cS; }
C=$(pwd)/.cxd
xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; K=/tmp/kiln
rm -rf /tmp/pS; mkdir -p /tmp/pS; tar xJf $C/libS.txz -C /tmp/pS; P=/tmp/pS/dist
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
timeout 200 $K parity --device cuda --package $P --kernel attention_decode_q8_0_i8_d128 > $R/parity.log 2>&1
echo "cuda parity rc $?: $(tail -n 1 $R/parity.log)"; grep -E "FAIL" $R/parity.log | head -5; ck
A=attn_q8_0_i8_ctx4k_t1,attn_q8_0_i8_ctx4k_t4,attn_q8_0_i8_ctx4k_t8,attn_q8_0_i8_ctx32k_t1,attn_q8_0_i8_ctx32k_t4,attn_q8_0_i8_ctx32k_t8
for i in 1 2; do
  timeout 150 $K bench --package $P --kernel $A --variant mma8,mma8_lds,mma8s2,mma8s4 --json $R/bench-$i.json > $R/bench-$i.log 2>&1
  echo "bench $i rc $?"; grep -E "^attn" $R/bench-$i.log | sort -u | cut -c1-200; ck
done
