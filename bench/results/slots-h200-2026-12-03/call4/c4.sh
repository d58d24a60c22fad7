#!/usr/bin/env bash
# Call 4 (2026-12-03, nineteenth session): kiln tune of gemv_q8_0_rp t1_nhi and
# gemv_q8_0_rp_swiglu_q8_1s t1 with the early-load knob e.
# Run as `bash .carry/c4.sh` with .carry/{kiln,tune-c.tgz}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c4; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c4.tgz -C /tmp c4; }
K=$(pwd)/.carry/kiln
cp .carry/c4.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
rm -rf /tmp/tc; mkdir -p /tmp/tc; tar xzf .carry/tune-c.tgz -C /tmp/tc
timeout 200 $K tune --device cuda --arch sm_90 --kernel gemv_q8_0_rp,gemv_q8_0_rp_swiglu_q8_1s --shapes t1_nhi,t1 --candidates /tmp/tc/tune-c --out $R/tune-c.ron --budget-s 170 > $R/tune-c.log 2>&1
echo "tune rc $?"; tail -n 8 $R/tune-c.log | cut -c1-200
ck
