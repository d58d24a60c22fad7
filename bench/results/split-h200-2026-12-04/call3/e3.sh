#!/usr/bin/env bash
# Call e3 (2026-12-04, twentieth session): the split norms, final package. llama.cpp's llama-bench
# built in the background from the llama-cpp-python 0.3.36 sdist's vendor/llama.cpp (pruned to
# llama-bench, CUDA sm_90); parity on cuda of the new families and of those whose Q8_1 scale word
# changed (NaN halves canonical); the Llama-3-8B-shaped step with the norms apart and split (and
# split with the block sums loaded late); SmolLM2-shaped steps and logit digests; llama-bench on
# the same three files last.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/e3; rm -rf $R; mkdir -p $R
ck() { tar czf $O/e3.tgz -C /tmp e3; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/ke3; mkdir -p /tmp/ke3; tar xzf .carry/e3.tgz -C /tmp/ke3
N=/tmp/ke3/dist
V=.carry/smol-vocab.gguf
cp .carry/e3.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nproc; } > $R/env.log 2>&1
L=/tmp/llama-src
( mkdir -p $L && tar xzf .carry/llama-src.tgz -C $L && cd $L/llama.cpp && \
  cmake -S . -B build -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_CURL=OFF \
    -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=ON && ninja -C build -j14 llama-bench; echo "BUILD-END $(date -u)" ) > $R/llama_build.log 2>&1 &
BPID=$!
( $K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf
  $K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf
  $K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf ) > $R/models.log 2>&1 &
MPID=$!
F=gemv_q8_0_rp_res_sq,gemv_q8_0_rp_rms,gemv_q8_0_rp_swiglu_q8_1s_rms,gemv_q8_0_rp_qkv_cache_rms,quantize_q8_1s_f32,quantize_q8_1_f32,rmsnorm_q8_1s_f32,gemv_q8_0_rp_swiglu_q8_1s,gemv_q4_1_rp_swiglu_q8_1s_norm,attention_decode_rope_q8_0_d64_q8_1s
timeout 170 $K parity --device cuda --package $N --kernel $F > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-120)"; grep -E "^FAIL" $R/parity.log | head -3
ck
wait $MPID
sha256sum /tmp/rs-q4_1.gguf /tmp/rs-q8_0.gguf /tmp/r8b-q8_0.gguf > $R/models.sha256 2>&1
cat /tmp/r8b-q8_0.gguf > /dev/null
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c1-200) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
G8="--device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile"
run() { local name=$1; shift; env "$@" timeout 100 $K generate --model /tmp/r8b-q8_0.gguf --package $N $G8 $NORMS --json $R/prof-r8b-$name.json > $R/prof-r8b-$name.log 2>&1; line "$name" $R/prof-r8b-$name.log; ck; }
NORMS="--norms apart" run apart-1 X=1
NORMS="" run auto-1 X=1
NORMS="--norms split" run split-qkvlate KILN_ROUTE_GEMV_Q8_0_RP_QKV_CACHE_RMS=p1l
NORMS="--norms split" run split-swlate KILN_ROUTE_GEMV_Q8_0_RP_SWIGLU_Q8_1S_RMS=p1r4u8w8el
NORMS="--norms split" run split-bothlate KILN_ROUTE_GEMV_Q8_0_RP_QKV_CACHE_RMS=p1l KILN_ROUTE_GEMV_Q8_0_RP_SWIGLU_Q8_1S_RMS=p1r4u8w8el
NORMS="--norms apart" run apart-2 X=1
NORMS="--norms split" run split-2 X=1
grep -A14 "kernel  " $R/prof-r8b-split-2.log | cut -c1-110
G="--device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile"
for m in q4_1 q8_0; do
  timeout 40 $K generate --model /tmp/rs-$m.gguf --package $N $G --json $R/prof-rs-$m.json > $R/prof-rs-$m.log 2>&1
  line "rs-$m" $R/prof-rs-$m.log
  timeout 40 $K generate --model /tmp/rs-$m.gguf --package $N --device cuda --oracle tools/engine/tests/data/oracle-$m.json --positions 16 > $R/digest-$m.log 2>&1
  echo "digest $m: $(grep -h 'digest' $R/digest-$m.log | cut -c1-100)"
done
ck
wait $BPID
tail -n 3 $R/llama_build.log
LB=$L/llama.cpp/build/bin/llama-bench
if [ -x $LB ]; then
  for m in r8b-q8_0 rs-q4_1 rs-q8_0; do
    timeout 60 $LB -m /tmp/$m.gguf -ngl 99 -fa 1 -p 0 -n 128 -r 3 -o md > $R/llama-bench-$m.md 2> $R/llama-bench-$m.err
    echo "llama-bench $m: $(grep -h 'tg128' $R/llama-bench-$m.md)"
    ck
  done
fi
ck
