#!/usr/bin/env bash
# Call 2 (2026-12-02, ninth session): the batched combine kept for one pass only (r1, short_r1
# and the short variants' row-by-row fallback; more passes run the unrolled loop as before,
# since two passes batched made r4t256 ~19 us slower in call 1). Packages, same kiln: b = HEAD
# f565a14, a = 32 state loads a trip, a3 = 64. SmolLM2-shaped decode at ~173 / ~587 / ~2013
# positions, the attention bench cases with a, parity of the head-dim-64 families on cuda.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c2; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c2.tgz -C /tmp c2; }
K=./.carry/kiln
for p in a a3 b; do rm -rf /tmp/$p && mkdir -p /tmp/$p && tar xzf .carry/$p.tgz -C /tmp/$p; done
V=.carry/smol-vocab.gguf
cp .carry/c2.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
( for q in q4_1 q8_0; do $K random-model --shape smollm2-135m --type $q --vocab-from $V -o /tmp/rs-$q.gguf; done ) > $R/models.log 2>&1
sha256sum /tmp/rs-*.gguf > $R/models.sha256
for n in 10 41; do for i in $(seq $n); do cat tools/engine/ref/generate.txt; done > /tmp/long-$n.txt; done
for p in a a3 b; do timeout 120 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/$p/dist --device cuda --prompt hi -n 4 > $R/warm-$p.log 2>&1; done
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c1-112) | $(grep -h 'decode:' $2 | cut -c30-90) | $(grep -h ' attention_decode' $2 | head -1 | cut -c1-90)"; }
run() { # name package model prompt-file
  timeout 90 $K generate --model /tmp/$3.gguf --package /tmp/$2/dist --device cuda --prompt-file $4 -n 128 --ctx 2304 --profile --json $R/prof-$1.json > $R/prof-$1.log 2>&1
  line "$1" $R/prof-$1.log
}
for i in 1 2; do for p in a a3 b; do
  run q4_1-$p-long10-$i $p rs-q4_1 /tmp/long-10.txt
  run q4_1-$p-long41-$i $p rs-q4_1 /tmp/long-41.txt
done; done
for p in a b; do
  run q4_1-$p-short $p rs-q4_1 tools/engine/ref/generate.txt
  run q8_0-$p-short $p rs-q8_0 tools/engine/ref/generate.txt
  run q8_0-$p-long10 $p rs-q8_0 /tmp/long-10.txt
  run q8_0-$p-long41 $p rs-q8_0 /tmp/long-41.txt
done
ck
for q in q4_1 q8_0; do
  timeout 60 $K generate --model /tmp/rs-$q.gguf --package /tmp/a/dist --device cuda --oracle tools/engine/tests/data/oracle-$q.json --positions 16 > $R/digest-$q-a.log 2>&1
  echo "digest $q a: $(grep -h 'digests' $R/digest-$q-a.log | cut -c1-100)"
done
timeout 100 $K bench --package /tmp/a/dist --kernel attention_decode_q8_0_d128 --variant r4t256,r8,r1 --json $R/bench-attn-a.json > $R/bench-attn-a.log 2>&1
echo "bench a:"; grep -E "^attn" $R/bench-attn-a.log | sort -u | cut -c1-150
ck
F=attention_decode_rope_q8_0_d64_q8_1s,attention_decode_q8_0_d64,attention_decode_f16_d64
timeout 280 $K parity --device cuda --package /tmp/a/dist --kernel $F > $R/parity.log 2>&1
echo "parity rc $?: $(grep -h '^time' $R/parity.log | cut -c1-80 | tr '\n' ';') $(tail -n 1 $R/parity.log | cut -c1-120)"
ck
