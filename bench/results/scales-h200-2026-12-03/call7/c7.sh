#!/usr/bin/env bash
# Call 7 (2026-12-03, seventeenth session): the Q4 GEMVs' buckets for 2-8 tokens
# (gemv_q4_0_rp, gemv_q4_1_rp) tuned again: call 6 found the routed Q4_0 entry at N = 14336,
# T = 8 (`tuned_t5_8_nhi`, 26.0 us) slower than another bucket's (`tuned_t5_8_nlo`, 21.8); the
# entries date from 2026-11-30. Candidates from `kiln tune --device cpu --arch sm_90 --kernel
# gemv_q4_0_rp,gemv_q4_1_rp --shapes t2_nlo,t2_nhi,t3_4_nlo,t3_4_nhi,t5_8_nlo,t5_8_nhi --build-only`.
# Run as `bash .carry/c7.sh` with .carry/{kiln,tune-q4b.tgz}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c7; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c7.tgz -C /tmp c7; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/tune-q4b && tar xzf .carry/tune-q4b.tgz -C /tmp
cp .carry/c7.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
timeout 280 $K tune --device cuda --kernel gemv_q4_0_rp,gemv_q4_1_rp --shapes t2_nlo,t2_nhi,t3_4_nlo,t3_4_nhi,t5_8_nlo,t5_8_nhi --candidates /tmp/tune-q4b --out $R/sm_90-q4.ron --replays 10 --budget-s 250 > $R/tune-q4b.log 2>&1
echo "tune rc $?"; grep "^|" $R/tune-q4b.log | head -12; cp /tmp/tune-q4b/tune-progress.jsonl $R/ 2>/dev/null
ck
