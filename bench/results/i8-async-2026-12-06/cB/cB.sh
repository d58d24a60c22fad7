#!/usr/bin/env bash
# The forty-first session's call B (2026-12-06), on call A's warm machine: the f32 order's routed
# Q8_0 d128 cases with libN and libV (step 3's group fold 4 dimensions a lane: the same bits),
# interleaved; llama.cpp's FLASH_ATTN_EXT (peer-bench built by call A) and torch SDPA on the
# same shapes in the same call. Carry: .cxd.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cB; rm -rf $R; mkdir -p $R/peer
ck() { tar czf $O/cB.tgz -C /tmp cB; }
T0=$SECONDS
C=$(pwd)/.cxd
[ -x /tmp/kiln ] || { xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; }
K=/tmp/kiln
for p in N V; do [ -d /tmp/p$p/dist ] || { mkdir -p /tmp/p$p; tar xJf $C/lib$p.txz -C /tmp/p$p; }; done
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
Q=attn_q8_0_ctx4k_t1,attn_q8_0_ctx4k_t4,attn_q8_0_ctx4k_t8,attn_q8_0_ctx32k_t1,attn_q8_0_ctx32k_t4,attn_q8_0_ctx32k_t8
for i in 1 2; do for p in N V; do
  timeout 70 $K bench --package /tmp/p$p/dist --kernel $Q --variant tuned_t1_short,tuned_t1_long,tuned_t2_5_short,tuned_t2_5_long,r8 --json $R/q8-$p-$i.json > $R/q8-$p-$i.log 2>&1
  echo "q8 $p $i rc $? ($((SECONDS - T0)) s)"; grep -E "^attn" $R/q8-$p-$i.log | sort -u | cut -c1-150; ck
done; done
if [ -x /tmp/llb/bin/peer-bench ]; then
  OUT=$R/peer STEPS="peer" PEER_FA_ONLY=1 PEER_FA_KV=4096,32768 timeout 150 bash /tmp/peers/llamacpp/run.sh > $R/peer-run.log 2>&1
  echo "peer rc $? ($((SECONDS - T0)) s)"; grep -E "FLASH_ATTN_EXT" $R/peer/peer.txt 2>/dev/null | grep "mode=rot" | cut -c1-160 | head -18
else echo "peer-bench not built"; fi
ck
timeout 90 python3 bench/attention_peers.py $R/sdpa.json 4096,32768 > $R/sdpa.log 2>&1
echo "sdpa rc $? ($((SECONDS - T0)) s): $(tail -n 8 $R/sdpa.log | tr '\n' ' ' | cut -c1-400)"; ck
echo "end ($((SECONDS - T0)) s)"
