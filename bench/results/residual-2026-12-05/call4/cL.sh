#!/usr/bin/env bash
# The last device call of the thirty-third session (2026-12-05): the session's package on the
# GPU: the engine's logit digests with one-token (`--chunk 1`) and eight-token steps against the
# interpreter's (bench/results/digests-cpu-2026-12-05.md); cuda parity of the fused head-dim-128
# attention family (`r1x` with its first chunk before q); SmolLM2-shaped steps at ~173 / ~587 /
# ~2013 positions (no llama-bench: the device time left was too short to build it). Carry: .cxa.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cL; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cL.tgz -C /tmp cL; }
T0=$SECONDS; B=${BUDGET:-200}
left() { echo $((B - (SECONDS - T0))); }
lim() { local l; l=$(left); [ $l -gt $1 ] && echo $1 || echo $((l > 5 ? l : 5)); }
K=$(pwd)/.carry/kiln
rm -rf /tmp/p-lib; mkdir -p /tmp/p-lib; tar xJf .carry/lib.txz -C /tmp/p-lib
P=/tmp/p-lib/dist; V=.carry/smol-vocab.gguf
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
for m in q4_1 q8_0; do
  [ -f /tmp/rs-$m.gguf ] || $K random-model --shape smollm2-135m --type $m --vocab-from $V -o /tmp/rs-$m.gguf >> $R/models.log 2>&1
done
sha256sum /tmp/rs-q4_1.gguf /tmp/rs-q8_0.gguf > $R/models.sha256 2>&1
for m in q4_1 q8_0; do for c in 1 8; do
  timeout $(lim 40) $K generate --model /tmp/rs-$m.gguf --package $P --device cuda --oracle tools/engine/tests/data/oracle-$m.json --positions 16 --chunk $c > $R/digest-$m-c$c.log 2>&1
  echo "digest $m chunk $c rc $?: $(grep -h 'logits digests' $R/digest-$m-c$c.log | cut -c1-200)"; ck
done; done
timeout $(lim 60) $K parity --device cuda --package $P --kernel attention_decode_rope_q8_0_d128_q8_1s > $R/parity-attn.log 2>&1
echo "parity attn rc $? ($((SECONDS - T0)) s): $(tail -1 $R/parity-attn.log)"; ck
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c20-110) | $(grep -h 'attention_decode' $2 | head -1 | cut -c38-70) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
run() { local name=$1 m=$2 pf=$3 ctx=$4
  [ $(left) -gt 15 ] || { echo "$name skipped"; return; }
  timeout 40 $K generate --model /tmp/$m.gguf --package $P --device cuda --prompt-file $pf -n 128 --ctx $ctx --profile --json $R/prof-$name.json > $R/prof-$name.log 2>&1
  line "$name" $R/prof-$name.log; ck; }
for i in $(seq 10); do cat tools/engine/ref/generate.txt; done > /tmp/long10.txt
for i in $(seq 41); do cat tools/engine/ref/generate.txt; done > /tmp/long41.txt
for pos in short:tools/engine/ref/generate.txt:512 mid:/tmp/long10.txt:1024 long:/tmp/long41.txt:2304; do
  IFS=: read tag pf ctx <<< "$pos"
  run q4-$tag rs-q4_1 $pf $ctx
  run q8-$tag rs-q8_0 $pf $ctx
done
echo "end ($((SECONDS - T0)) s)"; ck
