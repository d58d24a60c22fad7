#!/usr/bin/env bash
# Call 3 (2026-12-02, twelfth session): the prompt attention's softmax weights by
# `exp_sub_weight` (a degree-4 exp2 for weights rounded to f16 next, ~16 exact ops) instead of
# the 1-ulp `exp_portable` (~30): package e (new) against q (old, call 2's: the same w4g / w4qs
# but for the exp), bench twice each, alternating; parity (cuda) and float64 of e; torch SDPA.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/call3; rm -rf $R; mkdir -p $R
ck() { tar czf $O/call3.tgz -C /tmp call3; }
K=./.carry/kiln
for p in e q; do rm -rf /tmp/$p && mkdir -p /tmp/$p && tar xzf .carry/$p.tgz -C /tmp/$p; done
cp .carry/p3.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
timeout 150 $K parity --device cuda --package /tmp/e/dist > $R/parity.log 2>&1
echo "parity rc $?: $(grep -c '^ok' $R/parity.log) ok; $(tail -n 1 $R/parity.log | cut -c1-150)"
ck
for run in 1 2; do
  for p in e q; do
    timeout 100 $K bench --package /tmp/$p/dist --variant w4g,w4qs --json $R/bench-$p-$run.json > $R/bench-$p-$run.log 2>&1
    echo "bench $p $run rc $?"; grep -E "^prefill_(f16|q8_0)_l" $R/bench-$p-$run.log | sort -u | cut -c1-110
    ck
  done
done
timeout 60 python3 bench/prefill_peers.py $R/sdpa.json > $R/sdpa.log 2>&1; tail -n 3 $R/sdpa.log
ck
PYTHONPATH=.carry/py timeout 150 python3 bench/prefill_ref.py --kiln $K --package /tmp/e/dist --device cuda --arch sm_90 --variants baseline,w4g,w4qs,m32,pipe --large > $R/ref.log 2>&1
echo "ref rc $?: $(grep -c '^ok' $R/ref.log) ok; $(tail -n 1 $R/ref.log | cut -c1-200)"
ck
