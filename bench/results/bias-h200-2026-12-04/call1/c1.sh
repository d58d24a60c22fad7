#!/usr/bin/env bash
# Call 1 (2026-12-04, twenty-second session): 8- and 16-bit integers to f32 by the exponent
# bias on NVIDIA (no cvt.rn.f32.s32: 16 a clock an SM on sm_90) in the Q8_0 attention families
# and get_rows_q8_0. Parity on cuda (the op checks, with the new convert check, and every family
# whose PTX changed), then the Q8_0 d128 attention cases for the package before (`before`) and
# after (`after`), two runs in opposite orders, torch SDPA in the same call; then SmolLM2-shaped
# steps (Q4_1 and Q8_0, ~173 / ~587 / ~2013 positions) with both packages.
# Run as `bash .carry/c1.sh` with .carry/{kiln,before.tgz,after.tgz,checks.tgz,smol-vocab.gguf}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c1; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c1.tgz -C /tmp c1; }
K=$(pwd)/.carry/kiln
for p in before after checks; do rm -rf /tmp/$p; mkdir -p /tmp/$p; tar xf .carry/$p.t*z -C /tmp/$p; done
V=.carry/smol-vocab.gguf
cp .carry/c1.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nproc; } > $R/env.log 2>&1
( $K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf
  $K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf ) > $R/models.log 2>&1 &
MPID=$!
timeout 60 $K parity --device cuda --package /tmp/checks/dist > $R/parity-checks.log 2>&1
echo "parity checks rc $?: $(tail -n 1 $R/parity-checks.log | cut -c1-120)"; grep -E "^FAIL" $R/parity-checks.log | head -3
F=attention_decode_q8_0_d64,attention_decode_q8_0_d128,attention_decode_rope_q8_0_d64_q8_1s,attention_decode_rope_q8_0_d128_q8_1s,get_rows_q8_0
timeout 200 $K parity --device cuda --package /tmp/after/dist --kernel $F > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-120)"; grep -E "^FAIL" $R/parity.log | head -3
ck
A=attn_q8_0_ctx4k_t1,attn_q8_0_ctx4k_t4,attn_q8_0_ctx4k_t8,attn_q8_0_ctx32k_t1,attn_q8_0_ctx32k_t4,attn_q8_0_ctx32k_t8
VA=r1,r4,r4t256,r8,r8a,tuned_t2_5_long,tuned_t2_5_short
for run in before-a after-a; do p=${run%-*}
  timeout 120 $K bench --package /tmp/$p/dist --kernel $A --variant $VA --replays 10 --json $R/bench-$run.json > $R/bench-$run.log 2>&1
  echo "bench $run rc $?"; grep -E "^attn" $R/bench-$run.log | sort -u | cut -c1-160; ck
done
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
  for p in before after; do
    run q4-$tag-$p q4_1 $pf $ctx $p
    run q8-$tag-$p q8_0 $pf $ctx $p
  done
done
for run in after-b before-b; do p=${run%-*}
  timeout 120 $K bench --package /tmp/$p/dist --kernel $A --variant $VA --replays 10 --json $R/bench-$run.json > $R/bench-$run.log 2>&1
  echo "bench $run rc $?"; grep -E "^attn" $R/bench-$run.log | sort -u | cut -c1-160; ck
done
for f in q4-long-before q4-long-after; do echo "== $f"; grep -A14 "kernel  " $R/prof-$f.log | cut -c1-110; done
for m in q4_1 q8_0; do
  timeout 40 $K generate --model /tmp/rs-$m.gguf --package /tmp/after/dist --device cuda --oracle tools/engine/tests/data/oracle-$m.json --positions 16 > $R/digest-$m.log 2>&1
  echo "digest $m: $(grep -h 'digest' $R/digest-$m.log | cut -c1-100)"
done
ck
timeout 120 python3 bench/attention_peers.py $R/sdpa.json > $R/sdpa.log 2>&1
echo "sdpa rc $?: $(tail -n 8 $R/sdpa.log | tr '\n' ' ' | cut -c1-400)"; ck
