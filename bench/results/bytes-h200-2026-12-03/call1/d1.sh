#!/usr/bin/env bash
# Call 1 (2026-12-03, thirteenth session): bytes turned into f32 through their bits on NVIDIA
# (no I2F: `Isa::bytes_to_f32_by_bits`), and the prompt attention's lazy rescale (`w4gl`,
# `w4qsl`). Package n = the whole sm_90 library with the change; o = HEAD's decode and prefill
# Q8_0 head-dim-128 families. Parity of n (every family: the lowering changed for all), then the
# decode attention (n against o, twice, alternating), the prompt attention's wide variants,
# torch SDPA for both, and llama.cpp's FLASH_ATTN_EXT (built in the background).
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/call1; rm -rf $R; mkdir -p $R
ck() { tar czf $O/call1.tgz -C /tmp call1; }
K=./.carry/kiln
for p in n o; do rm -rf /tmp/$p && mkdir -p /tmp/$p && tar xzf .carry/$p.tgz -C /tmp/$p; done
cp .carry/d1.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
( STEPS=none OUT=$R/llama-build nice -n 10 bash .peers/llamacpp/run.sh ) > $R/llama-build.log 2>&1 &
BPID=$!
timeout 260 $K parity --device cuda --package /tmp/n/dist > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-160)"
ck
for i in 1 2; do for p in n o; do
  timeout 60 $K bench --package /tmp/$p/dist --kernel attention_decode_q8_0_d128 --variant r4t256,r8 --replays 10 --bandwidth-bytes 536870912 --json $R/dec-$p-$i.json > $R/dec-$p-$i.log 2>&1
  echo "dec $p $i rc $?:"; grep -E "^attn" $R/dec-$p-$i.log | cut -c1-120
done; done
ck
for i in 1; do
  timeout 80 $K bench --package /tmp/n/dist --kernel attention_prefill_f16_d128,attention_prefill_q8_0_d128 --variant w4g,w4gl,w4qs,w4qsl --json $R/pre-n-$i.json > $R/pre-n-$i.log 2>&1
  echo "pre n $i rc $?"; grep -E "^prefill_(f16|q8_0)_l" $R/pre-n-$i.log | sort -u | cut -c1-130
  timeout 40 $K bench --package /tmp/o/dist --kernel attention_prefill_q8_0_d128 --variant w4qs --json $R/pre-o-$i.json > $R/pre-o-$i.log 2>&1
  echo "pre o $i rc $?"; grep -E "^prefill_(f16|q8_0)_l" $R/pre-o-$i.log | sort -u | cut -c1-130
  ck
done
timeout 60 python3 bench/prefill_peers.py $R/sdpa-prefill.json > $R/sdpa-prefill.log 2>&1; tail -n 3 $R/sdpa-prefill.log
timeout 60 python3 bench/attention_peers.py $R/sdpa-decode.json > $R/sdpa-decode.log 2>&1; echo "sdpa decode rc $?"; cut -c1-120 $R/sdpa-decode.log | tail -8
ck
wait $BPID
( STEPS=peer OUT=$R/llama DEADLINE=100 bash .peers/llamacpp/run.sh ) > $R/llama-peer.log 2>&1
grep -iE 'FLASH' $R/llama/peer.txt | cut -c1-160 | head -16
ck
