#!/usr/bin/env bash
# Call 2 (2026-12-03, fourteenth session): the `short` variants fold both levels of the
# combine in one pass with two barriers (call 1's took four and were slower at 587 positions).
# Packages: n2 = the whole sm_90 library with it, o1 = HEAD's before the two-level combine
# (daf291d). Parity of n2's decode families on the H200 (the Q8_0 ones have `short` variants);
# the SmolLM2-shaped engine A/B, alternating, at ~219, ~587 and ~2013 positions (routes
# `short_r1`, `short_r1t640`, `r1`), and n2 with `r1` forced at ~587; the runtime's CUDA tests.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/call2; rm -rf $R; mkdir -p $R
ck() { tar czf $O/call2.tgz -C /tmp call2; }
K=./.carry/kiln
for p in n2 o1; do rm -rf /tmp/$p && mkdir -p /tmp/$p && tar xzf .carry/$p.tgz -C /tmp/$p; done
cp .carry/d2.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
F=attention_decode_q8_0_d128,attention_decode_q8_0_d64,attention_decode_rope_q8_0_d64_q8_1s,attention_decode_rope_q8_0_d128_q8_1s,attention_decode_f16_d64,attention_decode_f16_d128
timeout 150 $K parity --device cuda --package /tmp/n2/dist --kernel $F > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-150)"
ck
if [ -x .carry/rt-tests ]; then
  timeout 120 .carry/rt-tests --ignored cuda --test-threads 1 > $R/runtime-cuda-tests.log 2>&1
  echo "runtime cuda tests rc $?: $(grep -E '^test result' $R/runtime-cuda-tests.log | tail -n 1)"
  ck
fi
V=.carry/smol-vocab.gguf
( for q in q4_1 q8_0; do $K random-model --shape smollm2-135m --type $q --vocab-from $V -o /tmp/rs-$q.gguf; done ) > $R/models.log 2>&1
sha256sum /tmp/rs-*.gguf > $R/models.sha256
for n in 2 10 41; do for i in $(seq $n); do cat tools/engine/ref/generate.txt; done > /tmp/long-$n.txt; done
timeout 60 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/n2/dist --device cuda --prompt hi -n 4 > $R/warm.log 2>&1
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c1-112) | $(grep -h 'decode:' $2 | cut -c30-90) | $(grep -h ' attention_decode' $2 | head -n 1 | tr -s ' ' | cut -c1-80)"; }
run() { # name package model prompt-file
  timeout 60 $K generate --model /tmp/$3.gguf --package /tmp/$2/dist --device cuda --prompt-file $4 -n 128 --ctx 2304 --profile --json $R/prof-$1.json > $R/prof-$1.log 2>&1
  line "$1" $R/prof-$1.log
}
for i in 1 2; do for p in n2 o1; do
  for n in 2 10 41; do
    run q4_1-$p-long$n-$i $p rs-q4_1 /tmp/long-$n.txt
    run q8_0-$p-long$n-$i $p rs-q8_0 /tmp/long-$n.txt
  done
done; ck; done
export KILN_ROUTE_ATTENTION_DECODE_ROPE_Q8_0_D64_Q8_1S=r1
for i in 1 2; do
  run q4_1-n2r1-long10-$i n2 rs-q4_1 /tmp/long-10.txt
  run q8_0-n2r1-long10-$i n2 rs-q8_0 /tmp/long-10.txt
done
unset KILN_ROUTE_ATTENTION_DECODE_ROPE_Q8_0_D64_Q8_1S
for p in n2 o1; do
  timeout 60 $K generate --model /tmp/rs-q8_0.gguf --package /tmp/$p/dist --device cuda --oracle tools/engine/tests/data/oracle-q8_0.json --positions 16 > $R/digest-q8_0-$p.log 2>&1
  echo "digest q8_0 $p: $(grep -h 'digests' $R/digest-q8_0-$p.log | cut -c1-100)"
done
ck
