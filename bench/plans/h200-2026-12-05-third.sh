#!/usr/bin/env bash
# The third device call of the thirty-second session (2026-12-05): llama-bench (llama-cpp-python
# 0.3.36's vendor/llama.cpp, CUDA sm_90, built here) on the SmolLM2-shaped files, with kiln's
# decode steps on the same files in the same call (issue 16's 2x). Carry: .cxa as in the first call
# (llama-src.tgz holds the pruned tree's top level, so it unpacks into $L/llama.cpp).
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cC; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cC.tgz -C /tmp cC; }
T0=$SECONDS; B=${BUDGET:-575}
left() { echo $((B - (SECONDS - T0))); }
lim() { local l; l=$(left); [ $l -gt $1 ] && echo $1 || echo $((l > 5 ? l : 5)); }
K=$(pwd)/.carry/kiln
rm -rf /tmp/pC; mkdir -p /tmp/pC; tar xJf .carry/lib.txz -C /tmp/pC
P=/tmp/pC/dist; V=.carry/smol-vocab.gguf
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
L=/tmp/llama-src; LB=$L/llama.cpp/build/bin/llama-bench
( [ -x $LB ] || { rm -rf $L; mkdir -p $L/llama.cpp && tar xzf .carry/llama-src.tgz -C $L/llama.cpp && cd $L/llama.cpp && \
  cmake -S . -B build -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_CURL=OFF \
    -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=ON && ninja -C build -j15 llama-bench; }
  echo "BUILD-END $(date -u)" ) > $R/llama_build.log 2>&1 &
LPID=$!
for m in q4_1 q8_0; do
  [ -f /tmp/rs-$m.gguf ] || $K random-model --shape smollm2-135m --type $m --vocab-from $V -o /tmp/rs-$m.gguf >> $R/models.log 2>&1
done
sha256sum /tmp/rs-q4_1.gguf /tmp/rs-q8_0.gguf > $R/models.sha256 2>&1
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c20-140) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
run() { local name=$1 m=$2 pf=$3 ctx=$4; shift 4
  env "$@" timeout 45 $K generate --model /tmp/$m.gguf --package $P --device cuda --prompt-file $pf -n 128 --ctx $ctx --profile --json $R/prof-$name.json > $R/prof-$name.log 2>&1
  line "$name" $R/prof-$name.log; ck; }
for i in $(seq 10); do cat tools/engine/ref/generate.txt; done > /tmp/long10.txt
for i in $(seq 41); do cat tools/engine/ref/generate.txt; done > /tmp/long41.txt
S=tools/engine/ref/generate.txt
for pos in short:$S:512 mid:/tmp/long10.txt:1024 long:/tmp/long41.txt:2304; do
  IFS=: read tag pf ctx <<< "$pos"
  run q4-$tag rs-q4_1 $pf $ctx X=1
  run q8-$tag rs-q8_0 $pf $ctx X=1
done
A=KILN_ROUTE_ATTENTION_DECODE_ROPE_Q8_0_D64_Q8_1S
for v in r1x r4x2; do run q4-long-$v rs-q4_1 /tmp/long41.txt 2304 $A=$v; run q8-long-$v rs-q8_0 /tmp/long41.txt 2304 $A=$v; done
wait $LPID; tail -n 3 $R/llama_build.log
if [ -x $LB ]; then
  for m in rs-q4_1 rs-q8_0; do
    timeout $(lim 100) $LB -m /tmp/$m.gguf -ngl 99 -fa 1 -p 0 -n 128 -d 0,512,2048 -r 3 -o md > $R/llama-bench-$m.md 2> $R/llama-bench-$m.err
    echo "llama-bench $m:"; grep -h 'tg128' $R/llama-bench-$m.md; ck
  done
fi
echo "end ($((SECONDS - T0)) s)"; ck
