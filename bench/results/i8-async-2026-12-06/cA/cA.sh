#!/usr/bin/env bash
# The forty-first session's call A (2026-12-06): `mma8a` (the i8 order's K and V chunks staged by
# async copies, half a step ahead) against `mma8_lds` and `mma8` in one package (`libN`, 176
# registers for `mma8a`); `libV` = libN with step 3's group fold 4 dimensions a lane (the same
# bits); `libS` (`mma8a` capped at 168: 8 bytes of spill, 12 warps an SM, built without the
# scratch budget, for the timing only). llama.cpp's peer-bench built in the background while
# the cuda parity of libV's i8 families and Q8_0 d128 family runs; then the i8 bench cases
# interleaved N, V twice and S once. Call B on the same machine: the f32 order, the peers.
# Carry: .cxd.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cA; rm -rf $R; mkdir -p $R/peer
ck() { tar czf $O/cA.tgz -C /tmp cA; }
T0=$SECONDS
C=$(pwd)/.cxd
xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; K=/tmp/kiln
for p in N V S; do rm -rf /tmp/p$p; mkdir -p /tmp/p$p; tar xJf $C/lib$p.txz -C /tmp/p$p; done
mkdir -p /tmp/peers && tar xJf $C/peers.txz -C /tmp/peers
grep -q PEER_FA_KV /tmp/peers/llamacpp/ggml/tests/peer-bench.cpp ||
  patch -p1 -d /tmp/peers/llamacpp < bench/peers/peer-bench-kiln.patch > $R/peer-patch.log 2>&1
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
( OUT=$R/peer STEPS="none" DEADLINE=260 BUILD_DEADLINE=255 bash /tmp/peers/llamacpp/run.sh > $R/peer-build.log 2>&1; echo "rc $?" >> $R/peer-build.log ) &
BP=$!
timeout 250 $K parity --device cuda --package /tmp/pV/dist --kernel attention_decode_q8_0_i8_d128,attention_decode_q8_0_i8_d64,attention_decode_q8_0_d128 > $R/parity.log 2>&1
echo "cuda parity rc $?: $(tail -n 1 $R/parity.log) ($((SECONDS - T0)) s)"; grep -E "^time|FAIL" $R/parity.log | head -8; ck
wait $BP; echo "peer build: $(tail -n 1 $R/peer-build.log) ($((SECONDS - T0)) s)"; ck
I=attn_q8_0_i8_ctx4k_t1,attn_q8_0_i8_ctx4k_t4,attn_q8_0_i8_ctx4k_t8,attn_q8_0_i8_ctx32k_t1,attn_q8_0_i8_ctx32k_t4,attn_q8_0_i8_ctx32k_t8
for i in 1 2; do for p in N V; do
  timeout 80 $K bench --package /tmp/p$p/dist --kernel $I --variant mma8,mma8_lds,mma8a --json $R/i8-$p-$i.json > $R/i8-$p-$i.log 2>&1
  echo "i8 $p $i rc $? ($((SECONDS - T0)) s)"; grep -E "^attn" $R/i8-$p-$i.log | sort -u | cut -c1-200; ck
done; done
timeout 60 $K bench --package /tmp/pS/dist --kernel $I --variant mma8a --json $R/i8-S-1.json > $R/i8-S-1.log 2>&1
echo "i8 S 1 rc $? ($((SECONDS - T0)) s)"; grep -E "^attn" $R/i8-S-1.log | sort -u | cut -c1-200; ck
echo "end ($((SECONDS - T0)) s)"
