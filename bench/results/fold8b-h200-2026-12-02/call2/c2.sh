#!/usr/bin/env bash
# Call 2 (2026-12-02, eleventh session): the Llama-3-8B-shaped Q8_0 step with the RMSNorms folded
# into the Q/K/V and gate/up GEMVs (`--norms folded`) with the loads-first prologue (`p2a`,
# `p1r4w8a`, routed at k >= 2048 on sm_90) against apart; then parity of the two families on cuda.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c2; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c2.tgz -C /tmp c2; }
K=./.carry/kiln
mkdir -p /tmp/a && tar xzf .carry/a.tgz -C /tmp/a
cp .carry/c2.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
V=.carry/smol-vocab.gguf
( $K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf
  $K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf ) > $R/models.log 2>&1
sha256sum /tmp/r8b-q8_0.gguf /tmp/rs-q8_0.gguf > $R/models.sha256
G8="--model /tmp/r8b-q8_0.gguf --package /tmp/a/dist --device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile"
SW=KILN_ROUTE_GEMV_Q8_0_RP_SWIGLU_Q8_1S_NORM
QK=KILN_ROUTE_GEMV_Q8_0_RP_QKV_CACHE_NORM
run() {
  local name=$1 vars=$2 norms=$3
  env $vars timeout 150 $K generate $G8 --norms $norms --json $R/prof-$name.json > $R/prof-$name.log 2>&1
  echo "$name: $(grep -h 'wall time' $R/prof-$name.log | cut -c1-140) | $(grep -h 'decode:' $R/prof-$name.log | cut -c30-90)"
}
run apart-1 X=1 apart
ck
run fold-routed X=1 folded
ck
run fold-qkv-p1 "$QK=p1" folded
ck
run fold-routed-2 X=1 folded
ck
run apart-2 X=1 apart
ck
for i in 1; do
  timeout 60 $K generate --model /tmp/rs-q8_0.gguf --package /tmp/a/dist --device cuda --oracle tools/engine/tests/data/oracle-q8_0.json --positions 16 > $R/digest-q8_0.log 2>&1
  echo "digest q8_0: $(grep -h 'digests' $R/digest-q8_0.log | cut -c1-100)"
done
timeout 150 $K parity --device cuda --package /tmp/a/dist --kernel gemv_q8_0_rp_swiglu_q8_1s_norm,gemv_q8_0_rp_qkv_cache_norm > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 2 $R/parity.log | cut -c1-120 | tr '\n' ' ')"
ck
