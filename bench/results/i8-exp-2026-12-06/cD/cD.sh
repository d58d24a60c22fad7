#!/usr/bin/env bash
# The fortieth session's call D (2026-12-06), on call C's warm machine: llama.cpp's peer-bench
# built, then `libJ`'s routed i8 cases and llama.cpp's FLASH_ATTN_EXT on the same shapes, one
# run each, in the same call. Carry: .cxd.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cD; rm -rf $R; mkdir -p $R/peer
ck() { tar czf $O/cD.tgz -C /tmp cD; }
T0=$SECONDS
C=$(pwd)/.cxd
K=/tmp/kiln
mkdir -p /tmp/peers && tar xJf $C/peers.txz -C /tmp/peers
grep -q PEER_FA_KV /tmp/peers/llamacpp/ggml/tests/peer-bench.cpp ||
  patch -p1 -d /tmp/peers/llamacpp < bench/peers/peer-bench-kiln.patch > $R/peer-patch.log 2>&1
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
OUT=$R/peer STEPS="none" DEADLINE=230 BUILD_DEADLINE=225 bash /tmp/peers/llamacpp/run.sh > $R/peer-build.log 2>&1
echo "peer build rc $? ($((SECONDS - T0)) s)"; ck
I=attn_q8_0_i8_ctx4k_t1,attn_q8_0_i8_ctx4k_t4,attn_q8_0_i8_ctx4k_t8,attn_q8_0_i8_ctx32k_t1,attn_q8_0_i8_ctx32k_t4,attn_q8_0_i8_ctx32k_t8
timeout 30 $K bench --package /tmp/pJ/dist --kernel $I --variant mma8,mma8_lds --json $R/i8-J.json > $R/i8-J.log 2>&1
echo "i8 J rc $? ($((SECONDS - T0)) s)"; grep -E "^attn" $R/i8-J.log | sort -u | cut -c1-120; ck
if [ -x /tmp/llb/bin/peer-bench ]; then
  OUT=$R/peer STEPS="peer" PEER_FA_ONLY=1 PEER_FA_KV=4096,32768 timeout 60 bash /tmp/peers/llamacpp/run.sh > $R/peer-run.log 2>&1
  echo "peer rc $? ($((SECONDS - T0)) s)"; grep -E "FLASH_ATTN_EXT type_KV=q8_0 layout=llama" $R/peer/peer.txt 2>/dev/null | sed -E 's/.*kv=([0-9]+) nb=([0-9]).*us_per_op=([0-9.]+).*/kv=\1 T=\2 \3 us/'
fi
ck; echo "end ($((SECONDS - T0)) s)"
