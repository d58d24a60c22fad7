#!/usr/bin/env bash
# Call 5 (2026-12-03, eighteenth session): SmolLM2-shaped decode at ~587 and ~2013 positions with
# the final package (`fin`, call 4), as bench/results/engine-h200-2026-12-02b.md measured them:
# the engine's generate prompt repeated 10 and 41 times, 128 tokens decoded, --ctx 2304.
# Run as `bash .carry/c5.sh` with .carry/{kiln,fin.tgz,smol-vocab.gguf}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c5; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c5.tgz -C /tmp c5; }
K=$(pwd)/.carry/kiln
[ -d /tmp/fin/dist ] || { mkdir -p /tmp/fin; tar xzf .carry/fin.tgz -C /tmp/fin; }
N=/tmp/fin/dist
V=.carry/smol-vocab.gguf
cp .carry/c5.sh $R/
for m in q4_1 q8_0; do [ -f /tmp/rs-$m.gguf ] || $K random-model --shape smollm2-135m --type $m --vocab-from $V -o /tmp/rs-$m.gguf > $R/models.log 2>&1; done
sha256sum /tmp/rs-q4_1.gguf /tmp/rs-q8_0.gguf > $R/models.sha256 2>&1
for n in 10 41; do for i in $(seq $n); do cat tools/engine/ref/generate.txt; done > /tmp/prompt_$n.txt; done
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c1-150) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
for n in 10 41; do for m in q4_1 q8_0; do
  timeout 60 $K generate --model /tmp/rs-$m.gguf --package $N --device cuda --prompt-file /tmp/prompt_$n.txt -n 128 --ctx 2304 --profile --json $R/ctx-$m-$n.json > $R/ctx-$m-$n.log 2>&1
  line "rs-$m x$n" $R/ctx-$m-$n.log
done; ck; done
