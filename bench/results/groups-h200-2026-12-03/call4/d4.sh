#!/usr/bin/env bash
# Call 4 (2026-12-03, fourteenth session): the routed variants of the sm_90 tuning file (the
# `tuned_*` variants: r8 with 256 lanes for T = 2-5 at both contexts and T = 6-8 at 4K) beside
# r4t256, r4 and r8, Q8_0 head dim 128, packages n3 (two-level combine) and o1 (before).
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/call4; rm -rf $R; mkdir -p $R
ck() { tar czf $O/call4.tgz -C /tmp call4; }
K=./.carry/kiln
for p in n3 o1; do rm -rf /tmp/$p && mkdir -p /tmp/$p && tar xzf .carry/$p.tgz -C /tmp/$p; done
cp .carry/d4.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
for p in n3 o1; do
  timeout 70 $K bench --package /tmp/$p/dist --kernel attention_decode_q8_0_d128 --variant tuned_t2_5_short,tuned_t2_5_long,tuned_t6_8_short,r4t256,r4,r8 --replays 10 --bandwidth-bytes 536870912 --json $R/dec-$p.json > $R/dec-$p.log 2>&1
  echo "dec $p rc $?:"; grep -E "^attn" $R/dec-$p.log | sort -u | cut -c1-190
  ck
done
