#!/usr/bin/env bash
# The second device call of the thirty-second session (2026-12-05), right after the first
# (h200-2026-12-05-first.sh) so that a still-warm machine reuses its llama.cpp peer build:
# issue 12's GEMV cases (the early-load fix's machine code) with llama.cpp's peer-bench
# (MUL_MAT, MUL_MAT_ID, rotated weights) in the same call, then issue 16's decode steps
# (SmolLM2 shapes, Q4_1 and Q8_0, at ~173, ~587 and ~2013 positions; the attention node also
# forced to the split-across-waves `r1x` / `r4x`) and llama-bench on the same files.
# Steps that find too little time left are skipped and say so. Knobs: BUDGET (s, default 575).
# Carry: the same folder .cxa as the first call, with llama-src.tgz (the llama-cpp-python 0.3.36
# sdist's vendor/llama.cpp pruned as scripts/engine-gpu-prepare.sh does) and this file as cB.sh.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cB; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cB.tgz -C /tmp cB; }
T0=$SECONDS
B=${BUDGET:-575}
left() { echo $((B - (SECONDS - T0))); }
lim() { local l; l=$(left); [ $l -gt $1 ] && echo $1 || echo $((l > 5 ? l : 5)); }
K=$(pwd)/.carry/kiln
rm -rf /tmp/pB; mkdir -p /tmp/pB; tar xJf .carry/lib.txz -C /tmp/pB
P=/tmp/pB/dist
V=.carry/smol-vocab.gguf
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
echo "peer build present: $([ -x /tmp/llb/bin/peer-bench ] && echo yes || echo no)"
grep -q PEER_FA_KV .peers/llamacpp/ggml/tests/peer-bench.cpp ||
  patch -p1 -d .peers/llamacpp < bench/peers/peer-bench-kiln.patch > $R/peer-patch.log 2>&1
( OUT=$R/peer STEPS="none" nice -n 5 bash .peers/llamacpp/run.sh > $R/peer-build.log 2>&1 ) &
GPID=$!
L=/tmp/llama-src
LB=$L/llama.cpp/build/bin/llama-bench
( [ -x $LB ] || { mkdir -p $L && tar xzf .carry/llama-src.tgz -C $L && cd $L/llama.cpp && \
  cmake -S . -B build -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_CURL=OFF \
    -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=ON && nice -n 5 ninja -C build -j12 llama-bench; }
  echo "BUILD-END $(date -u)" ) > $R/llama_build.log 2>&1 &
LPID=$!
( $K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf
  $K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf
  sha256sum /tmp/rs-q4_1.gguf /tmp/rs-q8_0.gguf ) > $R/models.log 2>&1 &
MPID=$!
G=gemv_q8_0_rp_k4_n14336_t1,gemv_q8_0_rp_k4_n14336_t4,gemv_q8_0_rp_k4_n14336_t8,gemv_q8_0_rp_k4_n4096_t1,gemv_q8_0_rp_k4_n4096_t8
timeout $(lim 110) $K bench --package $P --kernel $G --json $R/bench-k4.json > $R/bench-k4.log 2>&1
echo "bench k4 rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/bench-k4.log | sort -u | cut -c1-200; ck
G=gemv_q8_0_rp_n14336_t1,gemv_q8_0_rp_n4096_t1,gemv_q4_0_rp_n14336_t1,gemv_q4_1_rp_n14336_t1,gemv_moe_q8_0_qwen3_t1,gemv_moe_q8_0_qwen3_t8
timeout $(lim 130) $K bench --package $P --kernel $G --json $R/bench-t1.json > $R/bench-t1.log 2>&1
echo "bench t1/moe rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/bench-t1.log | sort -u | cut -c1-200; ck
wait $MPID
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c20-140) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
run() { local name=$1 m=$2 pf=$3 ctx=$4; shift 4
  [ $(left) -gt 70 ] || { echo "$name skipped: $(left) s left"; return; }
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
for v in r1x r4x; do run q4-long-$v rs-q4_1 /tmp/long41.txt 2304 $A=$v; done
if [ $(left) -gt 60 ]; then
  wait $GPID; echo "peer build: $(tail -n 2 $R/peer/build.txt 2>/dev/null | tr '\n' ' ' | cut -c1-200)"
  OUT=$R/peer STEPS="peer" DEADLINE=$(lim 150) bash .peers/llamacpp/run.sh > $R/peer-run.log 2>&1
  echo "peer rc $? ($((SECONDS - T0)) s)"
  grep -iE "MUL_MAT" $R/peer/peer.txt 2>/dev/null | grep -E "q8_0|q4" | grep -E "m=(4096|14336)|ID" | cut -c1-150 | head -24
else echo "peer skipped: $(left) s left"; fi
ck
if [ $(left) -gt 50 ]; then
  wait $LPID; tail -n 2 $R/llama_build.log
  if [ -x $LB ]; then
    for m in rs-q4_1 rs-q8_0; do
      timeout $(lim 100) $LB -m /tmp/$m.gguf -ngl 99 -fa 1 -p 0 -n 128 -d 0,512,2048 -r 3 -o md > $R/llama-bench-$m.md 2> $R/llama-bench-$m.err
      echo "llama-bench $m:"; grep -h 'tg128' $R/llama-bench-$m.md; ck
    done
  fi
else echo "llama-bench skipped: $(left) s left"; fi
echo "end ($((SECONDS - T0)) s)"
ck
