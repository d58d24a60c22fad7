#!/usr/bin/env bash
# The re-measure after the stale-object fix: parity, device tests, digests (twice), the engine's profiles.
set -x
OUT=${OUT:-/tmp/out}; R=/tmp/final2; mkdir -p $R
K=./.carry/kiln
rm -rf /tmp/k; mkdir -p /tmp/k && tar xzf .carry/bundle.tgz -C /tmp/k
P=/tmp/k/dist
V=.carry/smol-vocab.gguf
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv; } > $R/env.log 2>&1
for q in q4_1 q8_0; do $K random-model --shape smollm2-135m --type $q --vocab-from $V -o /tmp/rs-$q.gguf; done
$K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf
sha256sum /tmp/rs-*.gguf /tmp/r8b-q8_0.gguf > $R/models.sha256
for i in 1 2; do for q in q4_1 q8_0; do
  $K generate --model /tmp/rs-$q.gguf --package $P --device cuda --oracle tools/engine/tests/data/oracle-$q.json --positions 16 > $R/digest-$q-$i.log 2>&1
done; done
grep -h digests $R/digest-*.log | cut -c1-60
./.carry/tests/kiln_runtime --ignored cuda --test-threads=1 > $R/tests-runtime-cuda.log 2>&1; tail -n 2 $R/tests-runtime-cuda.log
for m in rs-q4_1 rs-q8_0; do
  for i in 1 2; do
    $K generate --model /tmp/$m.gguf --package $P --device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile --json $R/prof-$m-$i.json > $R/prof-$m-$i.log 2>&1
  done
  for n in 128 512 1024 2048; do
    python3 - "$n" > /tmp/prompt_$n.txt <<'PY'
import sys
n = int(sys.argv[1])
text = open("tools/engine/ref/prompts.txt").read().replace("%%%\n", "")
print((text * (1 + 4 * n // len(text)))[: 4 * n])
PY
    $K generate --model /tmp/$m.gguf --package $P --device cuda --prompt-file /tmp/prompt_$n.txt -n 128 --ctx $((n * 2 + 256)) --profile --json $R/ctx-$m-$n.json > $R/ctx-$m-$n.log 2>&1
  done
done
$K generate --model /tmp/r8b-q8_0.gguf --package $P --device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 512 --profile --json $R/prof-r8b-q8_0-1.json > $R/prof-r8b-q8_0-1.log 2>&1
grep -h "wall time\|decode:" $R/prof-*.log
timeout 150 $K parity --device cuda --package $P > $R/parity-cuda.log 2>&1; tail -n 1 $R/parity-cuda.log
tar czf $OUT/final2.tgz -C /tmp final2
