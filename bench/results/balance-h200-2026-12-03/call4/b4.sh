#!/usr/bin/env bash
# Call 4 (2026-12-03, fifteenth session): the package as committed (`wide_t1_g2p` routed first
# for n <= 4096 on sm_90, the other probes removed): parity, then the family's bench cases with
# the router's choice as the headline, then the dp4a family (`gemv_q8_0_rp`) on the same shapes.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/call4; rm -rf $R; mkdir -p $R
ck() { tar czf $O/call4.tgz -C /tmp call4; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/p4 && mkdir -p /tmp/p4 && tar xzf .carry/p4.tgz -C /tmp/p4
cp .carry/b4.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
$K parity --device cuda --package /tmp/p4/dist --kernel gemv_q8_0_rp_k4 > $R/parity.log 2>&1; echo "parity rc $?"; tail -1 $R/parity.log
$K bench --package /tmp/p4/dist --kernel gemv_q8_0_rp_k4 --variant wide_t1_g2p,wide_t2_g4,wide_t2_g1 --json $R/bench-k4.json > $R/bench-k4.log 2>&1; echo "k4 rc $?"; grep -v "^$" $R/bench-k4.log | grep -v "^case" | sort -u; ck
$K bench --package /tmp/p4/dist --kernel gemv_q8_0_rp_n14336_t1,gemv_q8_0_rp_n14336_t8,gemv_q8_0_rp_n4096_t1,gemv_q8_0_rp_n4096_t8 --json $R/bench-dp4a.json > $R/bench-dp4a.log 2>&1; echo "dp4a rc $?"; grep -v "^$" $R/bench-dp4a.log | grep -v "^case" | sort -u | cut -c1-110; ck
