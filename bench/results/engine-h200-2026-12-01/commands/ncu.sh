#!/usr/bin/env bash
# Where the small kernels of SmolLM2's step spend their time: ncu on the graph nodes.
set -x
R=$OUT; K=./.carry/kiln
rm -rf /tmp/k; mkdir -p /tmp/k && tar xzf .carry/bundle.tgz -C /tmp/k; P=/tmp/k/dist
[ -f /tmp/rs-q4_1.gguf ] || $K random-model --shape smollm2-135m --type q4_1 --vocab-from .carry/smol-vocab.gguf -o /tmp/rs-q4_1.gguf
S="--section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy --section SchedulerStats --section SourceCounters"
for cfg in folded:190 apart:250; do nm=${cfg%%:*}; skip=${cfg##*:}
  timeout 150 ncu --graph-profiling node --kernel-name regex:"qkv|attention_decode|swiglu|rmsnorm_q8|kv_append|rp_res" --launch-skip $skip --launch-count 7 $S \
    $K generate --model /tmp/rs-q4_1.gguf --package $P --device cuda --prompt "The capital of France is" -n 3 --ctx 128 --norms $nm > $R/ncu-$nm.txt 2>&1
  tail -n 5 $R/ncu-$nm.txt
done
