#!/usr/bin/env bash
# Call 3 (2026-12-04, twenty-first session): which early twin helps where. SmolLM2-shaped steps
# at ~173, ~587 and ~2013 positions: Q4_1 with (A) no early twin, (B) the residual GEMV's only,
# (C) the gate/up's only, (D) the Q/K/V's only, (E) all three (the routes); Q8_0 with (F) the
# routes (all three), (G) its Q/K/V without, (H) none. Then the prompt attention with the Q8_0
# values made as f16x2 pairs in every variant: parity on cuda of the Q8_0 families, the bench
# of the routed `w4qs` and torch SDPA in the same call.
# Run as `bash .carry/c3.sh` with .carry/{kiln,c3.tgz,smol-vocab.gguf}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c3; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c3.tgz -C /tmp c3; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/p3; mkdir -p /tmp/p3; tar xzf .carry/c3.tgz -C /tmp/p3
P=/tmp/p3/dist
V=.carry/smol-vocab.gguf
cp .carry/c3.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nproc; } > $R/env.log 2>&1
( $K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf
  $K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf ) > $R/models.log 2>&1 &
MPID=$!
F=gemv_q8_0_rp_qkv_cache_norm,gemv_q4_0_rp_qkv_cache_norm,gemv_q4_1_rp_qkv_cache_norm
timeout 60 $K parity --device cuda --package $P --kernel $F > $R/parity-qkv.log 2>&1
echo "parity qkv rc $?: $(tail -n 1 $R/parity-qkv.log | cut -c1-120)"; grep -E "^FAIL" $R/parity-qkv.log | head -3
ck
wait $MPID
sha256sum /tmp/rs-q4_1.gguf /tmp/rs-q8_0.gguf > $R/models.sha256 2>&1
for i in $(seq 10); do cat tools/engine/ref/generate.txt; done > /tmp/long10.txt
for i in $(seq 41); do cat tools/engine/ref/generate.txt; done > /tmp/long41.txt
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c20-110) | $(grep -h 'decode:' $2 | cut -c50-100)"; }
run() { local name=$1 m=$2 pf=$3 ctx=$4; shift 4
  env "$@" timeout 60 $K generate --model /tmp/rs-$m.gguf --package $P --device cuda --prompt-file $pf -n 128 --ctx $ctx --profile --json $R/prof-$name.json > $R/prof-$name.log 2>&1
  line "$name" $R/prof-$name.log; ck; }
S=tools/engine/ref/generate.txt
R4=KILN_ROUTE_GEMV_Q4_1_RP_RES; S4=KILN_ROUTE_GEMV_Q4_1_RP_SWIGLU_Q8_1S_NORM; Q4=KILN_ROUTE_GEMV_Q4_1_RP_QKV_CACHE_NORM
R8=KILN_ROUTE_GEMV_Q8_0_RP_RES; S8=KILN_ROUTE_GEMV_Q8_0_RP_SWIGLU_Q8_1S_NORM; Q8=KILN_ROUTE_GEMV_Q8_0_RP_QKV_CACHE_NORM
for pos in short:$S:512 mid:/tmp/long10.txt:1024 long:/tmp/long41.txt:2304; do
  IFS=: read tag pf ctx <<< "$pos"
  run q4-$tag-A q4_1 $pf $ctx $R4=p1 $S4=p1 $Q4=p1
  run q4-$tag-B q4_1 $pf $ctx $S4=p1 $Q4=p1
  run q4-$tag-C q4_1 $pf $ctx $R4=p1 $Q4=p1
  run q4-$tag-D q4_1 $pf $ctx $R4=p1 $S4=p1
  run q4-$tag-E q4_1 $pf $ctx X=1
  run q8-$tag-F q8_0 $pf $ctx X=1
  run q8-$tag-G q8_0 $pf $ctx $Q8=p1
  run q8-$tag-H q8_0 $pf $ctx $Q8=p1 $R8=p1u16w4 $S8=p1
  run q4-$tag-A2 q4_1 $pf $ctx $R4=p1 $S4=p1 $Q4=p1
  run q4-$tag-E2 q4_1 $pf $ctx X=1
done
for f in q4-short-E q4-long-E; do echo "== $f"; grep -A12 "kernel  " $R/prof-$f.log | cut -c1-110; done
for m in q4_1 q8_0; do
  timeout 40 $K generate --model /tmp/rs-$m.gguf --package $P --device cuda --oracle tools/engine/tests/data/oracle-$m.json --positions 16 > $R/digest-$m.log 2>&1
  echo "digest $m: $(grep -h 'digest' $R/digest-$m.log | cut -c1-100)"
done
ck
FP=attention_prefill_q8_0_d128,attention_prefill_q8_0_d64,attention_prefill_q8_0_d128_qbf16,attention_prefill_q8_0_d128_of16
timeout 150 $K parity --device cuda --package $P --kernel $FP > $R/parity-prefill.log 2>&1
echo "parity prefill rc $?: $(tail -n 1 $R/parity-prefill.log | cut -c1-150)"; grep -i "fail" $R/parity-prefill.log | head -3
ck
C=prefill_q8_0_l512,prefill_q8_0_l2k,prefill_q8_0_l8k
timeout 60 $K bench --package $P --kernel $C --variant w4qs --json $R/bench-prefill.json > $R/bench-prefill.log 2>&1; echo "prefill rc $?"; grep -E "^prefill" $R/bench-prefill.log | sort -u | cut -c1-140; ck
timeout 90 python3 bench/prefill_peers.py $R/sdpa.json > $R/sdpa.log 2>&1; tail -n 4 $R/sdpa.log
ck
