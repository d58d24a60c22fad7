#!/usr/bin/env bash
# Call 10 (2026-12-03, seventeenth session): the dp4a Q8_0 GEMV with call 9 tuning merged
# into specs/tuning/sm_90.ron (package `kiln build --arch sm_90 --strict --kernel
# gemv_q8_0_rp`): parity on cuda with the tuned variants, then the bench cases,
# every variant (the route is the headline). Run as `bash .carry/c10.sh` with .carry/{kiln,q8.tgz}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c10; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c10.tgz -C /tmp c10; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/q8 && mkdir -p /tmp/q8 && tar xzf .carry/q8.tgz -C /tmp/q8
cp .carry/c10.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
timeout 100 $K parity --device cuda --package /tmp/q8/dist --kernel gemv_q8_0_rp > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-100)"; grep -i "fail" $R/parity.log | head -3
ck
for i in 1 2; do
timeout 100 $K bench --package /tmp/q8/dist --kernel gemv_q8_0_rp --json $R/bench$i.json > $R/bench$i.log 2>&1
echo "bench $i rc $?"; grep -E "^gemv" $R/bench$i.log | sort -u | cut -c1-300
ck
done
