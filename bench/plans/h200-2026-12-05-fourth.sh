#!/usr/bin/env bash
# The fourth device call of the thirty-second session (2026-12-05): `kiln tune` of
# attention_decode_q8_0_d128 with the split-across-waves knob `x` (candidates built here by
# `kiln tune --build-only --arch sm_90 --kernel attention_decode_q8_0_d128,attention_decode_q8_0_d64
# --candidates tuneA`, carried as .cxa/tuneA.txz), the buckets of 1 and 2-5 rows; then the
# SmolLM2-shaped decode steps with the attention node forced to `r1x` against the routed variant
# at ~587 and ~1094 positions; then parity on cuda of the head-dim-64 families the first call did
# not reach. Carry: .cxa as in the first call.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cD; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cD.tgz -C /tmp cD; }
T0=$SECONDS; B=${BUDGET:-575}
left() { echo $((B - (SECONDS - T0))); }
lim() { local l; l=$(left); [ $l -gt $1 ] && echo $1 || echo $((l > 5 ? l : 5)); }
K=$(pwd)/.carry/kiln
rm -rf /tmp/pD; mkdir -p /tmp/pD; tar xJf .carry/lib.txz -C /tmp/pD
P=/tmp/pD/dist; V=.carry/smol-vocab.gguf
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
( for m in q4_1 q8_0; do
  [ -f /tmp/rs-$m.gguf ] || $K random-model --shape smollm2-135m --type $m --vocab-from $V -o /tmp/rs-$m.gguf
  done; sha256sum /tmp/rs-q4_1.gguf /tmp/rs-q8_0.gguf ) > $R/models.log 2>&1 &
MPID=$!
rm -rf /tmp/tuneA; tar xJf .carry/tuneA.txz -C /tmp
cp specs/tuning/sm_90.ron $R/sm_90.ron
timeout $(lim 270) $K tune --device cuda --kernel attention_decode_q8_0_d128 --shapes t1_short,t1_long,t2_5_short,t2_5_long \
  --candidates /tmp/tuneA --out $R/sm_90.ron --budget-s 230 > $R/tune.log 2>&1
echo "tune rc $? ($((SECONDS - T0)) s)"; tail -n 30 $R/tune.log | cut -c1-200
cp /tmp/tuneA/tune-progress.jsonl $R/ 2>/dev/null; ck
wait $MPID
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c20-140) | $(grep -h 'attention_decode' $2 | head -1 | cut -c1-90) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
run() { local name=$1 m=$2 pf=$3 ctx=$4; shift 4
  [ $(left) -gt 40 ] || { echo "$name skipped: $(left) s left"; return; }
  env "$@" timeout 40 $K generate --model /tmp/$m.gguf --package $P --device cuda --prompt-file $pf -n 128 --ctx $ctx --profile --json $R/prof-$name.json > $R/prof-$name.log 2>&1
  line "$name" $R/prof-$name.log; ck; }
for i in $(seq 10); do cat tools/engine/ref/generate.txt; done > /tmp/long10.txt
for i in $(seq 21); do cat tools/engine/ref/generate.txt; done > /tmp/long21.txt
A=KILN_ROUTE_ATTENTION_DECODE_ROPE_Q8_0_D64_Q8_1S
for m in q4_1 q8_0; do
  run $m-p1094 rs-$m /tmp/long21.txt 1280 X=1
  run $m-p1094-r1x rs-$m /tmp/long21.txt 1280 $A=r1x
  run $m-p587-r1x rs-$m /tmp/long10.txt 1024 $A=r1x
done
timeout $(lim 200) $K parity --device cuda --package $P --kernel attention_decode_rope_q8_0_d64_q8_1s,attention_decode_q8_0_d64 > $R/parity-d64.log 2>&1
echo "parity d64 rc $? ($((SECONDS - T0)) s): $(tail -n 1 $R/parity-d64.log | cut -c1-120)"; grep -E "^FAIL" $R/parity-d64.log | head -3
grep "^ok" $R/parity-d64.log | awk '{print $2}' | sort | uniq -c | tr '\n' ' ' | cut -c1-900; echo
echo "end ($((SECONDS - T0)) s)"; ck
