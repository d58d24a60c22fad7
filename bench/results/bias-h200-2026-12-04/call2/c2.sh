#!/usr/bin/env bash
# Call 2 (2026-12-04, twenty-second session): the decode attention's first chunk (K staging
# loads, and V rows where they are preloaded) asked for before q's loads, so the two latencies
# overlap (`first`), against the package of call 1 (`after`: the exponent-bias converts).
# Parity on cuda of the six f32-order families, then the Q8_0 and f16 d128 cases (A/B/B/A),
# then SmolLM2-shaped steps (Q4_1 and Q8_0, ~173 / ~587 / ~2013 positions) with both packages.
# Run as `bash .carry/c2.sh` with .carry/{kiln,after.txz,first.txz,smol-vocab.gguf}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c2; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c2.tgz -C /tmp c2; }
K=$(pwd)/.carry/kiln
for p in after first; do rm -rf /tmp/$p; mkdir -p /tmp/$p; tar xf .carry/$p.txz -C /tmp/$p; done
V=.carry/smol-vocab.gguf
cp .carry/c2.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nproc; } > $R/env.log 2>&1
( $K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf
  $K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf ) > $R/models.log 2>&1 &
MPID=$!
F=attention_decode_q8_0_d64,attention_decode_q8_0_d128,attention_decode_rope_q8_0_d64_q8_1s,attention_decode_rope_q8_0_d128_q8_1s,attention_decode_f16_d64,attention_decode_f16_d128
timeout 240 $K parity --device cuda --package /tmp/first/dist --kernel $F > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-120)"; grep -E "^FAIL" $R/parity.log | head -3
ck
A=attn_q8_0_ctx4k_t1,attn_q8_0_ctx4k_t4,attn_q8_0_ctx4k_t8,attn_q8_0_ctx32k_t1,attn_q8_0_ctx32k_t4,attn_q8_0_ctx32k_t8,attn_f16_ctx4k_t1,attn_f16_ctx4k_t4,attn_f16_ctx4k_t8,attn_f16_ctx32k_t1,attn_f16_ctx32k_t4,attn_f16_ctx32k_t8
VA=r1,r4,r4t256,r8,tuned_t2_5_long,tuned_t2_5_short,tuned_t6_8_short
ab() { for run in "$@"; do p=${run%-*}
  timeout 120 $K bench --package /tmp/$p/dist --kernel $A --variant $VA --replays 10 --json $R/bench-$run.json > $R/bench-$run.log 2>&1
  echo "bench $run rc $?"; grep -E "^attn" $R/bench-$run.log | sort -u | cut -c1-150; ck
done; }
ab after-a first-a
wait $MPID
for i in $(seq 10); do cat tools/engine/ref/generate.txt; done > /tmp/long10.txt
for i in $(seq 41); do cat tools/engine/ref/generate.txt; done > /tmp/long41.txt
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c20-110) | $(grep -h 'decode:' $2 | cut -c50-100)"; }
run() { local name=$1 m=$2 pf=$3 ctx=$4 p=$5
  timeout 60 $K generate --model /tmp/rs-$m.gguf --package /tmp/$p/dist --device cuda --prompt-file $pf -n 128 --ctx $ctx --profile --json $R/prof-$name.json > $R/prof-$name.log 2>&1
  line "$name" $R/prof-$name.log; ck; }
S=tools/engine/ref/generate.txt
for pos in short:$S:512 mid:/tmp/long10.txt:1024 long:/tmp/long41.txt:2304; do
  IFS=: read tag pf ctx <<< "$pos"
  for p in after first; do
    run q4-$tag-$p q4_1 $pf $ctx $p
    run q8-$tag-$p q8_0 $pf $ctx $p
  done
done
for f in q4-short-first q4-mid-first q4-long-first; do echo "== $f"; grep -A4 "kernel  " $R/prof-$f.log | grep attention | cut -c1-110; done
for m in q4_1 q8_0; do
  timeout 40 $K generate --model /tmp/rs-$m.gguf --package /tmp/first/dist --device cuda --oracle tools/engine/tests/data/oracle-$m.json --positions 16 > $R/digest-$m.log 2>&1
  echo "digest $m: $(grep -h 'digest' $R/digest-$m.log | cut -c1-100)"
done
ck
ab first-b after-b
