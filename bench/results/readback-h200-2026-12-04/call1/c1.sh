#!/usr/bin/env bash
# Call 1 (2026-12-04, twenty-fourth session): where SmolLM2's step pays. `kiln generate
# --profile` (Q4_1 and Q8_0 random-weight models of SmolLM2's shape, ~173 / ~587 / ~2013
# positions) with the new lines: each kernel's cost inside the step (the step without its
# nodes) and the step replayed as decode replays it (`pos` moving; the token read back). Then
# the H200 parity of the committed Q8_0 decode-attention families (refused last session), and
# the long runs again with KILN_OVERLAP=0.
# Run as `bash .carry/c1.sh` with .carry/{kiln,head.txz,smol-vocab.gguf}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c1; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c1.tgz -C /tmp c1; }
K=$(pwd)/.carry/kiln
for p in head; do rm -rf /tmp/$p; mkdir -p /tmp/$p; tar xf .carry/$p.txz -C /tmp/$p; done
V=.carry/smol-vocab.gguf
cp .carry/c1.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nproc; } > $R/env.log 2>&1
$K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf > $R/models.log 2>&1
$K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf >> $R/models.log 2>&1
sha256sum /tmp/rs-*.gguf > $R/models.sha256
for i in $(seq 10); do cat tools/engine/ref/generate.txt; done > /tmp/long10.txt
for i in $(seq 41); do cat tools/engine/ref/generate.txt; done > /tmp/long41.txt
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c20-120) | $(grep -h 'as decode' $2 | cut -c30-140) | $(grep -h 'decode:' $2 | cut -c50-100)"; }
run() { local name=$1 m=$2 pf=$3 ctx=$4 p=$5; shift 5
  env "$@" timeout 90 $K generate --model /tmp/rs-$m.gguf --package /tmp/$p/dist --device cuda --prompt-file $pf -n 128 --ctx $ctx --profile --json $R/prof-$name.json > $R/prof-$name.log 2>&1
  line "$name" $R/prof-$name.log; ck; }
S=tools/engine/ref/generate.txt
for pos in long:/tmp/long41.txt:2304 short:$S:512 mid:/tmp/long10.txt:1024; do
  IFS=: read tag pf ctx <<< "$pos"
  run q4-$tag q4_1 $pf $ctx head X=1
  run q8-$tag q8_0 $pf $ctx head X=1
done
for f in q4-long q8-long q4-short; do echo "== $f"; grep -A40 "in the step" $R/prof-$f.log | cut -c1-110; done
F=attention_decode_q8_0_d64,attention_decode_q8_0_d128,attention_decode_rope_q8_0_d64_q8_1s,attention_decode_rope_q8_0_d128_q8_1s
timeout 200 $K parity --device cuda --package /tmp/head/dist --kernel $F > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-120)"; grep -E "^FAIL" $R/parity.log | head -3
ck
run q4-long-nooverlap q4_1 /tmp/long41.txt 2304 head KILN_OVERLAP=0
run q8-long-nooverlap q8_0 /tmp/long41.txt 2304 head KILN_OVERLAP=0
run q4-long-2 q4_1 /tmp/long41.txt 2304 head X=1
ck
