#!/usr/bin/env bash
# Call 2 (2026-12-02, twelfth session): the packed staging of the wide prompt-attention variants
# (`w4gp`, `w4qsp`: a lane's K/Q words of two dim steps one 16-byte LDS read, its V words of a
# block one 8-byte read) against `w4g` / `w4qs`: parity against the interpreter (cuda) of the four
# f16/f32 families, then kiln bench of the head-dim-128 families, twice, and torch SDPA.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/call2; rm -rf $R; mkdir -p $R
ck() { tar czf $O/call2.tgz -C /tmp call2; }
K=./.carry/kiln
rm -rf /tmp/q && mkdir -p /tmp/q && tar xzf .carry/q.tgz -C /tmp/q
cp .carry/p2.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
timeout 200 $K parity --device cuda --package /tmp/q/dist > $R/parity.log 2>&1
echo "parity rc $?: $(grep -c '^ok' $R/parity.log) ok; $(tail -n 1 $R/parity.log | cut -c1-150)"
grep -E "FAIL|fail" $R/parity.log | head -5
ck
for run in 1 2; do
  timeout 150 $K bench --package /tmp/q/dist --variant w4g,w4qs,w4gp,w4qsp --json $R/bench-$run.json > $R/bench-$run.log 2>&1
  echo "bench $run rc $?"; grep -E "^prefill" $R/bench-$run.log | cut -c1-150
  ck
done
timeout 60 python3 bench/prefill_peers.py $R/sdpa.json > $R/sdpa.log 2>&1; tail -n 3 $R/sdpa.log
ck
