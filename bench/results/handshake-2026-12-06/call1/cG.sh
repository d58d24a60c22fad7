#!/usr/bin/env bash
# The thirty-fifth session's device call (2026-12-06): the last-workgroup handshake with three
# MEMBAR.ALL.GPU on lane 0's path instead of five (no fence in every lane before its barrier,
# none of lane 0's own before the atomic, the atomic one `atom.acq_rel.gpu`). Package `old` (the
# thirty-fourth session's) against `new` (this session's) in the same call: the runtime's cuda
# device tests; SmolLM2-shaped steps (random Q4_1 / Q8_0 weights) at ~2013, ~587 and ~173
# positions, pairs alternated; issue 13's attention cases; llama-bench on the same files (its
# build runs on the CPU meanwhile); cuda parity of the families with the handshake (new
# package, the interpreter as the reference). Carry: .cxb.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cG; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cG.tgz -C /tmp cG; }
T0=$SECONDS; B=${BUDGET:-560}
left() { echo $((B - (SECONDS - T0))); }
lim() { local l; l=$(left); [ $l -gt $1 ] && echo $1 || echo $((l > 5 ? l : 5)); }
C=$(pwd)/.cxb
xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; K=/tmp/kiln
rm -rf /tmp/pold /tmp/pnew; mkdir -p /tmp/pold /tmp/pnew
tar xJf $C/lib.txz -C /tmp/pold; tar xJf $C/libF.txz -C /tmp/pnew
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
L=/tmp/llama-src
LB=$L/llama.cpp/build/bin/llama-bench
( [ -x $LB ] || { mkdir -p $L && tar xzf $C/llama-src.tgz -C $L && cd $L/llama.cpp && \
  cmake -S . -B build -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_CURL=OFF \
    -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=ON && nice -n 5 ninja -C build -j12 llama-bench; }
  echo "BUILD-END $(date -u)" ) > $R/llama_build.log 2>&1 &
LPID=$!
xz -dc $C/rt-tests.xz > /tmp/rt-tests && chmod +x /tmp/rt-tests
timeout 60 /tmp/rt-tests --ignored cuda --test-threads=1 > $R/device-tests.log 2>&1
echo "device tests rc $?: $(grep -E '^test result' $R/device-tests.log)"; ck
V=$C/smol-vocab.gguf
( $K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf
  $K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf
  sha256sum /tmp/rs-q4_1.gguf /tmp/rs-q8_0.gguf ) > $R/models.log 2>&1
S=tools/engine/ref/generate.txt
for i in $(seq 10); do cat $S; done > /tmp/long10.txt
for i in $(seq 41); do cat $S; done > /tmp/long41.txt
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c20-120) | $(grep -h 'rope_q8_0_d64' $2 | head -1 | cut -c1-90) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
run() { local name=$1 pkg=$2 m=$3 pf=$4 ctx=$5
  [ $(left) -gt 30 ] || { echo "$name skipped: $(left) s left"; return; }
  timeout 40 $K generate --model /tmp/$m.gguf --package /tmp/p$pkg/dist --device cuda --prompt-file $pf -n 128 --ctx $ctx --profile --json $R/prof-$name.json > $R/prof-$name.log 2>&1
  line "$name" $R/prof-$name.log; ck; }
run old-q4-long old rs-q4_1 /tmp/long41.txt 2304
run new-q4-long new rs-q4_1 /tmp/long41.txt 2304
run new-q8-long new rs-q8_0 /tmp/long41.txt 2304
run old-q8-long old rs-q8_0 /tmp/long41.txt 2304
A=attn_q8_0_ctx4k_t1,attn_q8_0_ctx32k_t1,attn_q8_0_ctx4k_t8,attn_q8_0_ctx32k_t8
for pkg in old new; do
  timeout $(lim 50) $K bench --package /tmp/p$pkg/dist --kernel $A --variant tuned_t1_short,tuned_t1_long,r8 --replays 10 --json $R/bench-attn-$pkg.json > $R/bench-attn-$pkg.log 2>&1
  echo "attn $pkg rc $? ($((SECONDS - T0)) s)"; grep -E "^attn" $R/bench-attn-$pkg.log | sort -u | cut -c1-160; ck
done
run new-q4-mid new rs-q4_1 /tmp/long10.txt 1024
run old-q4-mid old rs-q4_1 /tmp/long10.txt 1024
run old-q8-mid old rs-q8_0 /tmp/long10.txt 1024
run new-q8-mid new rs-q8_0 /tmp/long10.txt 1024
if [ $(left) -gt 150 ]; then
  wait $LPID; tail -n 2 $R/llama_build.log
  if [ -x $LB ]; then
    for m in rs-q4_1 rs-q8_0; do
      timeout $(lim 60) $LB -m /tmp/$m.gguf -ngl 99 -fa 1 -p 0 -n 128 -d 0,512,2048 -r 3 -o md > $R/llama-bench-$m.md 2> $R/llama-bench-$m.err
      echo "llama-bench $m:"; grep -h 'tg128' $R/llama-bench-$m.md; ck
    done
  fi
else echo "llama-bench skipped: $(left) s left"; fi
run old-q4-short old rs-q4_1 $S 512
run new-q4-short new rs-q4_1 $S 512
run new-q8-short new rs-q8_0 $S 512
run old-q8-short old rs-q8_0 $S 512
F=attention_decode_rope_q8_0_d64_q8_1s,gemv_q4_1_rp_res_rmsnorm,gemv_q8_0_rp_res_rmsnorm,argmax_rows,row_top_prob
timeout $(lim 100) $K parity --device cuda --package /tmp/pnew/dist --kernel $F > $R/parity.log 2>&1
echo "parity rc $? ($((SECONDS - T0)) s): $(grep -E 'passed, [0-9]+ failed' $R/parity.log | tail -1)"; grep -E "^FAIL" $R/parity.log | head -3; ck
echo "end ($((SECONDS - T0)) s)"; ck
