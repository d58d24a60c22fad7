#!/usr/bin/env bash
# Call 7 (2026-12-04, twenty-fifth session): `--l2 auto` (the default now) on the device: the
# SmolLM2 Q4_1 file at a context of 512 (6.3 MB of caches: kept) and of 8192 (100 MB: more than
# the set-aside part, so auto clears the window).
# Run as `bash .carry/c7.sh` with .carry/{kiln,small.txz,smol-vocab.gguf}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c7; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c7.tgz -C /tmp c7; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/small; mkdir -p /tmp/small; tar xf .carry/small.txz -C /tmp/small
cp .carry/c7.sh $R/
$K random-model --shape smollm2-135m --type q4_1 --vocab-from .carry/smol-vocab.gguf -o /tmp/rs-q4_1.gguf > $R/models.log 2>&1
for ctx in 512 8192; do
  timeout 60 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/small/dist --device cuda --prompt-file tools/engine/ref/generate.txt -n 32 --ctx $ctx > $R/auto-$ctx.log 2>&1
  echo "ctx $ctx: $(grep -h '^L2' $R/auto-$ctx.log | cut -c1-220) | $(grep -h 'decode:' $R/auto-$ctx.log | sed 's/.*decode: //')"
  ck
done
