#!/usr/bin/env bash
# Call 5 (2026-12-02): ablations of attention_prefill's wide variants: w4 / w4q against the
# same without the mask and rescale skips (w4s, w4qs) and with every lane gathering the quad's
# p for l (w4g, w4qg); then the SmolLM2-shaped decode step once with the magic-number exp.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c5; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c5.tgz -C /tmp c5; }
K=./.carry/kiln
rm -rf /tmp/pf5 /tmp/a && mkdir -p /tmp/pf5 /tmp/a && tar xzf .carry/pf5.tgz -C /tmp/pf5 && tar xzf .carry/a.tgz -C /tmp/a
cp .carry/c5.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
( $K random-model --shape smollm2-135m --type q4_1 --vocab-from .carry/smol-vocab.gguf -o /tmp/rs-q4_1.gguf > $R/models.log 2>&1 ) &
MPID=$!
S=$(date +%s)
timeout 200 $K bench --package /tmp/pf5/dist --kernel attention_prefill_f16_d128,attention_prefill_q8_0_d128 --variant w4,w4s,w4g,w4q,w4qs,w4qg --json $R/bench.json > $R/bench.log 2>&1
echo "bench rc $? in $(( $(date +%s) - S )) s"; grep -E "^prefill" $R/bench.log | sort -u | cut -c1-170
ck
wait $MPID
timeout 60 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/a/dist --device cuda --prompt hi -n 2 > $R/warm.log 2>&1
timeout 60 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/a/dist --device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile --json $R/prof-rs-q4_1.json > $R/prof-rs-q4_1.log 2>&1
echo "smollm2 q4_1: $(grep -h 'wall time' $R/prof-rs-q4_1.log | cut -c1-150) | $(grep -h 'decode:' $R/prof-rs-q4_1.log | cut -c30-100)"
grep -E "attention_decode|swiglu" $R/prof-rs-q4_1.log | head -3
ck
