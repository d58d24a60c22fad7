#!/usr/bin/env bash
# Call 4 (2026-12-02, twelfth session): the prompt attention's `l` summed as a tree a block
# (`prefill::weights_sum`: a lane's four keys, then the quad by two xor shuffles) instead of in
# key order (a chain of 16 adds), on top of call 3's weights' exp: package t (new) against e
# (call 3's), bench twice each, alternating; parity (cuda) and float64 (--large) of t; SDPA.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/call4; rm -rf $R; mkdir -p $R
ck() { tar czf $O/call4.tgz -C /tmp call4; }
K=./.carry/kiln
for p in t e; do rm -rf /tmp/$p && mkdir -p /tmp/$p && tar xzf .carry/$p.tgz -C /tmp/$p; done
cp .carry/p4.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
timeout 120 $K parity --device cuda --package /tmp/t/dist > $R/parity.log 2>&1
echo "parity rc $?: $(grep -c '^ok' $R/parity.log) ok; $(tail -n 1 $R/parity.log | cut -c1-150)"
ck
for run in 1 2; do
  for p in t e; do
    timeout 100 $K bench --package /tmp/$p/dist --variant w4g,w4qs --json $R/bench-$p-$run.json > $R/bench-$p-$run.log 2>&1
    echo "bench $p $run rc $?"; grep -E "^prefill_(f16|q8_0)_l" $R/bench-$p-$run.log | sort -u | cut -c1-110
    ck
  done
done
timeout 60 python3 bench/prefill_peers.py $R/sdpa.json > $R/sdpa.log 2>&1; tail -n 3 $R/sdpa.log
ck
PYTHONPATH=.carry/py timeout 120 python3 bench/prefill_ref.py --kiln $K --package /tmp/t/dist --device cuda --arch sm_90 --variants baseline,w4g,w4qs --large > $R/ref.log 2>&1
echo "ref rc $?: $(grep -c '^ok' $R/ref.log) ok; $(tail -n 1 $R/ref.log | cut -c1-200)"
ck
