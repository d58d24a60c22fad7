#!/usr/bin/env bash
# Call 1 (2026-12-03, fourteenth session): decode attention with the two-level combine (each
# workgroup folds its group of 4 splits in LDS, the last workgroup folds the groups). Packages:
# n1 = the whole sm_90 library with the change, o1 = HEAD's before it (daf291d). Parity of n1's
# decode families on the H200; the decode bench A/B twice, alternating; torch SDPA on the same
# shapes; the SmolLM2-shaped engine at ~2013 and ~587 positions, A/B; the oracle check.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/call1; rm -rf $R; mkdir -p $R
ck() { tar czf $O/call1.tgz -C /tmp call1; }
K=./.carry/kiln
for p in n1 o1; do rm -rf /tmp/$p && mkdir -p /tmp/$p && tar xzf .carry/$p.tgz -C /tmp/$p; done
cp .carry/d1.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
F=attention_decode_q8_0_d128,attention_decode_f16_d128,attention_decode_q8_0_d64,attention_decode_f16_d64,attention_decode_rope_q8_0_d64_q8_1s,attention_decode_rope_q8_0_d128_q8_1s,attention_decode_q8_0_i8_d128
timeout 200 $K parity --device cuda --package /tmp/n1/dist --kernel $F > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-150)"
ck
for i in 1 2; do for p in n1 o1; do
  timeout 80 $K bench --package /tmp/$p/dist --kernel attention_decode_q8_0_d128,attention_decode_f16_d128 --variant r4t256,r4,r8 --replays 10 --bandwidth-bytes 536870912 --json $R/dec-$p-$i.json > $R/dec-$p-$i.log 2>&1
  echo "dec $p $i rc $?:"; grep -E "^attn" $R/dec-$p-$i.log | sort -u | cut -c1-125
done; ck; done
timeout 120 python3 bench/attention_peers.py $R/sdpa.json > $R/sdpa.log 2>&1
echo "sdpa rc $?: $(tail -n 8 $R/sdpa.log | tr '\n' ' ' | cut -c1-400)"
ck
V=.carry/smol-vocab.gguf
( for q in q4_1 q8_0; do $K random-model --shape smollm2-135m --type $q --vocab-from $V -o /tmp/rs-$q.gguf; done ) > $R/models.log 2>&1
sha256sum /tmp/rs-*.gguf > $R/models.sha256
for n in 10 41; do for i in $(seq $n); do cat tools/engine/ref/generate.txt; done > /tmp/long-$n.txt; done
timeout 60 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/n1/dist --device cuda --prompt hi -n 4 > $R/warm.log 2>&1
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c1-112) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
run() { # name package model prompt-file
  timeout 60 $K generate --model /tmp/$3.gguf --package /tmp/$2/dist --device cuda --prompt-file $4 -n 128 --ctx 2304 --profile --json $R/prof-$1.json > $R/prof-$1.log 2>&1
  line "$1" $R/prof-$1.log
}
for i in 1 2; do for p in n1 o1; do
  run q4_1-$p-long41-$i $p rs-q4_1 /tmp/long-41.txt
  run q8_0-$p-long41-$i $p rs-q8_0 /tmp/long-41.txt
done; ck; done
for p in n1 o1; do run q4_1-$p-long10 $p rs-q4_1 /tmp/long-10.txt; done
for p in n1 o1; do
  timeout 60 $K generate --model /tmp/rs-q8_0.gguf --package /tmp/$p/dist --device cuda --oracle tools/engine/tests/data/oracle-q8_0.json --positions 16 > $R/digest-q8_0-$p.log 2>&1
  echo "digest q8_0 $p: $(grep -h 'digests' $R/digest-q8_0-$p.log | cut -c1-100)"
done
ck
