#!/usr/bin/env bash
# Call 4 (2026-12-03, sixteenth session): the prompt attention with a Q8_0 cache, `w4qs` (the
# route) against `w4qm` (the same with the mask skip for blocks every row sees whole; 163
# registers against 168), parity on cuda first, then the bench twice in opposite variant
# orders at L = 512, 2048, 8192, then torch SDPA (bf16, flash) in the same call.
# Run as `bash .carry/c4.sh` with .carry/{kiln,p4.tgz}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c4; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c4.tgz -C /tmp c4; }
K=$(pwd)/.carry/kiln
P=/tmp/p4/dist
rm -rf /tmp/p4 && mkdir -p /tmp/p4 && tar xzf .carry/p4.tgz -C /tmp/p4
cp .carry/c4.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
timeout 150 $K parity --device cuda --package $P --kernel attention_prefill_q8_0_d128 > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-150)"; grep -i "fail" $R/parity.log | head -3
ck
C=prefill_q8_0_l512,prefill_q8_0_l2k,prefill_q8_0_l8k
timeout 100 $K bench --package $P --kernel $C --variant w4qs,w4qm --json $R/bench-a.json > $R/bench-a.log 2>&1; echo "a rc $?"; grep -E "^prefill" $R/bench-a.log | sort -u | cut -c1-140; ck
timeout 100 $K bench --package $P --kernel $C --variant w4qm,w4qs --json $R/bench-b.json > $R/bench-b.log 2>&1; echo "b rc $?"; grep -E "^prefill" $R/bench-b.log | sort -u | cut -c1-140; ck
timeout 90 python3 bench/prefill_peers.py $R/sdpa.json > $R/sdpa.log 2>&1; tail -n 4 $R/sdpa.log
ck
