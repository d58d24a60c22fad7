#!/usr/bin/env bash
# Call 2 (2026-12-02, tenth session): the whole library at HEAD on the H200 after the
# interpreter's per-workgroup resets changed (the reference of every parity case): kiln parity
# --device cuda of every family of an sm_90 package, the runtime's cuda tests, the engine's
# logit digests (SmolLM2-shaped random models, Q4_1 and Q8_0) and one decode profile each.
set -uo pipefail
O=${OUT:-/tmp/out}; R=$O/c2; mkdir -p $R
K=./.carry/kiln
cp .carry/c2.sh $R/
rm -rf /tmp/full && mkdir -p /tmp/full && tar xzf .carry/full.tgz -C /tmp/full
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
( for q in q4_1 q8_0; do $K random-model --shape smollm2-135m --type $q --vocab-from .carry/smol-vocab.gguf -o /tmp/rs-$q.gguf; done ) > $R/models.log 2>&1 &
MPID=$!
SECONDS=0
timeout 400 $K parity --device cuda --package /tmp/full/dist > $R/parity.log 2>&1
echo "parity rc $? in ${SECONDS}s: $(tail -n 1 $R/parity.log)"
grep -h "^time" $R/parity.log | awk '{print $(NF-1), $2, $3, $5}' | sort -n | tail -4
grep -hE "^(FAIL|fail|error)" $R/parity.log | head -5
timeout 90 ./.carry/rt-tests --ignored cuda:: --test-threads 1 > $R/rt-cuda.log 2>&1
echo "runtime cuda tests rc $?: $(grep -h 'test result' $R/rt-cuda.log)"
wait $MPID
sha256sum /tmp/rs-*.gguf > $R/models.sha256
for q in q4_1 q8_0; do
  timeout 90 $K generate --model /tmp/rs-$q.gguf --package /tmp/full/dist --device cuda --oracle tools/engine/tests/data/oracle-$q.json --positions 16 > $R/digest-$q.log 2>&1
  echo "digest $q rc $?: $(grep -h 'digests' $R/digest-$q.log | cut -c1-120)"
  timeout 90 $K generate --model /tmp/rs-$q.gguf --package /tmp/full/dist --device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile --json $R/prof-$q.json > $R/prof-$q.log 2>&1
  echo "prof $q: $(grep -h 'wall time' $R/prof-$q.log | cut -c1-120) | $(grep -h 'decode:' $R/prof-$q.log | cut -c30-90)"
done
