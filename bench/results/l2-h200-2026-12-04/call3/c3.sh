#!/usr/bin/env bash
# Call 3 (2026-12-04, twenty-fifth session): code placement and the L2 at both positions.
# The same runtime-only kiln as call 2, two sm_90 packages: `hist` (the whole library, as in
# the twenty-fourth session's calls) and `small` (only the 14 families the SmolLM2 engine
# calls: the same objects byte for byte, a sixth of the modules). kiln generate --profile on
# the SmolLM2-shaped random models at ~2013 and ~173 positions, `--l2 off` and `keep`.
# Run as `bash .carry/c3.sh` with .carry/{kiln,hist.txz,small.txz,smol-vocab.gguf}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c3; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c3.tgz -C /tmp c3; }
K=$(pwd)/.carry/kiln
for p in hist small; do rm -rf /tmp/$p; mkdir -p /tmp/$p; tar xf .carry/$p.txz -C /tmp/$p; done
V=.carry/smol-vocab.gguf
cp .carry/c3.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nproc; } > $R/env.log 2>&1
$K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf > $R/models.log 2>&1
$K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf >> $R/models.log 2>&1
sha256sum /tmp/rs-*.gguf > $R/models.sha256
ck
for i in $(seq 41); do cat tools/engine/ref/generate.txt; done > /tmp/long41.txt
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c20-40) | replay $(grep -h 'graph replay' $2 | sed 's/.*device //' | cut -c1-10) | $(grep -h 'decode:' $2 | sed 's/.*decode: //')"; }
run() { local name=$1 p=$2 m=$3 pf=$4 ctx=$5; shift 5
  timeout 90 $K generate --model /tmp/rs-$m.gguf --package /tmp/$p/dist --device cuda --prompt-file $pf -n 128 --ctx $ctx --profile --json $R/prof-$name.json "$@" > $R/prof-$name.log 2>&1
  line "$name" $R/prof-$name.log; ck; }
S=tools/engine/ref/generate.txt
L=/tmp/long41.txt
# Warm the JIT cache for both packages first (the first load of a package compiles its PTX).
run warm-hist hist q4_1 $S 512
run warm-small small q4_1 $S 512
run q4-long-hist-off hist q4_1 $L 2304 --l2 off
run q4-long-small-off small q4_1 $L 2304 --l2 off
run q4-long-hist-keep hist q4_1 $L 2304 --l2 keep
run q4-long-small-keep small q4_1 $L 2304 --l2 keep
run q4-long-small-off2 small q4_1 $L 2304 --l2 off
run q8-long-hist-off hist q8_0 $L 2304 --l2 off
run q8-long-small-off small q8_0 $L 2304 --l2 off
run q8-long-hist-keep hist q8_0 $L 2304 --l2 keep
run q8-long-small-keep small q8_0 $L 2304 --l2 keep
run q4-short-hist-off hist q4_1 $S 512 --l2 off
run q4-short-hist-keep hist q4_1 $S 512 --l2 keep
run q8-short-hist-off hist q8_0 $S 512 --l2 off
run q8-short-hist-keep hist q8_0 $S 512 --l2 keep
ck
