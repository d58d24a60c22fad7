#!/usr/bin/env bash
# The forty-second session's call 2 (2026-12-06), on call 1's warm machine: issue 13's
# attention cases with HEAD's package (`libA`): the i8 order every `mma*` variant and routed,
# the f32 order routed, twice each; llama.cpp's FLASH_ATTN_EXT (q8_0 and f16 caches; peer-bench
# built by call 1) and torch SDPA on the same shapes in the same call; the runtime's cuda
# device tests. Carry: .cxd.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c2; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c2.tgz -C /tmp c2; }
T0=$SECONDS; B=${BUDGET:-575}
left() { echo $((B - (SECONDS - T0))); }
lim() { local l; l=$(left); [ $l -gt $1 ] && echo $1 || echo $((l > 5 ? l : 5)); }
C=$(pwd)/.cxd
[ -x /tmp/kiln ] || { xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; }
K=/tmp/kiln
[ -d /tmp/pA/dist ] || { mkdir -p /tmp/pA; tar xJf $C/libA.txz -C /tmp/pA; }
P=/tmp/pA/dist
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
I=attn_q8_0_i8_ctx4k_t1,attn_q8_0_i8_ctx4k_t4,attn_q8_0_i8_ctx4k_t8,attn_q8_0_i8_ctx32k_t1,attn_q8_0_i8_ctx32k_t4,attn_q8_0_i8_ctx32k_t8
Q=attn_q8_0_ctx4k_t1,attn_q8_0_ctx4k_t4,attn_q8_0_ctx4k_t8,attn_q8_0_ctx32k_t1,attn_q8_0_ctx32k_t4,attn_q8_0_ctx32k_t8
for i in 1 2; do
  timeout $(lim 80) $K bench --package $P --kernel $I --variant mma8,mma8_lds,mma8a --json $R/i8-$i.json > $R/i8-$i.log 2>&1
  echo "i8 $i rc $? ($((SECONDS - T0)) s)"; grep -E "^attn" $R/i8-$i.log | sort -u | cut -c1-200; ck
  timeout $(lim 70) $K bench --package $P --kernel $Q --variant tuned_t1_short,tuned_t1_long,tuned_t2_5_short,tuned_t2_5_long,r8 --json $R/q8-$i.json > $R/q8-$i.log 2>&1
  echo "q8 $i rc $? ($((SECONDS - T0)) s)"; grep -E "^attn" $R/q8-$i.log | sort -u | cut -c1-150; ck
done
if [ -x /tmp/llb/bin/peer-bench ]; then
  OUT=$R/peer STEPS="peer" PEER_FA_ONLY=1 PEER_FA_KV=4096,32768 timeout $(lim 150) bash /tmp/peers/llamacpp/run.sh > $R/peer-run.log 2>&1
  echo "peer rc $? ($((SECONDS - T0)) s)"; grep -E "FLASH_ATTN_EXT" $R/peer/peer.txt 2>/dev/null | grep "mode=rot" | cut -c1-160 | head -18
else echo "peer-bench not built"; fi
ck
timeout $(lim 90) python3 bench/attention_peers.py $R/sdpa.json 4096,32768 > $R/sdpa.log 2>&1
echo "sdpa rc $? ($((SECONDS - T0)) s): $(tail -n 8 $R/sdpa.log | tr '\n' ' ' | cut -c1-400)"; ck
xz -dc $C/rt-tests.xz > /tmp/rt-tests && chmod +x /tmp/rt-tests
timeout $(lim 90) /tmp/rt-tests --ignored cuda --test-threads=1 > $R/device-tests.log 2>&1
echo "device tests rc $?: $(grep -E '^test result' $R/device-tests.log)"; ck
echo "end ($((SECONDS - T0)) s)"
