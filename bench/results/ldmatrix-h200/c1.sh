#!/usr/bin/env bash
# Superseded on 2026-12-05 by ../kb32-h200/c1.sh (the same checks on the 32-key order); never run.
# Device call for the twenty-sixth session's work (2026-12-04; not run: no H200 was lent).
# (a) The prompt attention's wide variants with their LDS fragments by `ld_matrix` (`w4gx`,
# `w4qsx`) against `w4g` / `w4qs`: parity on cuda first (device against the interpreter within
# the matrix unit's bound), float64 through gguf, then the bench in the orders A B B A at
# L = 512, 2048, 8192 for both caches, torch SDPA in the same call.
# (b) `kiln generate`'s start-up with the placements decided from the manifest (`--kernels
# used`, one load of the step's modules) against `--kernels all` (the whole library): the
# "ready in" line, SmolLM2-shaped Q8_0 model.
# (c) The op checks of sm_90 (`kiln build --matrix specs/checks.ron --arch sm_90`), `ld_matrix`
# among them: the instruction itself against the interpreter, bit for bit.
# Run as `bash .carry/c1.sh` with .carry/{kiln,lib.txz,chk.txz,py,smol-vocab.gguf}: lib.txz the
# whole sm_90 library (`kiln build --arch sm_90 --strict`), py the gguf package (pip --target).
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c1; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c1.tgz -C /tmp c1; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/p1; mkdir -p /tmp/p1; tar xJf .carry/lib.txz -C /tmp/p1
P=/tmp/p1/dist
cp .carry/c1.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
$K random-model --shape smollm2-135m --type q8_0 --vocab-from .carry/smol-vocab.gguf -o /tmp/rs-q8_0.gguf > $R/models.log 2>&1 &
MPID=$!
rm -rf /tmp/c; mkdir -p /tmp/c; tar xJf .carry/chk.txz -C /tmp/c
timeout 60 $K parity --device cuda --package /tmp/c/dist > $R/checks.log 2>&1
echo "op checks rc $?: $(tail -n 1 $R/checks.log)"; grep -E "ld_matrix|fail" $R/checks.log | head -5
ck
F=attention_prefill_f16_d64,attention_prefill_f16_d128,attention_prefill_q8_0_d64,attention_prefill_q8_0_d128
timeout 200 $K parity --device cuda --package $P --kernel $F > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-150)"; grep -i "fail" $R/parity.log | head -3
ck
PYTHONPATH=.carry/py timeout 120 python3 bench/prefill_ref.py --kiln $K --package $P --device cuda --arch sm_90 --variants w4g,w4gx,w4qs,w4qsx --large > $R/ref.log 2>&1
echo "ref rc $?: $(tail -n 2 $R/ref.log | tr '\n' ' ' | cut -c1-200)"
ck
CF=prefill_f16_l512,prefill_f16_l2k,prefill_f16_l8k
CQ=prefill_q8_0_l512,prefill_q8_0_l2k,prefill_q8_0_l8k
b() { local name=$1 cases=$2 vars=$3
  timeout 100 $K bench --package $P --kernel $cases --variant $vars --json $R/bench-$name.json > $R/bench-$name.log 2>&1
  echo "$name rc $?"; grep -E "^prefill" $R/bench-$name.log | sort -u | cut -c1-150; ck; }
b f16-a $CF w4g,w4gx
b q8-a $CQ w4qs,w4qsx,w4gx
b f16-b $CF w4gx,w4g
b q8-b $CQ w4gx,w4qsx,w4qs
timeout 90 python3 bench/prefill_peers.py $R/sdpa.json > $R/sdpa.log 2>&1; tail -n 4 $R/sdpa.log
ck
wait $MPID
for k in used all used all; do
  timeout 60 $K generate --model /tmp/rs-q8_0.gguf --package $P --device cuda --prompt-file tools/engine/ref/generate.txt -n 32 --kernels $k > $R/gen-$k.log 2>&1
  echo "generate --kernels $k: $(grep -o 'ready in [0-9.]* s' $R/gen-$k.log) | $(grep -h 'decode:' $R/gen-$k.log | cut -c1-120)"
done
ck
