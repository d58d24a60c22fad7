#!/usr/bin/env bash
# Call 2 (2026-12-02): attention_prefill's wide variants (w4: S of both blocks of a tile first,
# no per-block branch; w4c capped at 168 registers; w4q Q fragments from LDS; w4n no register
# prefetch; w8 eight waves a workgroup): parity on cuda, kiln bench of the d128 families.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c2; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c2.tgz -C /tmp c2; }
K=./.carry/kiln
rm -rf /tmp/pf && mkdir -p /tmp/pf && tar xzf .carry/pf.tgz -C /tmp/pf
cp .carry/c2.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
P=attention_prefill_f16_d64,attention_prefill_f16_d128,attention_prefill_q8_0_d64,attention_prefill_q8_0_d128
S=$(date +%s)
timeout 150 $K parity --device cuda --package /tmp/pf/dist --kernel $P > $R/parity.log 2>&1
echo "parity rc $? in $(( $(date +%s) - S )) s: $(tail -n 1 $R/parity.log | cut -c1-150)"
grep -v "^ok" $R/parity.log | head -5
ck
S=$(date +%s)
timeout 300 $K bench --package /tmp/pf/dist --kernel attention_prefill_f16_d128,attention_prefill_q8_0_d128 --variant w4,w4c,w4q,w4n,w8 --json $R/bench.json > $R/bench.log 2>&1
echo "bench rc $? in $(( $(date +%s) - S )) s"; grep -E "^prefill" $R/bench.log | sort -u | cut -c1-160
ck
