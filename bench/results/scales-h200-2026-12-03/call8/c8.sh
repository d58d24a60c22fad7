#!/usr/bin/env bash
# Call 8 (2026-12-03, seventeenth session): the Q4 GEMVs with calls 5 and 7 tuning (every bucket) merged
# into specs/tuning/sm_90.ron (package `kiln build --arch sm_90 --strict --kernel
# gemv_q4_0_rp,gemv_q4_1_rp`): parity on cuda with the tuned variants, then the bench cases,
# every variant (the route is the headline). Run as `bash .carry/c8.sh` with .carry/{kiln,q4b.tgz}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c8; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c8.tgz -C /tmp c8; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/q4b && mkdir -p /tmp/q4b && tar xzf .carry/q4b.tgz -C /tmp/q4b
cp .carry/c8.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
timeout 100 $K parity --device cuda --package /tmp/q4b/dist --kernel gemv_q4_0_rp,gemv_q4_1_rp > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-100)"; grep -i "fail" $R/parity.log | head -3
ck
for i in 1 2; do
timeout 100 $K bench --package /tmp/q4b/dist --kernel gemv_q4_0_rp,gemv_q4_1_rp --json $R/bench$i.json > $R/bench$i.log 2>&1
echo "bench $i rc $?"; grep -E "^gemv" $R/bench$i.log | sort -u | cut -c1-300
ck
done
