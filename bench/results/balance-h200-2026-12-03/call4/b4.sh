#!/usr/bin/env bash
# Call 4 (2026-12-03, fifteenth session): the weight quants and scales by async copies
# (`cp.async`, the IR's new `async_copy` / `async_wait`) into an LDS ring `stages - 1` loop
# trips ahead: `wide_t2_a2` (two tiles, two stages, 124 registers), `wide_t1_a3` / `_a4` (one
# tile, 103 / 96 registers), against `wide_t2_g4` (routed at N > 4096) and `wide_t1_g2p`
# (routed at N <= 4096). Parity first; then two bench runs in opposite variant orders; then the
# dp4a family on the same shapes. Then the decode attention's K chunks by async copies into two
# LDS buffers a wave (`r1a`, `r8a`) against `r1`, `r8`, `r4t256` (routed), same protocol.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/call4; rm -rf $R; mkdir -p $R
ck() { tar czf $O/call4.tgz -C /tmp call4; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/p5 && mkdir -p /tmp/p5 && tar xzf .carry/p5.tgz -C /tmp/p5
cp .carry/b4.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
$K parity --device cuda --package /tmp/p5/dist --kernel gemv_q8_0_rp_k4,attention_decode_q8_0_d128 > $R/parity.log 2>&1; echo "parity rc $?"; tail -1 $R/parity.log; grep -i fail $R/parity.log | head -5
C=gemv_q8_0_rp_k4_n14336_t1,gemv_q8_0_rp_k4_n14336_t4,gemv_q8_0_rp_k4_n14336_t8,gemv_q8_0_rp_k4_n4096_t1,gemv_q8_0_rp_k4_n4096_t8,gemv_q8_0_rp_k4_n16896_t8
V1=wide_t2_g4,wide_t1_g2p,wide_t2_a2,wide_t1_a3,wide_t1_a4
V2=wide_t1_a4,wide_t1_a3,wide_t2_a2,wide_t1_g2p,wide_t2_g4
$K bench --package /tmp/p5/dist --kernel $C --variant $V1 --json $R/bench-a.json > $R/bench-a.log 2>&1; echo "a rc $?"; grep -v "^$" $R/bench-a.log | grep -v "^case\|^bandwidth" | sort -u; ck
$K bench --package /tmp/p5/dist --kernel $C --variant $V2 --json $R/bench-b.json > $R/bench-b.log 2>&1; echo "b rc $?"; grep -v "^$" $R/bench-b.log | grep -v "^case\|^bandwidth" | sort -u; ck
$K bench --package /tmp/p5/dist --kernel gemv_q8_0_rp_n14336_t1,gemv_q8_0_rp_n14336_t8,gemv_q8_0_rp_n4096_t1,gemv_q8_0_rp_n4096_t8 --json $R/bench-dp4a.json > $R/bench-dp4a.log 2>&1; echo "dp4a rc $?"; grep -v "^$" $R/bench-dp4a.log | grep -v "^case" | sort -u | cut -c1-100; ck
A=attn_q8_0_ctx4k_t1,attn_q8_0_ctx4k_t8,attn_q8_0_ctx32k_t1,attn_q8_0_ctx32k_t4,attn_q8_0_ctx32k_t8
$K bench --package /tmp/p5/dist --kernel $A --variant r4t256,r1,r1a,r8,r8a --json $R/bench-attn-a.json > $R/bench-attn-a.log 2>&1; echo "attn a rc $?"; grep -v "^$" $R/bench-attn-a.log | grep -v "^case\|^bandwidth" | sort -u; ck
$K bench --package /tmp/p5/dist --kernel $A --variant r8a,r8,r1a,r1,r4t256 --json $R/bench-attn-b.json > $R/bench-attn-b.log 2>&1; echo "attn b rc $?"; grep -v "^$" $R/bench-attn-b.log | grep -v "^case\|^bandwidth" | sort -u; ck
