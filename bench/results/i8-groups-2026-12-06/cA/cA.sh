#!/usr/bin/env bash
# The thirty-ninth session's call 1 (2026-12-06): step 3 of the i8 order in two levels (groups
# of 4 splits folded by their workgroup; `libI`, not yet committed) against HEAD's package
# (`libF`): cuda parity of the changed families, then the i8 bench (both packages, twice), the
# f32 order's routed Q8_0 / f16 cases (w_lds and l_lds now 32 states a row), then the runtime's
# cuda device tests. Carry: .cxd.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cA; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cA.tgz -C /tmp cA; }
T0=$SECONDS
C=$(pwd)/.cxd
xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; K=/tmp/kiln
for p in F I; do rm -rf /tmp/p$p; mkdir -p /tmp/p$p; tar xJf $C/lib$p.txz -C /tmp/p$p; done
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
timeout 200 $K parity --device cuda --package /tmp/pI/dist --kernel attention_decode_q8_0_i8_d128,attention_decode_q8_0_i8_d64,attention_decode_q8_0_d128,attention_decode_q8_0_d64,attention_decode_f16_d128 > $R/parity.log 2>&1
echo "cuda parity rc $?: $(tail -n 1 $R/parity.log) ($((SECONDS - T0)) s)"; grep -E "^time|FAIL" $R/parity.log | head -8; ck
I=attn_q8_0_i8_ctx4k_t1,attn_q8_0_i8_ctx4k_t4,attn_q8_0_i8_ctx4k_t8,attn_q8_0_i8_ctx32k_t1,attn_q8_0_i8_ctx32k_t4,attn_q8_0_i8_ctx32k_t8
for i in 1 2; do for p in F I; do
  timeout 60 $K bench --package /tmp/p$p/dist --kernel $I --variant mma8,mma8_lds --json $R/i8-$p-$i.json > $R/i8-$p-$i.log 2>&1
  echo "i8 $p $i rc $? ($((SECONDS - T0)) s)"; grep -E "^attn" $R/i8-$p-$i.log | sort -u | cut -c1-200; ck
done; done
Q=attn_q8_0_ctx4k_t1,attn_q8_0_ctx4k_t4,attn_q8_0_ctx4k_t8,attn_q8_0_ctx32k_t1,attn_q8_0_ctx32k_t4,attn_q8_0_ctx32k_t8,attn_f16_ctx4k_t1,attn_f16_ctx32k_t8
for p in F I; do
  timeout 60 $K bench --package /tmp/p$p/dist --kernel $Q --variant tuned_t1_long,tuned_t2_5_long,r8,r4x2,r4 --json $R/q8-$p.json > $R/q8-$p.log 2>&1
  echo "q8 $p rc $? ($((SECONDS - T0)) s)"; grep -E "^attn" $R/q8-$p.log | sort -u | cut -c1-230; ck
done
xz -dc $C/rt-tests.xz > /tmp/rt-tests && chmod +x /tmp/rt-tests
timeout 90 /tmp/rt-tests --ignored cuda --test-threads=1 > $R/device-tests.log 2>&1
echo "device tests rc $?: $(grep -E '^test result' $R/device-tests.log)"; ck
echo "end ($((SECONDS - T0)) s)"
