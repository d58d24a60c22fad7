#!/usr/bin/env bash
# Last call of 2026-12-01 (third session): the committed code after the review's refactor of the
# tile epilogues (the same arithmetic, new IR): parity on cuda of every family it touched, and
# both SmolLM2-shaped models' logit digests against the interpreter's.
set -uo pipefail
O=${OUT:-/tmp/out}; R=$O/f; mkdir -p $R
K=./.carry/kiln
rm -rf /tmp/k && mkdir -p /tmp/k && tar xzf .carry/bundle.tgz -C /tmp/k; P=/tmp/k/dist
V=.carry/smol-vocab.gguf
( for q in q4_1 q8_0; do $K random-model --shape smollm2-135m --type $q --vocab-from $V -o /tmp/rs-$q.gguf; done ) > $R/models.log 2>&1 &
F=kv_append_q8_0,kv_append_f16,gemv_q8_0_rp_qkv_cache,gemv_q4_0_rp_qkv_cache,gemv_q4_1_rp_qkv_cache,gemv_q8_0_rp_qkv_cache_norm,gemv_q4_0_rp_qkv_cache_norm,gemv_q4_1_rp_qkv_cache_norm,gemv_q8_0_rp_swiglu_q8_1s,gemv_q4_0_rp_swiglu_q8_1s,gemv_q4_1_rp_swiglu_q8_1s,gemv_q8_0_rp_swiglu_q8_1s_norm,gemv_q4_0_rp_swiglu_q8_1s_norm,gemv_q4_1_rp_swiglu_q8_1s_norm
timeout 80 $K parity --device cuda --package $P --kernel $F > $R/parity-cuda.log 2>&1; tail -n 1 $R/parity-cuda.log
wait
for q in q4_1 q8_0; do
  timeout 40 $K generate --model /tmp/rs-$q.gguf --package $P --device cuda --oracle tools/engine/tests/data/oracle-$q.json --positions 16 > $R/digest-$q.log 2>&1
  grep -h "digests" $R/digest-$q.log | cut -c1-120
done
sha256sum /tmp/rs-*.gguf > $R/models.sha256
tar czf $O/f.tgz -C $O f
