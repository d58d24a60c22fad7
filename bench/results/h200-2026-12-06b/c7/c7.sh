#!/usr/bin/env bash
# The forty-second session's call 7 (2026-12-06): on an H200 only (an H100 exits at once), the
# one-token GEMV buckets re-tuned with the sound package: `kiln tune --device cuda` of
# `gemv_q8_0_rp` t1_nlo / t1_nhi (`tuneA`) and `gemv_q4_0_rp`, `gemv_q4_1_rp` t1_nhi (`tuneB`),
# candidates built here with `--build-only`, each gated on the baseline's bits on the device.
# Carry: .cxd.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c7; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c7.tgz -C /tmp c7; }
T0=$SECONDS
C=$(pwd)/.cxd
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log; ck
grep -q "H200" $R/env.log || { echo "not an H200: nothing run"; exit 0; }
xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; K=/tmp/kiln
rm -rf /tmp/tune; mkdir -p /tmp/tune; tar xJf $C/tune.txz -C /tmp/tune
cp "$0" $R/; cp specs/tuning/sm_90.ron $R/sm_90.ron
timeout 200 $K tune --device cuda --kernel gemv_q8_0_rp --shapes t1_nlo,t1_nhi --candidates /tmp/tune/tuneA --out $R/sm_90.ron --budget-s 180 > $R/tuneA.log 2>&1
echo "tune A rc $? ($((SECONDS - T0)) s)"; tail -n 6 $R/tuneA.log | cut -c1-200; cp /tmp/tune/tuneA/tune-progress.jsonl $R/tuneA-progress.jsonl 2>/dev/null; ck
timeout 200 $K tune --device cuda --kernel gemv_q4_0_rp,gemv_q4_1_rp --shapes t1_nhi --candidates /tmp/tune/tuneB --out $R/sm_90.ron --budget-s 180 > $R/tuneB.log 2>&1
echo "tune B rc $? ($((SECONDS - T0)) s)"; tail -n 6 $R/tuneB.log | cut -c1-200; cp /tmp/tune/tuneB/tune-progress.jsonl $R/tuneB-progress.jsonl 2>/dev/null; ck
echo "end ($((SECONDS - T0)) s)"
