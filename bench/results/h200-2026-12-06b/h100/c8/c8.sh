#!/usr/bin/env bash
# The forty-second session's call 8 (2026-12-06): the i8 order's last fold 4 dimensions a lane
# (`Fold::Quad(16)`, package `libC`; the forty-first session built it and never ran it on a GPU)
# against `libB` (one dimension a lane, 32 states a trip): cuda parity of libC's i8 families,
# then the i8 bench cases interleaved B, C twice; llama.cpp's FLASH_ATTN_EXT built in the
# background and run after them (same shapes). Carry: .cxd.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c8; rm -rf $R; mkdir -p $R/peer
ck() { tar czf $O/c8.tgz -C /tmp c8; }
T0=$SECONDS; B=${BUDGET:-400}
left() { echo $((B - (SECONDS - T0))); }
lim() { local l; l=$(left); [ $l -gt $1 ] && echo $1 || echo $((l > 5 ? l : 5)); }
C=$(pwd)/.cxd
xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; K=/tmp/kiln
for p in B C; do rm -rf /tmp/p$p; mkdir -p /tmp/p$p; tar xJf $C/lib$p.txz -C /tmp/p$p; done
mkdir -p /tmp/peers && tar xJf $C/peers.txz -C /tmp/peers
grep -q PEER_FA_KV /tmp/peers/llamacpp/ggml/tests/peer-bench.cpp ||
  patch -p1 -d /tmp/peers/llamacpp < bench/peers/peer-bench-kiln.patch > $R/peer-patch.log 2>&1
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
( OUT=$R/peer STEPS="none" DEADLINE=260 BUILD_DEADLINE=255 nice -n 5 bash /tmp/peers/llamacpp/run.sh > $R/peer-build.log 2>&1; echo "rc $?" >> $R/peer-build.log ) &
BP=$!
timeout $(lim 100) $K parity --device cuda --package /tmp/pC/dist --kernel attention_decode_q8_0_i8_d128,attention_decode_q8_0_i8_d64 > $R/parity.log 2>&1
echo "cuda parity rc $?: $(tail -n 1 $R/parity.log) ($((SECONDS - T0)) s)"; grep -E "FAIL" $R/parity.log | head -5; ck
I=attn_q8_0_i8_ctx4k_t1,attn_q8_0_i8_ctx4k_t4,attn_q8_0_i8_ctx4k_t8,attn_q8_0_i8_ctx32k_t1,attn_q8_0_i8_ctx32k_t4,attn_q8_0_i8_ctx32k_t8
for i in 1 2; do for p in B C; do
  timeout $(lim 40) $K bench --package /tmp/p$p/dist --kernel $I --variant mma8,mma8_lds,mma8a --json $R/i8-$p-$i.json > $R/i8-$p-$i.log 2>&1
  echo "i8 $p $i rc $? ($((SECONDS - T0)) s)"; grep -E "^attn" $R/i8-$p-$i.log | sort -u | cut -c1-200; ck
done; done
wait $BP; echo "peer build: $(tail -n 1 $R/peer-build.log) ($((SECONDS - T0)) s)"; ck
if [ -x /tmp/llb/bin/peer-bench ] && [ $(left) -gt 40 ]; then
  OUT=$R/peer STEPS="peer" PEER_FA_ONLY=1 PEER_FA_KV=4096,32768 timeout $(lim 120) bash /tmp/peers/llamacpp/run.sh > $R/peer-run.log 2>&1
  echo "peer rc $? ($((SECONDS - T0)) s)"; grep -E "FLASH_ATTN_EXT" $R/peer/peer.txt 2>/dev/null | grep "mode=rot" | grep "layout=llama" | cut -c1-170
else echo "peer skipped: $(left) s left"; fi
ck
echo "end ($((SECONDS - T0)) s)"
