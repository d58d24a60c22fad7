#!/usr/bin/env bash
# The seventh device call of the thirty-second session (2026-12-05): the package built after the
# re-tune (specs/tuning/sm_90.ron with `x`) and the head-dim-64 `r1x` route, checked on the GPU:
# the attention bench's routed variant at 4K / 32K keys (1 and 4 rows, `r4t256` beside it), and
# SmolLM2's decode steps as routed at ~173 / ~587 / ~2013 positions (the profile names the
# attention node's variant). Carry: .cxa with lib.txz of that package (the first call's layout).
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cG; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cG.tgz -C /tmp cG; }
T0=$SECONDS; B=${BUDGET:-150}
left() { echo $((B - (SECONDS - T0))); }
lim() { local l; l=$(left); [ $l -gt $1 ] && echo $1 || echo $((l > 5 ? l : 5)); }
K=$(pwd)/.carry/kiln
rm -rf /tmp/pG; mkdir -p /tmp/pG; tar xJf .carry/lib.txz -C /tmp/pG
P=/tmp/pG/dist; V=.carry/smol-vocab.gguf
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
( for m in q4_1 q8_0; do
  [ -f /tmp/rs-$m.gguf ] || $K random-model --shape smollm2-135m --type $m --vocab-from $V -o /tmp/rs-$m.gguf
  done; sha256sum /tmp/rs-q4_1.gguf /tmp/rs-q8_0.gguf ) > $R/models.log 2>&1 &
MPID=$!
timeout $(lim 50) $K bench --package $P --kernel attn_q8_0_ctx4k_t1,attn_q8_0_ctx32k_t1,attn_q8_0_ctx4k_t4,attn_q8_0_ctx32k_t4 --variant r4t256,r4x2 --replays 10 --json $R/bench-attn.json > $R/bench-attn.log 2>&1
echo "attn rc $? ($((SECONDS - T0)) s)"; grep -E "^attn" $R/bench-attn.log | sort -u | cut -c1-200; ck
wait $MPID
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c20-110) | $(grep -h 'attention_decode' $2 | head -1 | cut -c1-80) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
for i in $(seq 10); do cat tools/engine/ref/generate.txt; done > /tmp/long10.txt
for i in $(seq 41); do cat tools/engine/ref/generate.txt; done > /tmp/long41.txt
for m in q8_0 q4_1; do
  for pos in p173:tools/engine/ref/generate.txt:512 p587:/tmp/long10.txt:1024 p2013:/tmp/long41.txt:2304; do
    IFS=: read tag pf ctx <<< "$pos"
    [ $(left) -gt 15 ] || { echo "$m $tag skipped"; continue; }
    timeout 30 $K generate --model /tmp/rs-$m.gguf --package $P --device cuda --prompt-file $pf -n 128 --ctx $ctx --profile --json $R/prof-$m-$tag.json > $R/prof-$m-$tag.log 2>&1
    line "$m $tag" $R/prof-$m-$tag.log; ck
  done
done
echo "end ($((SECONDS - T0)) s)"; ck
