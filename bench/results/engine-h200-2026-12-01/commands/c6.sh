#!/usr/bin/env bash
# Last device call of 2026-12-01 (commit in $OUT/e/commit): parity on cuda of the fused attention
# and the folded-norm GEMV families (the last whole call did not reach them), then the SmolLM2
# shape's decode speed against context with the new head-dim-64 route (r1 past 248 keys).
set -x
R=$OUT/f; mkdir -p $R; K=./.carry/kiln
rm -rf /tmp/k; mkdir -p /tmp/k && tar xzf .carry/bundle.tgz -C /tmp/k; P=/tmp/k/dist
cp .carry/c6.sh $R/
for q in q4_1 q8_0; do [ -f /tmp/rs-$q.gguf ] || $K random-model --shape smollm2-135m --type $q --vocab-from .carry/smol-vocab.gguf -o /tmp/rs-$q.gguf; done
timeout 230 $K parity --device cuda --package $P --kernel ${NEW_KERNELS} > $R/parity-cuda.log 2>&1; tail -n 2 $R/parity-cuda.log
tar czf $OUT/f.tgz -C $OUT f
timeout 60 $K generate --model /tmp/rs-q4_1.gguf --package $P --device cuda --oracle tools/engine/tests/data/oracle-q4_1.json --positions 16 > $R/digest-q4_1.log 2>&1
grep -h "digests" $R/digest-q4_1.log | cut -c1-120
for m in rs-q4_1 rs-q8_0; do
  timeout 60 $K generate --model /tmp/$m.gguf --package $P --device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile --json $R/prof-$m-1.json > $R/prof-$m-1.log 2>&1
  for n in 128 512 1024 2048; do
    python3 - "$n" > /tmp/prompt_$n.txt <<'PY'
import sys
n = int(sys.argv[1])
text = open("tools/engine/ref/prompts.txt").read().replace("%%%\n", "")
print((text * (1 + 4 * n // len(text)))[: 4 * n])
PY
    timeout 40 $K generate --model /tmp/$m.gguf --package $P --device cuda --prompt-file /tmp/prompt_$n.txt -n 128 --ctx $((n * 2 + 256)) --json $R/ctx-$m-$n.json > $R/ctx-$m-$n.log 2>&1
    echo "$m $n $(grep -h 'decode:' $R/ctx-$m-$n.log | tail -1)"
  done
done
tar czf $OUT/f.tgz -C $OUT f; rm -rf $R
