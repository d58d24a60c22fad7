#!/usr/bin/env bash
# The forty-third session's call 1 (2026-12-07): on one machine, with llama.cpp built in the
# background: cuda parity of `libE` (the f32 order's last fold 4 dimensions a lane on sm_90
# where it takes more than one pass, a2bab30) over the four plain decode families; the f32
# order's Q8_0 d128 cases interleaved libC (HEAD: one dimension a lane) and libE, twice; the i8
# order (the same objects in both: the last fold 4 dimensions a lane, 50e37d9) every `mma8*`
# variant and routed, twice; llama.cpp's FLASH_ATTN_EXT (q8_0 and f16) and torch SDPA on the
# same shapes. Carry: .cxd and .cxa (the packages).
. "$(dirname "$0")/call.sh"
begin c1 570
for p in C E; do rm -rf /tmp/p$p; mkdir -p /tmp/p$p; tar xJf $(pwd)/.cxa/lib$p.txz -C /tmp/p$p; done
mkdir -p /tmp/peers && tar xJf $C/peers.txz -C /tmp/peers
grep -q PEER_FA_KV /tmp/peers/llamacpp/ggml/tests/peer-bench.cpp ||
  patch -p1 -d /tmp/peers/llamacpp < bench/peers/peer-bench-kiln.patch > $R/peer-patch.log 2>&1
( OUT=$R/peer STEPS="none" DEADLINE=290 BUILD_DEADLINE=285 nice -n 5 bash /tmp/peers/llamacpp/run.sh > $R/peer-build.log 2>&1; echo "rc $?" >> $R/peer-build.log ) &
BP=$!
timeout $(lim 170) $K parity --device cuda --package /tmp/pE/dist --kernel attention_decode_f16_d64,attention_decode_f16_d128,attention_decode_q8_0_d64,attention_decode_q8_0_d128 > $R/parity.log 2>&1
echo "cuda parity E rc $?: $(tail -n 1 $R/parity.log) ($((SECONDS - T0)) s)"; grep -E "FAIL" $R/parity.log | head -8; ck
Q=attn_q8_0_ctx4k_t1,attn_q8_0_ctx4k_t4,attn_q8_0_ctx4k_t8,attn_q8_0_ctx32k_t1,attn_q8_0_ctx32k_t4,attn_q8_0_ctx32k_t8
I=attn_q8_0_i8_ctx4k_t1,attn_q8_0_i8_ctx4k_t4,attn_q8_0_i8_ctx4k_t8,attn_q8_0_i8_ctx32k_t1,attn_q8_0_i8_ctx32k_t4,attn_q8_0_i8_ctx32k_t8
for i in 1 2; do for p in C E; do
  timeout $(lim 40) $K bench --package /tmp/p$p/dist --kernel $Q --variant tuned_t1_short,tuned_t1_long,tuned_t2_5_short,tuned_t2_5_long,r8 --json $R/q8-$p-$i.json > $R/q8-$p-$i.log 2>&1
  echo "q8 $p $i rc $? ($((SECONDS - T0)) s)"; grep -E "^attn" $R/q8-$p-$i.log | sort -u | cut -c1-150; ck
done
  timeout $(lim 50) $K bench --package /tmp/pC/dist --kernel $I --variant mma8,mma8_lds,mma8a --json $R/i8-$i.json > $R/i8-$i.log 2>&1
  echo "i8 $i rc $? ($((SECONDS - T0)) s)"; grep -E "^attn" $R/i8-$i.log | sort -u | cut -c1-200; ck
done
wait $BP; echo "peer build: $(tail -n 1 $R/peer-build.log) ($((SECONDS - T0)) s)"; ck
if [ -x /tmp/llb/bin/peer-bench ] && [ $(left) -gt 40 ]; then
  OUT=$R/peer STEPS="peer" PEER_FA_ONLY=1 PEER_FA_KV=4096,32768 timeout $(lim 120) bash /tmp/peers/llamacpp/run.sh > $R/peer-run.log 2>&1
  echo "peer rc $? ($((SECONDS - T0)) s)"; grep -E "FLASH_ATTN_EXT" $R/peer/peer.txt 2>/dev/null | grep "mode=rot" | grep "layout=llama" | cut -c1-170
else echo "peer skipped: $(left) s left"; fi
ck
[ $(left) -gt 30 ] && { timeout $(lim 90) python3 bench/attention_peers.py $R/sdpa.json 4096,32768 > $R/sdpa.log 2>&1
echo "sdpa rc $? ($((SECONDS - T0)) s): $(tail -n 8 $R/sdpa.log | tr '\n' ' ' | cut -c1-400)"; }
ck
echo "end ($((SECONDS - T0)) s)"
