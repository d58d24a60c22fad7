#!/usr/bin/env bash
# Call 4 (2026-12-04, twenty-fourth session): call 3's history (`hist` package) with the
# host-mapped history allocated after every device buffer of the step (call 3 allocated it
# between `tokens` and the caches, and every leave-out graph of that step, the copy node's
# too, was 3-8 us slower than the step without the history), against `head` (a copy queued
# after each step), A/B/B/A, ~2013 and ~173 positions; the logit digests.
# Run as `bash .carry/c4.sh` with .carry/{kiln,head.txz,hist.txz,smol-vocab.gguf}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c4; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c4.tgz -C /tmp c4; }
K=$(pwd)/.carry/kiln
for p in head hist; do rm -rf /tmp/$p; mkdir -p /tmp/$p; tar xf .carry/$p.txz -C /tmp/$p; done
V=.carry/smol-vocab.gguf
cp .carry/c4.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nproc; } > $R/env.log 2>&1
$K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf > $R/models.log 2>&1
$K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf >> $R/models.log 2>&1
sha256sum /tmp/rs-*.gguf > $R/models.sha256
for i in $(seq 41); do cat tools/engine/ref/generate.txt; done > /tmp/long41.txt
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c20-40) | $(grep -h 'graph replay' $2 | sed 's/.*device //' | cut -c1-10) | $(grep -h 'as decode' $2 | cut -c30-140) | $(grep -h 'decode:' $2 | sed 's/.*decode: //')"; }
run() { local name=$1 m=$2 pf=$3 ctx=$4 p=$5
  timeout 90 $K generate --model /tmp/rs-$m.gguf --package /tmp/$p/dist --device cuda --prompt-file $pf -n 128 --ctx $ctx --profile --json $R/prof-$name.json > $R/prof-$name.log 2>&1
  line "$name" $R/prof-$name.log; ck; }
S=tools/engine/ref/generate.txt
for pos in long:/tmp/long41.txt:2304 short:$S:512; do
  IFS=: read tag pf ctx <<< "$pos"
  for p in hist head; do run q4-$tag-$p q4_1 $pf $ctx $p; run q8-$tag-$p q8_0 $pf $ctx $p; done
  for p in head hist; do run q4-$tag-$p-2 q4_1 $pf $ctx $p; run q8-$tag-$p-2 q8_0 $pf $ctx $p; done
done
for m in q4_1 q8_0; do
  timeout 40 $K generate --model /tmp/rs-$m.gguf --package /tmp/hist/dist --device cuda --oracle tools/engine/tests/data/oracle-$m.json --positions 16 > $R/digest-$m-hist.log 2>&1
  echo "digest $m hist: $(grep -h 'digest' $R/digest-$m-hist.log | cut -c1-100)"
done
for f in q4-long-hist q8-long-hist; do echo "== $f"; grep -A11 "in the step" $R/prof-$f.log | tail -10 | cut -c1-100; done
ck
