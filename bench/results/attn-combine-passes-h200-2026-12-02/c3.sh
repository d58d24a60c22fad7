#!/usr/bin/env bash
# Call 3 (2026-12-02, tenth session): decode attention's combine folding the splits in batches
# of 32 pass by pass in every `rR` variant (r4, r8, r4t64, r4t256 at head dim 128; before, only
# variants with one pass a lane did, the others an unrolled loop whose remainder splits wait a
# round trip each). A/B of two sm_90 packages with the same kiln: b = HEAD, a = the change.
# Parity of the changed families on cuda, the bench cases twice each in alternation, torch SDPA
# and llama.cpp's FLASH_ATTN_EXT (peer-bench, built in the same call) on the same shapes.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c3; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c3.tgz -C /tmp c3; }
K=./.carry/kiln
for p in a b; do rm -rf /tmp/$p && mkdir -p /tmp/$p && tar xzf .carry/$p.tgz -C /tmp/$p; done
cp .carry/c3.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
( STEPS=none OUT=$R/llama-build nice -n 10 bash .peers/llamacpp/run.sh ) > $R/llama-build.log 2>&1 &
BPID=$!
F=attention_decode_q8_0_d128,attention_decode_f16_d128,attention_decode_q8_0_d64,attention_decode_f16_d64,attention_decode_rope_q8_0_d128_q8_1s
timeout 240 $K parity --device cuda --package /tmp/a/dist --kernel $F > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log)"; grep -h "^time" $R/parity.log | cut -c1-90
ck
wait $BPID
( STEPS=peer OUT=$R/llama DEADLINE=200 bash .peers/llamacpp/run.sh ) > $R/llama-peer.log 2>&1
grep -iE 'FLASH' $R/llama/peer.txt | cut -c1-160 | head -16
timeout 120 python3 bench/attention_peers.py $R/sdpa.json > $R/sdpa.log 2>&1; echo "sdpa rc $?"; cut -c1-120 $R/sdpa.log | tail -8
ck
for i in 1 2; do for p in a b; do
  timeout 100 $K bench --package /tmp/$p/dist --kernel attention_decode_q8_0_d128,attention_decode_f16_d128 --variant r4t256,r4,r8,r1 --replays 10 --bandwidth-bytes 536870912 --json $R/bench-$p-$i.json > $R/bench-$p-$i.log 2>&1
  echo "bench $p $i:"; grep -E "^attn" $R/bench-$p-$i.log | cut -c1-150
done; done
ck
