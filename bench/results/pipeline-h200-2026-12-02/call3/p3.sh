#!/usr/bin/env bash
# Call 3 (2026-12-02, sixth session): NVPTX device-scope fences as `fence.acq_rel.gpu` instead of
# `membar.gl` (`fence.sc.gpu`): the `_res_rmsnorm` GEMVs against `_res` (call 2: 53 us more a
# call with the SC fences), the split decode attention (its last-workgroup combine), parity on
# cuda of the families with device fences, then Llama-3-8B's step with the norms in the residual
# GEMVs' tails (`auto`) against apart, and SmolLM2's logit digests. Short: the session's device
# time was nearly spent, so each step writes its logs at once.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/p3; rm -rf $R; mkdir -p $R
ck() { tar czf $O/p3.tgz -C /tmp p3; }
K=./.carry/kiln
rm -rf /tmp/c && mkdir -p /tmp/c && tar xzf .carry/c.tgz -C /tmp/c
V=.carry/smol-vocab.gguf
cp .carry/p3.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
( $K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf
  $K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf ) > $R/models.log 2>&1 &
MPID=$!
timeout 45 $K bench --package /tmp/c/dist --kernel gemv_q8_0_rp_res_rmsnorm_n4096_k4096_t1,gemv_q8_0_rp_res_rmsnorm_n4096_k14336_t1,gemv_q8_0_rp_res_n4096_k4096_t1,gemv_q8_0_rp_res_n4096_k14336_t1 --variant p1u16w4,p1u16w2 --json $R/bench-res.json > $R/bench-res.log 2>&1
grep -E "^gemv" $R/bench-res.log | cut -c1-150; ck
timeout 60 $K bench --package /tmp/c/dist --kernel attn_q8_0_ctx4k_t1,attn_q8_0_ctx32k_t1,attn_q8_0_ctx32k_t8 --variant r4t256,r8 --replays 10 --bandwidth-bytes 536870912 --json $R/bench-attn.json > $R/bench-attn.log 2>&1
grep -E "^attn" $R/bench-attn.log | cut -c1-120; ck
timeout 60 $K parity --device cuda --package /tmp/c/dist --kernel gemv_q8_0_rp_res_rmsnorm,gemv_q4_1_rp_res_rmsnorm,attention_decode_q8_0_d128,attention_decode_rope_q8_0_d128_q8_1s,argmax_rows > $R/parity-cuda.log 2>&1
echo "parity: ok $(grep -c '^ok' $R/parity-cuda.log); $(tail -n 1 $R/parity-cuda.log | cut -c1-90)"; ck
wait $MPID; sha256sum /tmp/rs-q4_1.gguf /tmp/r8b-q8_0.gguf > $R/models.sha256
for nm in residual auto; do
  timeout 40 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/c/dist --device cuda --norms $nm --oracle tools/engine/tests/data/oracle-q4_1.json --positions 16 > $R/digest-q4_1-$nm.log 2>&1
  echo "digest q4_1 $nm: $(grep -h 'digests' $R/digest-q4_1-$nm.log | cut -c36-110)"
done; ck
G8="--device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile"
for nm in auto apart; do
  timeout 70 $K generate --model /tmp/r8b-q8_0.gguf --package /tmp/c/dist $G8 --norms $nm --json $R/prof-r8b-$nm.json > $R/prof-r8b-$nm.log 2>&1
  echo "r8b $nm: $(grep -h 'wall time' $R/prof-r8b-$nm.log | cut -c1-110) | $(grep -h 'decode:' $R/prof-r8b-$nm.log | cut -c30-90)"; ck
done
