#!/usr/bin/env bash
# Device call 1 (issue 16): profile of the decode step on random models of real shapes.
set -x
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
K=./.carry/kiln
mkdir -p /tmp/k && tar xzf .carry/bundle.tgz -C /tmp/k
P=/tmp/k/dist
V=.carry/smol-vocab.gguf
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; } > $OUT/env.log 2>&1
for q in q4_1 q8_0; do $K random-model --shape smollm2-135m --type $q --vocab-from $V -o /tmp/rs-$q.gguf; done
$K bench --package $P --kernel argmax_rows > $OUT/bench-copy.log 2>&1
$K generate --model /tmp/rs-q4_1.gguf --package $P --device cuda --oracle tools/engine/tests/data/oracle-q4_1.json --positions 16 > $OUT/digest-cuda.log 2>&1
for q in q4_1 q8_0; do
  $K generate --model /tmp/rs-$q.gguf --package $P --device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile --json $OUT/prof-$q.json > $OUT/prof-$q.log 2>&1
done
$K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf > $OUT/r8b-make.log 2>&1
$K generate --model /tmp/r8b-q8_0.gguf --package $P --device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 512 --profile --json $OUT/prof-8b.json > $OUT/prof-8b.log 2>&1
timeout 240 ncu --graph-profiling node --metrics gpu__time_duration.sum --clock-control none --cache-control none --csv -c 1700 \
  $K generate --model /tmp/rs-q4_1.gguf --package $P --device cuda --prompt "Hi" -n 3 --ctx 64 > $OUT/ncu-q4_1.csv 2> $OUT/ncu-q4_1.err
tail -5 $OUT/*.log
ls -la $OUT
