#!/usr/bin/env bash
# Call 3 (2026-12-02): attention_prefill w4 / w4q after the exact-op savings (magic-number
# rounding in exp_portable, the quad chain for l, mask and rescale skips): parity on cuda of the
# prefill families and of every family whose IR the exp change touched, the engine's logit
# digests (random SmolLM2-shaped Q4_1, against the last session's), kiln bench of the d128
# prefill families, torch SDPA, and the float64 check (bench/prefill_ref.py) alongside.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c3; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c3.tgz -C /tmp c3; }
K=./.carry/kiln
rm -rf /tmp/a && mkdir -p /tmp/a && tar xzf .carry/a.tgz -C /tmp/a
cp .carry/c3.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
( $K random-model --shape smollm2-135m --type q4_1 --vocab-from .carry/smol-vocab.gguf -o /tmp/rs-q4_1.gguf > $R/models.log 2>&1; sha256sum /tmp/rs-q4_1.gguf >> $R/models.log ) &
MPID=$!
P=attention_prefill_f16_d64,attention_prefill_f16_d128,attention_prefill_q8_0_d64,attention_prefill_q8_0_d128
S=$(date +%s)
timeout 100 $K parity --device cuda --package /tmp/a/dist --kernel $P > $R/parity-prefill.log 2>&1
echo "parity prefill rc $? in $(( $(date +%s) - S )) s: $(tail -n 1 $R/parity-prefill.log | cut -c1-100)"
EXPF=attention_decode_q8_0_d64,attention_decode_rope_q8_0_d128_q8_1s,attention_decode_rope_q8_0_d64_q8_1s,gemv_q4_1_rp_swiglu_q8_1s_norm,gemv_q8_0_rp_swiglu_q8_1s_norm,gemv_q8_0_rp_swiglu,kv_append_q8_0,rope_f32,row_top_prob,swiglu,swiglu_quantize_q8_0
S=$(date +%s)
timeout 120 $K parity --device cuda --package /tmp/a/dist --kernel $EXPF > $R/parity-exp.log 2>&1
echo "parity exp families rc $? in $(( $(date +%s) - S )) s: $(grep -c '^ok' $R/parity-exp.log) ok; $(tail -n 1 $R/parity-exp.log | cut -c1-100)"
grep -E "^FAIL|failed" $R/parity-exp.log | head -3
ck
wait $MPID
timeout 60 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/a/dist --device cuda --prompt hi -n 2 > $R/warm.log 2>&1
timeout 60 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/a/dist --device cuda --oracle tools/engine/tests/data/oracle-q4_1.json --positions 16 > $R/digest-q4_1.log 2>&1
D=$(grep -h 'digests' $R/digest-q4_1.log | cut -c1-120); echo "digest q4_1: $D"
case "$D" in *6a0581f903b7ec382ef1f48b692d24a516c7d607bbdea016c6dbf9d376e82882*) echo "digest equals the last session's";; *) echo "DIGEST DIFFERS";; esac
ck
( PYTHONPATH=.carry/py timeout 280 python3 bench/prefill_ref.py --kiln $K --package /tmp/a/dist --device cuda --arch sm_90 --variants w4q,w4 --large > $R/ref.log 2>&1; echo "rc $?" >> $R/ref.log ) &
RPID=$!
S=$(date +%s)
timeout 200 $K bench --package /tmp/a/dist --kernel attention_prefill_f16_d128,attention_prefill_q8_0_d128 --variant w4q,w4 --json $R/bench.json > $R/bench.log 2>&1
echo "bench rc $? in $(( $(date +%s) - S )) s"; grep -E "^prefill" $R/bench.log | sort -u | cut -c1-130
ck
timeout 100 python3 bench/prefill_peers.py $R/sdpa.json > $R/sdpa.log 2>&1; tail -n 3 $R/sdpa.log
ck
wait $RPID
echo "ref: $(grep -c '^ok' $R/ref.log) ok, $(grep -c '^FAIL' $R/ref.log) failed; $(tail -n 1 $R/ref.log)"
ck
