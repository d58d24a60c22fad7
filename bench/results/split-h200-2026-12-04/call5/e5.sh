#!/usr/bin/env bash
# Call e5 (2026-12-04, twentieth session): the multi-token split-norm variants reworked (every
# token's block sums loaded before any scale; the `_res_sq` tile walked by all eight waves).
# Parity on cuda, then the Llama-3-8B-shaped step (T = 1, 2, 4, 8) routed (split) against apart.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/e5; rm -rf $R; mkdir -p $R
ck() { tar czf $O/e5.tgz -C /tmp e5; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/ke5; mkdir -p /tmp/ke5; tar xzf .carry/e5.tgz -C /tmp/ke5
N=/tmp/ke5/dist
V=.carry/smol-vocab.gguf
cp .carry/e5.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
$K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf > $R/models.log 2>&1 &
MPID=$!
F=gemv_q8_0_rp_res_sq,gemv_q8_0_rp_rms,gemv_q8_0_rp_swiglu_q8_1s_rms,gemv_q8_0_rp_qkv_cache_rms
timeout 120 $K parity --device cuda --package $N --kernel $F > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-120)"; grep -E "^FAIL" $R/parity.log | head -3
ck
wait $MPID
sha256sum /tmp/r8b-q8_0.gguf > $R/models.sha256
cat /tmp/r8b-q8_0.gguf > /dev/null
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c1-200) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
G8="--device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile"
run() { local name=$1; shift; timeout 100 $K generate --model /tmp/r8b-q8_0.gguf --package $N $G8 "$@" --json $R/prof-r8b-$name.json > $R/prof-r8b-$name.log 2>&1; line "$name" $R/prof-r8b-$name.log; ck; }
run routed-1
run apart-1 --norms apart
run routed-2
for n in routed-1 apart-1 routed-2; do echo $n; grep -E "a step of" $R/prof-r8b-$n.log | cut -c1-160; done
ck
