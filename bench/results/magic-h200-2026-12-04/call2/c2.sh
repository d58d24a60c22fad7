#!/usr/bin/env bash
# Call 2 (2026-12-04, twenty-first session): early twins (first weight blocks loaded before
# griddepcontrol.wait) for the Q4 residual GEMVs and every format's norm-prologue kernels of
# SmolLM2's step (`_swiglu_q8_1s_norm` p1e for Q4_0 / Q4_1, `_qkv_cache_norm` p1e for all three).
# Parity on cuda of the eight families; the SASS order of the new variants; SmolLM2-shaped
# steps (Q4_1 and Q8_0) at ~173, ~587 and ~2013 positions with the new routes (auto) and the old
# ones forced, alternating; logit digests; llama-bench (built in the background from the
# llama-cpp-python 0.3.36 sdist) at depths 0, 512, 2048 on the same files last.
# Run as `bash .carry/c2.sh` with .carry/{kiln,c2.tgz,smol-vocab.gguf,llama-src.tgz}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c2; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c2.tgz -C /tmp c2; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/p2; mkdir -p /tmp/p2; tar xzf .carry/c2.tgz -C /tmp/p2
P=/tmp/p2/dist
V=.carry/smol-vocab.gguf
cp .carry/c2.sh $R/
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
F=gemv_q4_0_rp_res,gemv_q4_1_rp_res,gemv_q8_0_rp_swiglu_q8_1s_norm,gemv_q4_0_rp_swiglu_q8_1s_norm,gemv_q4_1_rp_swiglu_q8_1s_norm,gemv_q8_0_rp_qkv_cache_norm,gemv_q4_0_rp_qkv_cache_norm,gemv_q4_1_rp_qkv_cache_norm
timeout 120 $K parity --device cuda --package $P --kernel $F > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-120)"; grep -E "^FAIL" $R/parity.log | head -3
for x in gemv_q4_1_rp_res/p1u16w4e gemv_q4_1_rp_swiglu_q8_1s_norm/p1e gemv_q4_1_rp_qkv_cache_norm/p1e; do
  n=$(echo $x | tr / _)
  ptxas -arch=sm_90 $P/${x}.sm_90.ptx -o /tmp/$n.cubin 2> $R/ptxas-$n.log && cuobjdump -sass /tmp/$n.cubin | grep -nE "LDG|ACQBULK|CCTL|PREEXIT" > $R/sass-$n.order.txt
  echo "$x: $(grep -c LDG $R/sass-$n.order.txt) LDG, first ACQBULK at $(grep -m1 -n ACQBULK $R/sass-$n.order.txt | cut -d: -f1), LDG before it: $(awk '/ACQBULK/{exit} /LDG/{c++} END{print c+0}' $R/sass-$n.order.txt)"
done
ck
wait $MPID
sha256sum /tmp/rs-q4_1.gguf /tmp/rs-q8_0.gguf > $R/models.sha256 2>&1
for i in $(seq 10); do cat tools/engine/ref/generate.txt; done > /tmp/long10.txt
for i in $(seq 41); do cat tools/engine/ref/generate.txt; done > /tmp/long41.txt
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c20-140) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
run() { local name=$1 m=$2 pf=$3 ctx=$4; shift 4
  env "$@" timeout 60 $K generate --model /tmp/rs-$m.gguf --package $P --device cuda --prompt-file $pf -n 128 --ctx $ctx --profile --json $R/prof-$name.json > $R/prof-$name.log 2>&1
  line "$name" $R/prof-$name.log; ck; }
S=tools/engine/ref/generate.txt
OLD4="KILN_ROUTE_GEMV_Q4_1_RP_RES=p1 KILN_ROUTE_GEMV_Q4_1_RP_SWIGLU_Q8_1S_NORM=p1 KILN_ROUTE_GEMV_Q4_1_RP_QKV_CACHE_NORM=p1"
OLD8="KILN_ROUTE_GEMV_Q8_0_RP_QKV_CACHE_NORM=p1"
for rep in 1 2; do
  for pos in short:$S:512 mid:/tmp/long10.txt:1024 long:/tmp/long41.txt:2304; do
    IFS=: read tag pf ctx <<< "$pos"
    run q4-$tag-new-$rep q4_1 $pf $ctx X=1
    run q4-$tag-old-$rep q4_1 $pf $ctx $OLD4
    run q8-$tag-new-$rep q8_0 $pf $ctx X=1
    run q8-$tag-old-$rep q8_0 $pf $ctx $OLD8
  done
done
run q4-short-noqkv q4_1 $S 512 KILN_ROUTE_GEMV_Q4_1_RP_QKV_CACHE_NORM=p1
run q4-long-noqkv q4_1 /tmp/long41.txt 2304 KILN_ROUTE_GEMV_Q4_1_RP_QKV_CACHE_NORM=p1
for f in q4-short-new-1 q4-long-new-1 q8-long-new-1; do echo "== $f"; grep -A12 "kernel  " $R/prof-$f.log | cut -c1-110; done
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
