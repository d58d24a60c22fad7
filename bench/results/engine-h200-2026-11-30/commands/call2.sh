#!/usr/bin/env bash
# Device call 2: programmatic dependent launch (PDL) on sm_90: parity, engine digests, A/B timing.
set -x
OUT=${OUT:-/tmp/out}; R=/tmp/r2; mkdir -p $R
K=./.carry/kiln
rm -rf /tmp/k; mkdir -p /tmp/k && tar xzf .carry/bundle.tgz -C /tmp/k
P=/tmp/k/dist
V=.carry/smol-vocab.gguf
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
for q in q4_1 q8_0; do [ -s /tmp/rs-$q.gguf ] || $K random-model --shape smollm2-135m --type $q --vocab-from $V -o /tmp/rs-$q.gguf; done
[ -s /tmp/r8b-q8_0.gguf ] || $K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf
$K generate --model /tmp/rs-q4_1.gguf --package $P --device cuda --oracle tools/engine/tests/data/oracle-q4_1.json --positions 16 > $R/digest-cuda-pdl.log 2>&1
KILN_OVERLAP=0 $K generate --model /tmp/rs-q4_1.gguf --package $P --device cuda --oracle tools/engine/tests/data/oracle-q4_1.json --positions 16 > $R/digest-cuda-nopdl.log 2>&1
for ov in 0 1; do
  for m in rs-q4_1 rs-q8_0 r8b-q8_0; do
    n=128; [ $m = r8b-q8_0 ] && n=64
    KILN_OVERLAP=$ov $K generate --model /tmp/$m.gguf --package $P --device cuda --prompt-file tools/engine/ref/generate.txt -n $n --ctx 512 --profile --json $R/prof-$m-ov$ov.json > $R/prof-$m-ov$ov.log 2>&1
  done
done
timeout 300 $K parity --device cuda --package $P > $R/parity-cuda-pdl.log 2>&1
tail -3 $R/parity-cuda-pdl.log
grep -h "wall time" $R/prof-*.log
grep -h "digests" $R/digest-*.log
tar czf $OUT/r2.tgz -C /tmp r2
