#!/usr/bin/env bash
# Call 1 (2026-12-04, twenty-first session): (a) the prompt attention with a Q8_0 cache, `w4qs`
# (the route) against `w4qsh` (the same with the Q8_0 values made as f16x2 pairs from the bytes'
# bits: no conversions), parity on cuda first, the bench twice in opposite variant orders at
# L = 512, 2048, 8192, torch SDPA in the same call; (b) SmolLM2-shaped Q8_0 steps with the norms
# folded (the route) and split, at ~173 and ~2013 positions, and the Q4_1 one folded.
# Run as `bash .carry/c1.sh` with .carry/{kiln,c1.tgz,smol-vocab.gguf}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c1; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c1.tgz -C /tmp c1; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/p1; mkdir -p /tmp/p1; tar xzf .carry/c1.tgz -C /tmp/p1
P=/tmp/p1/dist
V=.carry/smol-vocab.gguf
cp .carry/c1.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
( $K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf
  $K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf ) > $R/models.log 2>&1 &
MPID=$!
timeout 150 $K parity --device cuda --package $P --kernel attention_prefill_q8_0_d128 > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-150)"; grep -i "fail" $R/parity.log | head -3
ck
C=prefill_q8_0_l512,prefill_q8_0_l2k,prefill_q8_0_l8k
timeout 100 $K bench --package $P --kernel $C --variant w4qs,w4qsh --json $R/bench-a.json > $R/bench-a.log 2>&1; echo "a rc $?"; grep -E "^prefill" $R/bench-a.log | sort -u | cut -c1-140; ck
timeout 100 $K bench --package $P --kernel $C --variant w4qsh,w4qs --json $R/bench-b.json > $R/bench-b.log 2>&1; echo "b rc $?"; grep -E "^prefill" $R/bench-b.log | sort -u | cut -c1-140; ck
timeout 90 python3 bench/prefill_peers.py $R/sdpa.json > $R/sdpa.log 2>&1; tail -n 4 $R/sdpa.log
ck
wait $MPID
sha256sum /tmp/rs-q4_1.gguf /tmp/rs-q8_0.gguf > $R/models.sha256 2>&1
for i in $(seq 41); do cat tools/engine/ref/generate.txt; done > /tmp/long41.txt
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c1-200) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
run() { local name=$1 m=$2 pf=$3 ctx=$4; shift 4
  timeout 60 $K generate --model /tmp/rs-$m.gguf --package $P --device cuda --prompt-file $pf -n 128 --ctx $ctx --profile "$@" --json $R/prof-$name.json > $R/prof-$name.log 2>&1
  line "$name" $R/prof-$name.log; ck; }
S=tools/engine/ref/generate.txt
run q8-short-fold q8_0 $S 512
run q8-short-split q8_0 $S 512 --norms split
run q8-long-fold q8_0 /tmp/long41.txt 2304
run q8-long-split q8_0 /tmp/long41.txt 2304 --norms split
run q4-long-fold q4_1 /tmp/long41.txt 2304
run q8-short-split-2 q8_0 $S 512 --norms split
run q8-short-fold-2 q8_0 $S 512
for f in q8-short-fold q8-short-split q8-long-split; do echo "== $f"; grep -A12 "kernel  " $R/prof-$f.log | cut -c1-110; done
ck
