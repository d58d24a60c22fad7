#!/usr/bin/env bash
# Call 5 (2026-12-02, twelfth session): `w4qss` (`w4qs` with the mask and rescale skips) against
# `w4qs` and `w4g` after the tree `l`: parity (cuda) of the two head-dim-128 families, bench twice.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/call5; rm -rf $R; mkdir -p $R
ck() { tar czf $O/call5.tgz -C /tmp call5; }
K=./.carry/kiln
rm -rf /tmp/v && mkdir -p /tmp/v && tar xzf .carry/v.tgz -C /tmp/v
cp .carry/p5.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
timeout 60 $K parity --device cuda --package /tmp/v/dist > $R/parity.log 2>&1
echo "parity rc $?: $(grep -c '^ok' $R/parity.log) ok; $(tail -n 1 $R/parity.log | cut -c1-150)"
ck
for run in 1 2; do
  timeout 80 $K bench --package /tmp/v/dist --variant w4g,w4qs,w4qss --json $R/bench-$run.json > $R/bench-$run.log 2>&1
  echo "bench $run rc $?"; grep -E "^prefill_(f16|q8_0)_l" $R/bench-$run.log | sort -u | cut -c1-130
  ck
done
