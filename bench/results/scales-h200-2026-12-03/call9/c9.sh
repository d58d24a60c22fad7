#!/usr/bin/env bash
# Call 9 (2026-12-03, seventeenth session): the dp4a Q8_0 GEMV's buckets for 2-8 tokens
# (gemv_q8_0_rp) tuned again: its sm_90 entries date from 2026-11-30, before the unroll of 8,
# and call 1 timed its routed T = 4 (`p4r2`, 25.55 us) slower than the 2-token entry at the same
# shape (23.61). Candidates from `kiln tune --device cpu --arch sm_90 --kernel gemv_q8_0_rp
# --shapes t2_nlo,t2_nhi,t3_4_nlo,t3_4_nhi,t5_8_nlo,t5_8_nhi --build-only`.
# Run as `bash .carry/c9.sh` with .carry/{kiln,tune-q8.tgz}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c9; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c9.tgz -C /tmp c9; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/tune-q8 && tar xzf .carry/tune-q8.tgz -C /tmp
cp .carry/c9.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
timeout 280 $K tune --device cuda --kernel gemv_q8_0_rp --shapes t2_nlo,t2_nhi,t3_4_nlo,t3_4_nhi,t5_8_nlo,t5_8_nhi --candidates /tmp/tune-q8 --out $R/sm_90-q8.ron --replays 10 --budget-s 250 > $R/tune-q8.log 2>&1
echo "tune rc $?"; grep "^|" $R/tune-q8.log | head -12; cp /tmp/tune-q8/tune-progress.jsonl $R/ 2>/dev/null
ck
