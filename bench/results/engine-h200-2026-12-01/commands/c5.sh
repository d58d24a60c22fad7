#!/usr/bin/env bash
# The fused attention's route at mid contexts (SmolLM2 shape, d64, group 3, T = 1): decode
# tokens/s with each variant forced, against the router's choice.
set -x
R=$OUT/r; mkdir -p $R; K=./.carry/kiln
rm -rf /tmp/k; mkdir -p /tmp/k && tar xzf .carry/bundle.tgz -C /tmp/k; P=/tmp/k/dist
[ -f /tmp/rs-q4_1.gguf ] || $K random-model --shape smollm2-135m --type q4_1 --vocab-from .carry/smol-vocab.gguf -o /tmp/rs-q4_1.gguf
for n in 128 512 1024 2048; do
  python3 - "$n" > /tmp/prompt_$n.txt <<'PY'
import sys
n = int(sys.argv[1])
text = open("tools/engine/ref/prompts.txt").read().replace("%%%\n", "")
print((text * (1 + 4 * n // len(text)))[: 4 * n])
PY
  for v in router short_r1 r1 r4 r4t256; do
    if [ $v = router ]; then unset KILN_ROUTE_ATTENTION_DECODE_ROPE_Q8_0_D64_Q8_1S; else export KILN_ROUTE_ATTENTION_DECODE_ROPE_Q8_0_D64_Q8_1S=$v; fi
    timeout 40 $K generate --model /tmp/rs-q4_1.gguf --package $P --device cuda --prompt-file /tmp/prompt_$n.txt -n 128 --ctx $((n * 2 + 256)) --json $R/ctx-$n-$v.json > $R/ctx-$n-$v.log 2>&1
    echo "$n $v $(grep -h 'decode:' $R/ctx-$n-$v.log | tail -1)"
  done
done
unset KILN_ROUTE_ATTENTION_DECODE_ROPE_Q8_0_D64_Q8_1S
tar czf $OUT/r.tgz -C $OUT r; rm -rf $R
