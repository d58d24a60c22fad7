#!/usr/bin/env bash
# Call 5 (2026-12-03, seventeenth session): the one-token buckets of the Q4 GEMVs
# (gemv_q4_0_rp, gemv_q4_1_rp: t1_nlo, t1_nhi) tuned again: their sm_90 entries date from
# 2026-11-30, before the space had the unroll of 8 (a lane's whole row in flight) that took
# the Q8_0 one-token route from 17.2 to 15.6 us. Candidates from `kiln tune --device cpu --arch
# sm_90 --kernel gemv_q4_0_rp,gemv_q4_1_rp --shapes t1_nlo,t1_nhi --build-only`.
# Run as `bash .carry/c5.sh` with .carry/{kiln,tune-q4.tgz}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c5; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c5.tgz -C /tmp c5; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/tune-q4 && tar xzf .carry/tune-q4.tgz -C /tmp
cp .carry/c5.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
timeout 280 $K tune --device cuda --kernel gemv_q4_0_rp,gemv_q4_1_rp --shapes t1_nlo,t1_nhi --candidates /tmp/tune-q4 --out $R/sm_90-q4.ron --replays 10 --budget-s 250 > $R/tune-q4.log 2>&1
echo "tune rc $?"; grep "^|" $R/tune-q4.log | head -12; cp /tmp/tune-q4/tune-progress.jsonl $R/ 2>/dev/null
ck
