#!/usr/bin/env bash
# Call 2 (2026-12-03, seventeenth session): with the scales by tile (call 1), the k4 shapes
# that lost to `wide_t2_g4` while L1 was its bottleneck, timed again: one tile with three and
# four groups, two tiles with two and three, and the pipelined one-group bodies (bench only).
# Parity on cuda first. Run as `bash .carry/c2.sh` with .carry/{kiln,k4x.tgz}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c2; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c2.tgz -C /tmp c2; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/k4x && mkdir -p /tmp/k4x && tar xzf .carry/k4x.tgz -C /tmp/k4x
cp .carry/c2.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
timeout 100 $K parity --device cuda --package /tmp/k4x/dist --kernel gemv_q8_0_rp_k4 > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-100)"; grep -i "fail" $R/parity.log | head -3
ck
for i in 1 2; do
timeout 150 $K bench --package /tmp/k4x/dist --kernel gemv_q8_0_rp_k4 --json $R/bench$i.json > $R/bench$i.log 2>&1
echo "bench $i rc $?"; grep -E "^gemv" $R/bench$i.log | cut -c1-400
ck
done
