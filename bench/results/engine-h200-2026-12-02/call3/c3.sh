#!/usr/bin/env bash
# Call 3 (2026-12-02, eighth session): decode attention's `mid_r1` (head dim 64, one row a
# workgroup of 512 lanes, up to four splits a wave, states in LDS; routed for T <= 2 up to 2046
# positions) against `r1` at ~590 and ~2010 positions on SmolLM2's shape: package a (with it)
# and b (call 2's, without), then parity of the fused head-dim-64 family on cuda.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c3; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c3.tgz -C /tmp c3; }
K=./.carry/kiln
for p in a b; do rm -rf /tmp/$p && mkdir -p /tmp/$p && tar xzf .carry/$p.tgz -C /tmp/$p; done
V=.carry/smol-vocab.gguf
cp .carry/c3.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
for q in q4_1 q8_0; do $K random-model --shape smollm2-135m --type $q --vocab-from $V -o /tmp/rs-$q.gguf; done > $R/models.log 2>&1
sha256sum /tmp/rs-*.gguf > $R/models.sha256
for p in a b; do timeout 120 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/$p/dist --device cuda --prompt hi -n 4 > $R/warm-$p.log 2>&1; done
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c1-112) | $(grep -h 'decode:' $2 | cut -c30-90) | $(grep -h ' attention_' $2 | cut -c1-90)"; }
for n in 10 41; do for i in $(seq $n); do cat tools/engine/ref/generate.txt; done > /tmp/long-$n.txt; done
for n in 41 10; do for m in rs-q4_1 rs-q8_0; do for p in a b; do
  timeout 60 $K generate --model /tmp/$m.gguf --package /tmp/$p/dist --device cuda --prompt-file /tmp/long-$n.txt -n 128 --profile --json $R/prof-$m-$p-long$n.json > $R/prof-$m-$p-long$n.log 2>&1
  line "$m $p prompt x$n" $R/prof-$m-$p-long$n.log
done; done; ck; done
timeout 150 $K parity --device cuda --package /tmp/a/dist --kernel attention_decode_rope_q8_0_d64_q8_1s > $R/parity.log 2>&1
echo "parity rc $?: $(grep -c '^ok.*mid_r1' $R/parity.log) mid_r1 ok; $(grep -h '^time' $R/parity.log | cut -c1-90) $(tail -n 1 $R/parity.log | cut -c1-90)"
ck
