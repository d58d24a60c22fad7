#!/usr/bin/env bash
# Call e2 (2026-12-04, twentieth session): the split norms. Parity of the four new families on
# cuda, then the Llama-3-8B-shaped step with the norms apart (as routed) and split, and split
# with the other one-token `_res_sq` variants forced.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/e2; rm -rf $R; mkdir -p $R
ck() { tar czf $O/e2.tgz -C /tmp e2; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/ke2; mkdir -p /tmp/ke2; tar xzf .carry/e2.tgz -C /tmp/ke2
N=/tmp/ke2/dist
V=.carry/smol-vocab.gguf
cp .carry/e2.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
$K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf > $R/models.log 2>&1 &
MPID=$!
F=gemv_q8_0_rp_res_sq,gemv_q8_0_rp_rms,gemv_q8_0_rp_swiglu_q8_1s_rms,gemv_q8_0_rp_qkv_cache_rms
timeout 120 $K parity --device cuda --package $N --kernel $F > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-120)"; grep -i "fail" $R/parity.log | head -3
ck
wait $MPID
cat /dev/null > /tmp/warm; cat /tmp/r8b-q8_0.gguf > /dev/null
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c1-200) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
G8="--device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile"
run() { local name=$1; shift; env "$@" timeout 150 $K generate --model /tmp/r8b-q8_0.gguf --package $N $G8 $NORMS --json $R/prof-$name.json > $R/prof-$name.log 2>&1; line "$name" $R/prof-$name.log; ck; }
NORMS="--norms apart" run apart-1 X=1
NORMS="--norms split" run split-1 X=1
NORMS="--norms split" run split-nonearly KILN_ROUTE_GEMV_Q8_0_RP_RES_SQ=p1r4u8w8
NORMS="--norms split" run split-w16 KILN_ROUTE_GEMV_Q8_0_RP_RES_SQ=p1r2u8w16
NORMS="--norms apart" run apart-2 X=1
NORMS="--norms split" run split-2 X=1
grep -A14 "kernel  " $R/prof-split-1.log | cut -c1-110
for n in apart-1 split-1; do echo "$n text: $(grep -v '^<|im_' $R/prof-$n.log | sed -n 2p | cut -c1-300)"; done
ck
