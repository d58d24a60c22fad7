#!/usr/bin/env bash
# Second device call of the twenty-seventh session (not run yet): the prompt attention's wide
# variants in the 32-key order against float64 through gguf on the H200 (`bench/prefill_ref.py
# --large`, L up to 4101), then `kiln generate`'s start-up with
# the placements decided from the manifest (`--kernels used`: one load of the step's modules,
# since 2026-12-04) against `--kernels all` (the whole library), twice each in turn: the
# "ready in" line and the decode rate, SmolLM2-shaped Q8_0 model with random weights.
# Run as `bash .carry/c2.sh` with .carry/{kiln,lib.txz,py,smol-vocab.gguf} (as c1.sh's; py the
# gguf package, `pip install --no-deps --target .carry/py gguf`).
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c2; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c2.tgz -C /tmp c2; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/lib; mkdir -p /tmp/lib; tar xJf .carry/lib.txz -C /tmp/lib
P=/tmp/lib/dist
cp .carry/c2.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
PYTHONPATH=.carry/py timeout 240 python3 bench/prefill_ref.py --kiln $K --package $P --device cuda --arch sm_90 --variants w4g,w4gx,w4gxa,w4gxl,w4qs,w4qsx,w4qsxc --large > $R/ref.log 2>&1
echo "ref rc $?: $(tail -n 2 $R/ref.log | tr '\n' ' ' | cut -c1-200)"
ck
$K random-model --shape smollm2-135m --type q8_0 --vocab-from .carry/smol-vocab.gguf -o /tmp/rs-q8_0.gguf > $R/models.log 2>&1
for k in used all used all; do
  timeout 60 $K generate --model /tmp/rs-q8_0.gguf --package $P --device cuda --prompt-file tools/engine/ref/generate.txt -n 32 --kernels $k > $R/gen-$k.log 2>&1
  echo "generate --kernels $k: $(grep -o 'ready in [0-9.]* s' $R/gen-$k.log) | $(grep -h 'decode:' $R/gen-$k.log | cut -c1-120)"
  cp $R/gen-$k.log $R/gen-$k-$(date +%s%N).log
done
ck
