#!/usr/bin/env bash
# Call 2 (2026-12-04, twenty-fifth session): call 1 again, the weights and the KV caches each one allocation (`Device::alloc_group`; in call 1 the driver placed the caches between the weights, so `stream` and `keep` were refused).
# The runtime's cuda tests (with the new `an_l2_window_changes_no_result`); then kiln generate
# --profile on the SmolLM2-shaped random models, Q4_1 and Q8_0, at ~2013 and ~173 positions,
# with `--l2 off` / `stream` (the weights' range evicted first) / `keep` (the KV caches
# persisting) / `off` again; one run with CUDA_MODULE_LOADING=EAGER (code placement); the
# logit digests under `--l2 stream` (must equal the earlier sessions').
# Run as `bash .carry/c2.sh` with .carry/{kiln,rt-tests,hist.txz,smol-vocab.gguf}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c2; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c2.tgz -C /tmp c2; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/hist; mkdir -p /tmp/hist; tar xf .carry/hist.txz -C /tmp/hist
P=/tmp/hist/dist
V=.carry/smol-vocab.gguf
cp .carry/c2.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nproc; } > $R/env.log 2>&1
timeout 100 .carry/rt-tests --ignored cuda:: --test-threads 1 > $R/rt-tests.log 2>&1
echo "rt-tests rc $?: $(grep 'test result' $R/rt-tests.log)"; grep -E "FAILED|panicked" $R/rt-tests.log | head -5
$K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf > $R/models.log 2>&1
$K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf >> $R/models.log 2>&1
sha256sum /tmp/rs-*.gguf > $R/models.sha256
ck
for i in $(seq 41); do cat tools/engine/ref/generate.txt; done > /tmp/long41.txt
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c20-40) | $(grep -h 'graph replay' $2 | sed 's/.*device //' | cut -c2-10) | $(grep -h 'as decode' $2 | cut -c30-140) | $(grep -h 'decode:' $2 | sed 's/.*decode: //')"; grep -h "^L2\|also covers" $2 | cut -c2-300; }
run() { local name=$1 m=$2 pf=$3 ctx=$4; shift 4
  timeout 90 $K generate --model /tmp/rs-$m.gguf --package $P --device cuda --prompt-file $pf -n 128 --ctx $ctx --profile --json $R/prof-$name.json "$@" > $R/prof-$name.log 2>&1
  line "$name" $R/prof-$name.log; ck; }
S=tools/engine/ref/generate.txt
L=/tmp/long41.txt
run q4-long-off q4_1 $L 2304 --l2 off
run q4-long-stream q4_1 $L 2304 --l2 stream
run q4-long-keep q4_1 $L 2304 --l2 keep
run q4-long-off2 q4_1 $L 2304 --l2 off
run q8-long-off q8_0 $L 2304 --l2 off
run q8-long-stream q8_0 $L 2304 --l2 stream
run q8-long-keep q8_0 $L 2304 --l2 keep
run q8-long-stream2 q8_0 $L 2304 --l2 stream
run q4-short-off q4_1 $S 512 --l2 off
run q4-short-stream q4_1 $S 512 --l2 stream
run q8-short-off q8_0 $S 512 --l2 off
run q8-short-stream q8_0 $S 512 --l2 stream
CUDA_MODULE_LOADING=EAGER run q4-long-eager q4_1 $L 2304 --l2 off
for m in q4_1 q8_0; do
  timeout 40 $K generate --model /tmp/rs-$m.gguf --package $P --device cuda --oracle tools/engine/tests/data/oracle-$m.json --positions 16 --l2 stream > $R/digest-$m.log 2>&1
  echo "digest $m: $(grep -h 'digest' $R/digest-$m.log | cut -c2-100)"
done
ck
