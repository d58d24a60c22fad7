#!/usr/bin/env bash
# Which route makes the engine's cuda logits differ from the interpreter's?
OUT=${OUT:-/tmp/out}; R=/tmp/bisect; mkdir -p $R
K=./.carry/kiln
rm -rf /tmp/k; mkdir -p /tmp/k && tar xzf .carry/bundle.tgz -C /tmp/k
P=/tmp/k/dist
[ -s /tmp/rs-q4_1.gguf ] || $K random-model --shape smollm2-135m --type q4_1 --vocab-from .carry/smol-vocab.gguf -o /tmp/rs-q4_1.gguf
run() { name=$1; shift; env "$@" $K generate --model /tmp/rs-q4_1.gguf --package $P --device cuda --oracle tools/engine/tests/data/oracle-q4_1.json --positions 16 > $R/$name.log 2>&1; echo "$name: $(grep digests $R/$name.log | cut -c37-52) $(grep digests $R/$name.log | cut -c102-117)"; }
run default X=1
run noshort 'KILN_ROUTE_ATTENTION_DECODE_Q8_0_D64=!short'
run kvbase KILN_ROUTE_KV_APPEND_Q8_0=baseline
run qkvbase KILN_ROUTE_GEMV_Q4_1_RP_QKV=baseline
run swigbase KILN_ROUTE_GEMV_Q4_1_RP_SWIGLU_Q8_1S=baseline
run nooverlap KILN_OVERLAP=0
run allbase 'KILN_ROUTE_ATTENTION_DECODE_Q8_0_D64=!short' KILN_ROUTE_KV_APPEND_Q8_0=baseline KILN_ROUTE_GEMV_Q4_1_RP_QKV=baseline KILN_OVERLAP=0
run seq X=1
tar czf $OUT/bisect.tgz -C /tmp bisect
