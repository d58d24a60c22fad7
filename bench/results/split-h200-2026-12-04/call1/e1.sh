#!/usr/bin/env bash
# Experiment 1 (2026-12-04, twentieth session): what the 64 rmsnorm nodes of the Llama-3-8B-shaped
# step cost: the step profiled as routed, then with KILN_EXPERIMENT_SKIP_NORMS (timing only:
# the norms after layer 0's first are left out, the GEMVs read stale activations).
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/e1; rm -rf $R; mkdir -p $R
ck() { tar czf $O/e1.tgz -C /tmp e1; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/ke1; mkdir -p /tmp/ke1; tar xzf .carry/e1.tgz -C /tmp/ke1
N=/tmp/ke1/dist
V=.carry/smol-vocab.gguf
cp .carry/e1.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
$K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf > $R/models.log 2>&1
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c1-200) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
G8="--device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile"
for i in 1 2; do
timeout 60 $K generate --model /tmp/r8b-q8_0.gguf --package $N $G8 --json $R/prof-r8b-$i.json > $R/prof-r8b-$i.log 2>&1
line "r8b routed $i" $R/prof-r8b-$i.log
KILN_EXPERIMENT_SKIP_NORMS=1 timeout 60 $K generate --model /tmp/r8b-q8_0.gguf --package $N $G8 --json $R/prof-r8b-skip-$i.json > $R/prof-r8b-skip-$i.log 2>&1
line "r8b skip norms $i" $R/prof-r8b-skip-$i.log
ck
done
grep -A12 "kernel  " $R/prof-r8b-skip-1.log | cut -c1-100
ck
