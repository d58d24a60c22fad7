#!/usr/bin/env bash
# Call 3 (2026-12-04, twenty-fourth session): the step's tokens copied by the graph's last node
# (`copy_at_i32`) into a host-mapped history the host reads in place (`hist`), against the
# copy queued after each step (`head`, the tree at the session's start with the new profile
# lines). The runtime's cuda tests (the in-place reader among them), parity of copy_at_i32 on
# cuda, SmolLM2-shaped steps (Q4_1, Q8_0; ~173 / ~2013 positions, A/B/B/A; ~587 hist) and the
# logit digests (unchanged logits).
# Run as `bash .carry/c3.sh` with .carry/{kiln,rt-tests,head.txz,hist.txz,smol-vocab.gguf}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c3; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c3.tgz -C /tmp c3; }
K=$(pwd)/.carry/kiln
for p in head hist; do rm -rf /tmp/$p; mkdir -p /tmp/$p; tar xf .carry/$p.txz -C /tmp/$p; done
V=.carry/smol-vocab.gguf
cp .carry/c3.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nproc; } > $R/env.log 2>&1
( $K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf
  $K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf ) > $R/models.log 2>&1 &
MPID=$!
timeout 150 .carry/rt-tests --ignored cuda:: --test-threads 1 > $R/rt-tests.log 2>&1
echo "rt-tests rc $?: $(grep 'test result' $R/rt-tests.log)"; grep -E "FAILED|panicked" $R/rt-tests.log | head -5
timeout 60 $K parity --device cuda --package /tmp/hist/dist --kernel copy_at_i32 > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-120)"; grep -E "^FAIL" $R/parity.log | head -3
ck
wait $MPID; sha256sum /tmp/rs-*.gguf > $R/models.sha256
for i in $(seq 10); do cat tools/engine/ref/generate.txt; done > /tmp/long10.txt
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
run q4-mid-hist q4_1 /tmp/long10.txt 1024 hist
run q8-mid-hist q8_0 /tmp/long10.txt 1024 hist
for m in q4_1 q8_0; do for p in hist head; do
  timeout 40 $K generate --model /tmp/rs-$m.gguf --package /tmp/$p/dist --device cuda --oracle tools/engine/tests/data/oracle-$m.json --positions 16 > $R/digest-$m-$p.log 2>&1
  echo "digest $m $p: $(grep -h 'digest' $R/digest-$m-$p.log | cut -c1-100)"
done; done
grep -A10 "in the step" $R/prof-q4-long-hist.log | cut -c1-110
ck
