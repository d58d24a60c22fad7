#!/usr/bin/env bash
# Call 5 (2026-12-04, twenty-second session): is the exponent-bias convert worth its place in
# SmolLM2's step? `final` (bias + first-chunk loads) against `nobias` (the first-chunk loads on
# the session's starting tree: NVIDIA converts by cvt), Q4_1 and Q8_0 at ~173 and ~2013
# positions, in the order final, nobias, nobias, final.
# Run as `bash .carry/c5.sh` with .carry/{kiln,final.txz,nobias.txz,smol-vocab.gguf}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c5; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c5.tgz -C /tmp c5; }
K=$(pwd)/.carry/kiln
for p in final nobias; do rm -rf /tmp/$p; mkdir -p /tmp/$p; tar xf .carry/$p.txz -C /tmp/$p; done
V=.carry/smol-vocab.gguf
cp .carry/c5.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nproc; } > $R/env.log 2>&1
$K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf > $R/models.log 2>&1
$K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf >> $R/models.log 2>&1
for i in $(seq 41); do cat tools/engine/ref/generate.txt; done > /tmp/long41.txt
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c20-110)"; }
run() { local name=$1 m=$2 pf=$3 ctx=$4 p=$5
  timeout 40 $K generate --model /tmp/rs-$m.gguf --package /tmp/$p/dist --device cuda --prompt-file $pf -n 128 --ctx $ctx --profile --json $R/prof-$name.json > $R/prof-$name.log 2>&1
  line "$name" $R/prof-$name.log; ck; }
S=tools/engine/ref/generate.txt
for pos in short:$S:512 long:/tmp/long41.txt:2304; do
  IFS=: read tag pf ctx <<< "$pos"
  for pr in final-1 nobias-1 nobias-2 final-2; do p=${pr%-*}
    run q4-$tag-$pr q4_1 $pf $ctx $p
    run q8-$tag-$pr q8_0 $pf $ctx $p
  done
done
ck
