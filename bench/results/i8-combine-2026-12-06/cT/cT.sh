#!/usr/bin/env bash
# The thirty-eighth session's call 3 (2026-12-06): timing only (wrong results): the i8 order's
# `mma8_lds`, `mma8s2`, `mma8s4` with the combine left out, against `mma8` whole, to see what
# the scan of the shared chunk costs apart from its combine. Carry: .cxd.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cT; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cT.tgz -C /tmp cT; }
C=$(pwd)/.cxd
xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; K=/tmp/kiln
rm -rf /tmp/pT; mkdir -p /tmp/pT; tar xJf $C/libT.txz -C /tmp/pT; P=/tmp/pT/dist
cp "$0" $R/
A=attn_q8_0_i8_ctx4k_t8,attn_q8_0_i8_ctx32k_t1,attn_q8_0_i8_ctx32k_t4,attn_q8_0_i8_ctx32k_t8
timeout 150 $K bench --package $P --kernel $A --variant mma8,mma8_lds,mma8s2,mma8s4 --json $R/bench-1.json > $R/bench-1.log 2>&1
echo "bench rc $?"; grep -E "^attn" $R/bench-1.log | sort -u | cut -c1-200; ck
