#!/usr/bin/env bash
# The third device call the thirtieth session (2026-12-05, no device lent) left: decode attention
# (issue 13) with the split-across-waves variants `r1x`, `r4x`, `r4x2` (specs/src/attention/
# decode/across.rs, not timed yet, not routed), against the routes, at six contexts (1K to 32K,
# T = 1, 4, 8: the chart of time against context), with torch SDPA (bf16) and llama.cpp's
# FLASH_ATTN_EXT (q8_0 K/V, `PEER_FA_KV`) on the same shapes in the same call. Not run yet.
# Carry .carry/{kiln,lib.txz,lib-prev.txz} (the runtime-only kiln and `tar cJf .carry/lib.txz -C /tmp/lib
# dist` of `kiln build --arch sm_90 --strict -o /tmp/lib/dist` at the commit to time) and
# .peers/llamacpp (../shared/peers/llamacpp with bench/peers/peer-bench-kiln.patch applied: this
# script applies it where it is missing), copy this file to .carry/c3.sh, then
# `bash .carry/c3.sh`. About 9 minutes. lib-prev.txz: the
# package of commit 43fa4ef, before the V rows' 64-bit indices, for an A / B of the routes. Then:
#   python3 bench/context_chart.py $R/bench-attn.json docs/img/context-h200.png \
#       --sdpa $R/sdpa.json --llama $R/peer/peer.txt --variants r4x,r4x2,r1x
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c3; rm -rf $R; mkdir -p $R/peer
ck() { tar czf $O/c3.tgz -C /tmp c3; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/p3; mkdir -p /tmp/p3; tar xJf .carry/lib.txz -C /tmp/p3
P=/tmp/p3/dist
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
grep -q PEER_FA_KV .peers/llamacpp/ggml/tests/peer-bench.cpp ||
  patch -p1 -d .peers/llamacpp < bench/peers/peer-bench-kiln.patch > $R/peer-patch.log 2>&1
( OUT=$R/peer STEPS="none" nice -n 5 bash .peers/llamacpp/run.sh > $R/peer-build.log 2>&1 ) &
BPID=$!
F=attention_decode_q8_0_d64,attention_decode_q8_0_d128,attention_decode_rope_q8_0_d64_q8_1s,attention_decode_rope_q8_0_d128_q8_1s
timeout 240 $K parity --device cuda --package $P --kernel $F > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-120)"; grep -E "^FAIL" $R/parity.log | head -3
ck
A=""
for c in 1k 2k 4k 8k 16k 32k; do for t in 1 4 8; do A="$A,attn_q8_0_ctx${c}_t${t}"; done; done
A=${A#,}
V=tuned_t2_5_short,tuned_t2_5_long,r4t256,r8,r8a,r1x,r4x,r4x2
timeout 300 $K bench --package $P --kernel $A --variant $V --replays 10 --json $R/bench-attn.json > $R/bench-attn.log 2>&1
echo "attn rc $?"; grep -E "^attn" $R/bench-attn.log | sort -u | cut -c1-220; ck
# A / B: the routed variants with the package before the V rows' 64-bit indices (commit 43fa4ef).
if [ -f .carry/lib-prev.txz ]; then
  rm -rf /tmp/p3prev; mkdir -p /tmp/p3prev; tar xJf .carry/lib-prev.txz -C /tmp/p3prev
  A2=attn_q8_0_ctx4k_t1,attn_q8_0_ctx4k_t4,attn_q8_0_ctx4k_t8,attn_q8_0_ctx32k_t1,attn_q8_0_ctx32k_t4,attn_q8_0_ctx32k_t8
  timeout 120 $K bench --package /tmp/p3prev/dist --kernel $A2 --variant tuned_t2_5_short,tuned_t2_5_long,r4t256,r8 --replays 10 --json $R/bench-attn-prev.json > $R/bench-attn-prev.log 2>&1
  echo "attn prev rc $?"; grep -E "^attn" $R/bench-attn-prev.log | sort -u | cut -c1-220; ck
fi
timeout 150 python3 bench/attention_peers.py $R/sdpa.json 1024,2048,4096,8192,16384,32768 > $R/sdpa.log 2>&1
echo "sdpa rc $?: $(tail -n 18 $R/sdpa.log | tr '\n' ' ' | cut -c1-600)"; ck
wait $BPID; echo "peer build: $(tail -n 2 $R/peer/build.txt 2>/dev/null | tr '\n' ' ' | cut -c1-200)"
OUT=$R/peer STEPS="peer" PEER_FA_ONLY=1 PEER_FA_KV=1024,2048,4096,8192,16384,32768 timeout 150 bash .peers/llamacpp/run.sh > $R/peer-run.log 2>&1
echo "peer rc $?"; grep -E "FLASH_ATTN_EXT type_KV=q8_0 layout=llama" $R/peer/peer.txt 2>/dev/null | grep "mode=rot" | cut -c1-160 | head -18
ck
