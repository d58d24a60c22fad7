#!/usr/bin/env bash
# Call 3 (2026-12-03, nineteenth session): kiln tune of gemv_q8_0_rp t1_nlo and gemv_q8_0_rp_res
# t1_klo / t1_khi with the early-load knob e (the shipped entries predate it).
# Run as `bash .carry/c3.sh` with .carry/{kiln,tune-b.tgz}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c3; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c3.tgz -C /tmp c3; }
K=$(pwd)/.carry/kiln
cp .carry/c3.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
rm -rf /tmp/tb; mkdir -p /tmp/tb; tar xzf .carry/tune-b.tgz -C /tmp/tb
timeout 200 $K tune --device cuda --arch sm_90 --kernel gemv_q8_0_rp,gemv_q8_0_rp_res --shapes t1_nlo,t1_klo,t1_khi --candidates /tmp/tb/tune-b --out $R/tune-b.ron --budget-s 170 > $R/tune-b.log 2>&1
echo "tune rc $?"; tail -n 8 $R/tune-b.log | cut -c1-200
ck
