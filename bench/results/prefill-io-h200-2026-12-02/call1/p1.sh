#!/usr/bin/env bash
# Call 1 (2026-12-02, twelfth session): the prompt-attention families with Q in bf16 (`_qbf16`)
# and out in f16 (`_of16`) on the H200: parity against the interpreter (cuda) for all twelve
# families, float64 against gguf (bench/prefill_ref.py --io qbf16 / of16), kiln bench of the
# six head-dim-128 families (routed variants), torch SDPA bf16 in the same call.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/call1; rm -rf $R; mkdir -p $R
ck() { tar czf $O/call1.tgz -C /tmp call1; }
K=./.carry/kiln
rm -rf /tmp/p && mkdir -p /tmp/p && tar xzf .carry/p.tgz -C /tmp/p
cp .carry/p1.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; python3 --version; } > $R/env.log 2>&1
timeout 200 $K parity --device cuda --package /tmp/p/dist > $R/parity.log 2>&1
echo "parity rc $?: $(grep -c '^ok' $R/parity.log) ok; $(tail -n 1 $R/parity.log | cut -c1-150)"
ck
for io in qbf16 of16; do
  PYTHONPATH=.carry/py timeout 80 python3 bench/prefill_ref.py --kiln $K --package /tmp/p/dist --device cuda --arch sm_90 --io $io --variants baseline,w4g,w4qs,m32 > $R/ref-$io.log 2>&1
  echo "ref $io rc $?: $(grep -c '^ok' $R/ref-$io.log) ok; $(tail -n 1 $R/ref-$io.log | cut -c1-200)"
  ck
done
timeout 150 $K bench --package /tmp/p/dist --variant w4g,w4qs --json $R/bench.json > $R/bench.log 2>&1
echo "bench rc $?"; grep -E "^prefill" $R/bench.log | cut -c1-130
ck
timeout 60 python3 bench/prefill_peers.py $R/sdpa.json > $R/sdpa.log 2>&1; tail -n 4 $R/sdpa.log
ck
