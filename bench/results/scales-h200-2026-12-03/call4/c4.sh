#!/usr/bin/env bash
# Call 4 (2026-12-03, seventeenth session): lower register caps so that every workgroup of
# N = 14336 is resident at once (one tile: 896 workgroups; at 72 registers 7 an SM, 924 slots;
# at 64, 8), bench only: wide_t1_g1 / _g2 at 64 and 72, wide_t2_g1 at 96 (5 an SM). Parity on
# cuda first. Run as `bash .carry/c4.sh` with .carry/{kiln,k4c.tgz}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c4; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c4.tgz -C /tmp c4; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/k4c && mkdir -p /tmp/k4c && tar xzf .carry/k4c.tgz -C /tmp/k4c
cp .carry/c4.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
timeout 100 $K parity --device cuda --package /tmp/k4c/dist --kernel gemv_q8_0_rp_k4 > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-100)"; grep -i "fail" $R/parity.log | head -3
ck
for i in 1 2; do
timeout 150 $K bench --package /tmp/k4c/dist --kernel gemv_q8_0_rp_k4 --json $R/bench$i.json > $R/bench$i.log 2>&1
echo "bench $i rc $?"; grep -E "^gemv" $R/bench$i.log | sort -u | cut -c1-60,130-400
ck
done
