#!/usr/bin/env bash
# Call 4 (2026-12-02, ninth session): the same-call A/B that call 3 lacked: h = HEAD 28ac6e1
# (the batched fold), p1 and p2 as in call 3. SmolLM2-shaped Q4_1 decode at ~587 and ~2013
# positions, alternating packages, two rounds.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c4; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c4.tgz -C /tmp c4; }
K=./.carry/kiln
for p in h p1 p2; do rm -rf /tmp/$p && mkdir -p /tmp/$p && tar xzf .carry/$p.tgz -C /tmp/$p; done
cp .carry/c4.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
$K random-model --shape smollm2-135m --type q4_1 --vocab-from .carry/smol-vocab.gguf -o /tmp/rs-q4_1.gguf > $R/models.log 2>&1
sha256sum /tmp/rs-*.gguf > $R/models.sha256
for n in 10 41; do for i in $(seq $n); do cat tools/engine/ref/generate.txt; done > /tmp/long-$n.txt; done
for p in h p1 p2; do timeout 120 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/$p/dist --device cuda --prompt hi -n 4 > $R/warm-$p.log 2>&1; done
line() { echo "$1: $(grep -h 'replay on' $2 | cut -c30-110) | $(grep -h 'decode:' $2 | cut -c60-90) | $(grep -h ' attention_decode' $2 | head -1 | cut -c40-90)"; }
for i in 1 2; do for p in h p1 p2; do for n in 10 41; do
  timeout 60 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/$p/dist --device cuda --prompt-file /tmp/long-$n.txt -n 128 --ctx 2304 --profile --json $R/prof-q4_1-$p-long$n-$i.json > $R/prof-q4_1-$p-long$n-$i.log 2>&1
  line "q4_1-$p-long$n-$i" $R/prof-q4_1-$p-long$n-$i.log
done; done; done
ck
