#!/usr/bin/env bash
# GEMV T=1 routes, final: parity, kiln bench, the pure-read ceiling, llama.cpp's MUL_MAT, and the
# engine's step on Llama-3-8B's and SmolLM2's shapes (random Q8_0 weights), in one call.
set -uo pipefail
O=${OUT:-/tmp/out}; R=$O/r; mkdir -p $R
export PYTHONUNBUFFERED=1
K=./.carry/kiln
rm -rf /tmp/k && mkdir -p /tmp/k && tar xzf .carry/bundle.tgz -C /tmp/k; P=/tmp/k/dist
V=.carry/smol-vocab.gguf
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
(STEPS="peer" OUT=$R/llamacpp DEADLINE=500 bash .peers/llamacpp/run.sh > $R/llamacpp.out 2>&1) &
( $K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf; $K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf ) > $R/models.log 2>&1 &
WPID=$!
timeout 120 $K parity --device cuda --package $P --kernel gemv_q8_0_rp,gemv_q8_0_rp_res --large > $R/parity.log 2>&1; tail -1 $R/parity.log
$K bench --package $P --kernel gemv_q8_0_rp,gemv_q8_0_rp_res,gemv_q4_0_rp_n14336_t1,gemv_q4_1_rp_n14336_t1 --json $R/bench.json > $R/bench.log 2>&1; grep -E "^gemv" $R/bench.log | cut -c1-60
wait $WPID
for m in r8b-q8_0 rs-q8_0; do
  timeout 90 $K generate --model /tmp/$m.gguf --package $P --device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile --json $R/prof-$m.json > $R/prof-$m.log 2>&1
  grep -h -A14 "profile of a decode" $R/prof-$m.log; grep -h "decode:" $R/prof-$m.log
done
timeout 150 python3 bench/read_roofline.py --json $R/read.json > $R/read.log 2>&1; cat $R/read.log
wait
grep -h "MUL_MAT" $R/llamacpp/*.txt $R/llamacpp/*.log 2>/dev/null | grep -v MUL_MAT_ID | head -30
tail -3 $R/llamacpp.out
tar czf $O/r.tgz -C $O r
