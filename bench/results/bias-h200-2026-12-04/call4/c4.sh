#!/usr/bin/env bash
# Call 4 (2026-12-04, twenty-second session): the Llama-3-8B-shaped Q8_0 step (random weights,
# ~110 positions: its attention node is the fused head-dim-128 family's `short_r1`, which now
# loads its first chunk before q: 168 -> 217 registers on sm_90) with call 1's package (`after`)
# and call 3's (`final`), twice each, alternating.
# Run as `bash .carry/c4.sh` with .carry/{kiln,after.txz,final.txz,smol-vocab.gguf}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c4; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c4.tgz -C /tmp c4; }
K=$(pwd)/.carry/kiln
for p in after final; do rm -rf /tmp/$p; mkdir -p /tmp/$p; tar xf .carry/$p.txz -C /tmp/$p; done
cp .carry/c4.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nproc; } > $R/env.log 2>&1
( time $K random-model --shape llama3-8b --type q8_0 --vocab-from .carry/smol-vocab.gguf -o /tmp/r8b.gguf ) > $R/models.log 2>&1
sha256sum /tmp/r8b.gguf >> $R/models.log 2>&1 &
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c20-200)"; }
for run in after-1 final-1 after-2 final-2; do p=${run%-*}
  timeout 120 $K generate --model /tmp/r8b.gguf --package /tmp/$p/dist --device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile --json $R/prof-$run.json > $R/prof-$run.log 2>&1
  line $run $R/prof-$run.log; grep -h attention $R/prof-$run.log | head -2 | cut -c1-110; ck
done
wait; ck
