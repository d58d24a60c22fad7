#!/usr/bin/env bash
# Call 2 (2026-12-04, twenty-fourth session): the Q4_1 SmolLM2-shaped step at ~2013 positions
# with other variants forced on each kernel (KILN_ROUTE_*), against the routed step, A/B/A:
# where the Q4_1 step loses to Q8_0's (585 against 563 us) though its nodes alone are as fast.
# Run as `bash .carry/c2.sh` with .carry/{kiln,head.txz,smol-vocab.gguf}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c2; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c2.tgz -C /tmp c2; }
K=$(pwd)/.carry/kiln
for p in head; do rm -rf /tmp/$p; mkdir -p /tmp/$p; tar xf .carry/$p.txz -C /tmp/$p; done
V=.carry/smol-vocab.gguf
cp .carry/c2.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nproc; } > $R/env.log 2>&1
$K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf > $R/models.log 2>&1
$K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf >> $R/models.log 2>&1
sha256sum /tmp/rs-*.gguf > $R/models.sha256
for i in $(seq 41); do cat tools/engine/ref/generate.txt; done > /tmp/long41.txt
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c20-50) | $(grep -h 'graph replay' $2 | sed 's/.*device //' | cut -c1-12) | $(grep -h 'as decode' $2 | cut -c30-140)"; }
run() { local name=$1 m=$2; shift 2
  env "$@" timeout 90 $K generate --model /tmp/rs-$m.gguf --package /tmp/head/dist --device cuda --prompt-file /tmp/long41.txt -n 128 --ctx 2304 --profile --json $R/prof-$name.json > $R/prof-$name.log 2>&1
  line "$name" $R/prof-$name.log; ck; }
run q4-routed q4_1 X=1
run q4-qkv-p1 q4_1 KILN_ROUTE_GEMV_Q4_1_RP_QKV_CACHE_NORM=p1
run q4-qkv-p2r2w16 q4_1 KILN_ROUTE_GEMV_Q4_1_RP_QKV_CACHE_NORM=p2r2w16
run q4-res-p1 q4_1 KILN_ROUTE_GEMV_Q4_1_RP_RES=p1
run q4-res-p2r2 q4_1 KILN_ROUTE_GEMV_Q4_1_RP_RES=p2r2
run q4-att-t640 q4_1 KILN_ROUTE_ATTENTION_DECODE_ROPE_Q8_0_D64_Q8_1S=short_r1t640
run q4-att-r4t256 q4_1 KILN_ROUTE_ATTENTION_DECODE_ROPE_Q8_0_D64_Q8_1S=r4t256
run q4-att-short q4_1 KILN_ROUTE_ATTENTION_DECODE_ROPE_Q8_0_D64_Q8_1S=short
run q4-routed-2 q4_1 X=1
run q8-routed q8_0 X=1
run q8-swiglu-p1 q8_0 KILN_ROUTE_GEMV_Q8_0_RP_SWIGLU_Q8_1S_NORM=p1
run q8-qkv-p1 q8_0 KILN_ROUTE_GEMV_Q8_0_RP_QKV_CACHE_NORM=p1
run q8-routed-2 q8_0 X=1
ck
