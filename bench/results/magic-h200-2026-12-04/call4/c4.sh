#!/usr/bin/env bash
# Call 4 (2026-12-04, twenty-first session): the final routes. SmolLM2-shaped steps (Q4_1 and
# Q8_0) at ~173, ~587 and ~2013 positions with the routes (early twins of the residual GEMV and
# of the Q/K/V kernel with the norm prologue; the Q8_0 gate/up's as before), Q4_1 also with no
# early twin forced; parity on cuda of the families with new variants; logit digests;
# llama-bench (built in the background from the llama-cpp-python 0.3.36 sdist) at depths 0,
# 512, 2048 on the same files last.
# Run as `bash .carry/c4.sh` with .carry/{kiln,c4.tgz,smol-vocab.gguf,llama-src.tgz}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c4; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c4.tgz -C /tmp c4; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/p4; mkdir -p /tmp/p4; tar xzf .carry/c4.tgz -C /tmp/p4
P=/tmp/p4/dist
V=.carry/smol-vocab.gguf
cp .carry/c4.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nproc; } > $R/env.log 2>&1
L=/tmp/llama-src
( mkdir -p $L && tar xzf .carry/llama-src.tgz -C $L && cd $L/llama.cpp && \
  cmake -S . -B build -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_CURL=OFF \
    -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=ON && ninja -C build -j12 llama-bench; echo "BUILD-END $(date -u)" ) > $R/llama_build.log 2>&1 &
BPID=$!
( $K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf
  $K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf ) > $R/models.log 2>&1 &
MPID=$!
F=gemv_q4_0_rp_res,gemv_q4_1_rp_res,gemv_q8_0_rp_qkv_cache_norm,gemv_q4_0_rp_qkv_cache_norm,gemv_q4_1_rp_qkv_cache_norm
timeout 150 $K parity --device cuda --package $P --kernel $F > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-120)"; grep -E "^FAIL" $R/parity.log | head -3
ck
wait $MPID
sha256sum /tmp/rs-q4_1.gguf /tmp/rs-q8_0.gguf > $R/models.sha256 2>&1
for i in $(seq 10); do cat tools/engine/ref/generate.txt; done > /tmp/long10.txt
for i in $(seq 41); do cat tools/engine/ref/generate.txt; done > /tmp/long41.txt
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c20-110) | $(grep -h 'decode:' $2 | cut -c50-100)"; }
run() { local name=$1 m=$2 pf=$3 ctx=$4; shift 4
  env "$@" timeout 60 $K generate --model /tmp/rs-$m.gguf --package $P --device cuda --prompt-file $pf -n 128 --ctx $ctx --profile --json $R/prof-$name.json > $R/prof-$name.log 2>&1
  line "$name" $R/prof-$name.log; ck; }
S=tools/engine/ref/generate.txt
for pos in short:$S:512 mid:/tmp/long10.txt:1024 long:/tmp/long41.txt:2304; do
  IFS=: read tag pf ctx <<< "$pos"
  run q4-$tag-1 q4_1 $pf $ctx X=1
  run q4-$tag-none q4_1 $pf $ctx KILN_ROUTE_GEMV_Q4_1_RP_RES=p1 KILN_ROUTE_GEMV_Q4_1_RP_QKV_CACHE_NORM=p1
  run q8-$tag-1 q8_0 $pf $ctx X=1
  run q4-$tag-2 q4_1 $pf $ctx X=1
  run q8-$tag-2 q8_0 $pf $ctx X=1
done
for f in q4-short-1 q4-mid-1 q4-long-1; do echo "== $f"; grep -A12 "kernel  " $R/prof-$f.log | cut -c1-110; done
for m in q4_1 q8_0; do
  timeout 40 $K generate --model /tmp/rs-$m.gguf --package $P --device cuda --oracle tools/engine/tests/data/oracle-$m.json --positions 16 > $R/digest-$m.log 2>&1
  echo "digest $m: $(grep -h 'digest' $R/digest-$m.log | cut -c1-100)"
done
ck
wait $BPID
tail -n 2 $R/llama_build.log
LB=$L/llama.cpp/build/bin/llama-bench
if [ -x $LB ]; then
  for m in rs-q4_1 rs-q8_0; do
    timeout 150 $LB -m /tmp/$m.gguf -ngl 99 -fa 1 -p 0 -n 128 -d 0,512,2048 -r 3 -o md > $R/llama-bench-$m.md 2> $R/llama-bench-$m.err
    echo "llama-bench $m:"; grep -h 'tg128' $R/llama-bench-$m.md
    ck
  done
fi
ck
