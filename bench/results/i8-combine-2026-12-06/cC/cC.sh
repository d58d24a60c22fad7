#!/usr/bin/env bash
# The thirty-eighth session's call 4 (2026-12-06): the combine's passes folded at once
# (`Fold::Passes`: one loop over the states whose trip loads every pass's state) against pass
# after pass (HEAD), on the same card: the i8 order's `mma*` variants and, built with it for the
# timing only, the f32 order's `rR` variants at head dim 128. cuda parity of the new package's
# i8 family first. `libF` is HEAD's sm_90 package, `libP` the new one. Carry: .cxd.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cC; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cC.tgz -C /tmp cC; }
C=$(pwd)/.cxd
xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; K=/tmp/kiln
for p in F P; do rm -rf /tmp/p$p; mkdir -p /tmp/p$p; tar xJf $C/lib$p.txz -C /tmp/p$p; done
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
timeout 120 $K parity --device cuda --package /tmp/pP/dist --kernel attention_decode_q8_0_i8_d128 > $R/parity.log 2>&1
echo "cuda parity rc $?: $(tail -n 1 $R/parity.log)"; grep -E "FAIL" $R/parity.log | head -5; ck
I=attn_q8_0_i8_ctx4k_t1,attn_q8_0_i8_ctx4k_t4,attn_q8_0_i8_ctx4k_t8,attn_q8_0_i8_ctx32k_t1,attn_q8_0_i8_ctx32k_t4,attn_q8_0_i8_ctx32k_t8
Q=attn_q8_0_ctx4k_t1,attn_q8_0_ctx4k_t4,attn_q8_0_ctx4k_t8,attn_q8_0_ctx32k_t1,attn_q8_0_ctx32k_t4,attn_q8_0_ctx32k_t8
F=attn_f16_ctx4k_t1,attn_f16_ctx4k_t8,attn_f16_ctx32k_t1,attn_f16_ctx32k_t8
for i in 1 2; do for p in F P; do
  timeout 100 $K bench --package /tmp/p$p/dist --kernel $I --variant mma8,mma8_lds,mma --json $R/i8-$p-$i.json > $R/i8-$p-$i.log 2>&1
  echo "i8 $p $i rc $?"; grep -E "^attn" $R/i8-$p-$i.log | sort -u | cut -c1-200; ck
done; done
for p in F P; do
  timeout 100 $K bench --package /tmp/p$p/dist --kernel $Q --variant r4t256,r8,r4,tuned_t1_long,tuned_t1_short --json $R/q8-$p.json > $R/q8-$p.log 2>&1
  echo "q8 $p rc $?"; grep -E "^attn" $R/q8-$p.log | sort -u | cut -c1-220; ck
  timeout 60 $K bench --package /tmp/p$p/dist --kernel $F --variant r4,r8 --json $R/f16-$p.json > $R/f16-$p.log 2>&1
  echo "f16 $p rc $?"; grep -E "^attn" $R/f16-$p.log | sort -u | cut -c1-200; ck
done
