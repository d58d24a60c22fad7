#!/usr/bin/env bash
# Call 6 (2026-12-04, twenty-fifth session): the new defaults on the Llama-3-8B shape. `kiln
# random-model --shape llama3-8b --type q8_0` (random weights, SmolLM2's vocabulary), then
# kiln generate --profile with `--kernels used` (the default now), `--kernels all` (before),
# `--kernels used --l2 keep`, and `used` again; then the SmolLM2 Q4_1 file at ~173 positions
# with `--l2 keep` and `off` twice each (call 3's one `keep` run there decoded slower).
# Run as `bash .carry/c6.sh` with .carry/{kiln,hist.txz,smol-vocab.gguf}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c6; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c6.tgz -C /tmp c6; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/hist; mkdir -p /tmp/hist; tar xf .carry/hist.txz -C /tmp/hist
P=/tmp/hist/dist
V=.carry/smol-vocab.gguf
cp .carry/c6.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nproc; } > $R/env.log 2>&1
$K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf > $R/models.log 2>&1
$K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf >> $R/models.log 2>&1
sha256sum /tmp/rs-q4_1.gguf > $R/models.sha256
ck
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c20-40) | replay $(grep -h 'graph replay' $2 | sed 's/.*device //' | cut -c1-10) | floor $(grep -h 'graph replay' $2 | sed 's/.*floor //' | cut -c1-10) | $(grep -h 'decode:' $2 | sed 's/.*decode: //')"; grep -h "^L2\|rror" $2 | cut -c1-200; }
G8="--device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile"
run8() { local name=$1; shift; timeout 120 $K generate --model /tmp/r8b-q8_0.gguf --package $P $G8 "$@" --json $R/prof-r8b-$name.json > $R/prof-r8b-$name.log 2>&1; line "r8b-$name" $R/prof-r8b-$name.log; ck; }
run8 used --kernels used
run8 all --kernels all
run8 used-keep --kernels used --l2 keep
run8 used-2 --kernels used
S=tools/engine/ref/generate.txt
runs() { local name=$1; shift; timeout 90 $K generate --model /tmp/rs-q4_1.gguf --package $P --device cuda --prompt-file $S -n 128 --ctx 512 --profile --json $R/prof-$name.json "$@" > $R/prof-$name.log 2>&1; line "$name" $R/prof-$name.log; ck; }
runs q4-short-off-1 --l2 off
runs q4-short-keep-1 --l2 keep
runs q4-short-off-2 --l2 off
runs q4-short-keep-2 --l2 keep
ck
