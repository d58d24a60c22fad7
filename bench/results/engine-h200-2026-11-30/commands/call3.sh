#!/usr/bin/env bash
# Device call 3: runtime cuda tests (graph update, PDL), engine with the next step prepared during the current.
set -x
OUT=${OUT:-/tmp/out}; R=/tmp/r3; mkdir -p $R
K=./.carry/kiln
rm -rf /tmp/k; mkdir -p /tmp/k && tar xzf .carry/bundle.tgz -C /tmp/k
P=/tmp/k/dist
V=.carry/smol-vocab.gguf
./.carry/tests/kiln_runtime --ignored cuda --test-threads=1 > $R/tests-runtime-cuda.log 2>&1
tail -3 $R/tests-runtime-cuda.log
for q in q4_1 q8_0; do [ -s /tmp/rs-$q.gguf ] || $K random-model --shape smollm2-135m --type $q --vocab-from $V -o /tmp/rs-$q.gguf; done
[ -s /tmp/r8b-q8_0.gguf ] || $K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf
$K generate --model /tmp/rs-q4_1.gguf --package $P --device cuda --oracle tools/engine/tests/data/oracle-q4_1.json --positions 16 > $R/digest-cuda.log 2>&1
for m in rs-q4_1 rs-q8_0 r8b-q8_0; do
  n=128; [ $m = r8b-q8_0 ] && n=64
  for i in 1 2; do
  $K generate --model /tmp/$m.gguf --package $P --device cuda --prompt-file tools/engine/ref/generate.txt -n $n --ctx 512 --profile --json $R/prof-$m-$i.json > $R/prof-$m-$i.log 2>&1
  done
done
grep -h "wall time\|decode:" $R/prof-*.log
grep -h "digests" $R/digest-*.log
tar czf $OUT/r3.tgz -C /tmp r3
