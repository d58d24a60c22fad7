#!/usr/bin/env bash
# Call 6 (2026-12-03, seventeenth session): the Q4 GEMVs with call 5's one-token tuning merged
# into specs/tuning/sm_90.ron (package `kiln build --arch sm_90 --strict --kernel
# gemv_q4_0_rp,gemv_q4_1_rp`): parity on cuda with the tuned variants, then the bench cases,
# every variant (the route is the headline). Run as `bash .carry/c6.sh` with .carry/{kiln,q4.tgz}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c6; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c6.tgz -C /tmp c6; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/q4 && mkdir -p /tmp/q4 && tar xzf .carry/q4.tgz -C /tmp/q4
cp .carry/c6.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
timeout 100 $K parity --device cuda --package /tmp/q4/dist --kernel gemv_q4_0_rp,gemv_q4_1_rp > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-100)"; grep -i "fail" $R/parity.log | head -3
ck
for i in 1 2; do
timeout 100 $K bench --package /tmp/q4/dist --kernel gemv_q4_0_rp,gemv_q4_1_rp --json $R/bench$i.json > $R/bench$i.log 2>&1
echo "bench $i rc $?"; grep -E "^gemv" $R/bench$i.log | sort -u | cut -c1-300
ck
done
