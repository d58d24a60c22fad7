#!/usr/bin/env bash
# The second device call of the thirty-third session (2026-12-05): (1) the Q/K/V cache kernel's
# early twin with K's RoPE angle computed before the wait (lib) against the package before it
# (lib-prev: the residual preload of call 1, Q4_1 gate/up forced to `p1` there as routed now),
# SmolLM2-shaped steps; (2) Nsight Compute of one decode step's layer at ~1900 positions (Q8_0:
# Q/K/V, attention `r1x`, residual, gate/up, residual); (3) the Llama-3-8B-shaped Q8_0 step and
# llama-bench on the same files (built here). Carry: .cxa.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cI; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cI.tgz -C /tmp cI; }
T0=$SECONDS; B=${BUDGET:-570}
left() { echo $((B - (SECONDS - T0))); }
lim() { local l; l=$(left); [ $l -gt $1 ] && echo $1 || echo $((l > 5 ? l : 5)); }
K=$(pwd)/.carry/kiln
for p in lib lib-prev; do rm -rf /tmp/p-$p; mkdir -p /tmp/p-$p; tar xJf .carry/$p.txz -C /tmp/p-$p; done
V=.carry/smol-vocab.gguf
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; ncu --version; } > $R/env.log 2>&1
cat $R/env.log
L=/tmp/llama-src; LB=$L/llama.cpp/build/bin/llama-bench
( [ -x $LB ] || { rm -rf $L; mkdir -p $L/llama.cpp && tar xzf .carry/llama-src.tgz -C $L/llama.cpp && cd $L/llama.cpp && \
  cmake -S . -B build -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_CURL=OFF \
    -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=ON && nice ninja -C build -j12 llama-bench; }
  echo "BUILD-END $(date -u)" ) > $R/llama_build.log 2>&1 &
LPID=$!
( [ -f /tmp/r8b-q8_0.gguf ] || nice $K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf; echo "R8B-END $(date -u)" ) > $R/models-r8b.log 2>&1 &
MPID=$!
for m in q4_1 q8_0; do
  [ -f /tmp/rs-$m.gguf ] || $K random-model --shape smollm2-135m --type $m --vocab-from $V -o /tmp/rs-$m.gguf >> $R/models.log 2>&1
done
sha256sum /tmp/rs-q4_1.gguf /tmp/rs-q8_0.gguf > $R/models.sha256 2>&1
F=gemv_q4_0_rp_qkv_cache_norm,gemv_q4_1_rp_qkv_cache_norm,gemv_q8_0_rp_qkv_cache_norm
timeout $(lim 60) $K parity --device cuda --package /tmp/p-lib/dist --kernel $F > $R/parity.log 2>&1
echo "parity rc $? ($((SECONDS - T0)) s): $(tail -1 $R/parity.log)"; ck
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c20-110) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
run() { local name=$1 m=$2 pk=$3 pf=$4 ctx=$5; shift 5
  [ $(left) -gt 200 ] || { echo "$name skipped"; return; }
  env "$@" timeout 40 $K generate --model /tmp/$m.gguf --package /tmp/p-$pk/dist --device cuda --prompt-file $pf -n 128 --ctx $ctx --profile --json $R/prof-$name.json > $R/prof-$name.log 2>&1
  line "$name" $R/prof-$name.log; ck; }
for i in $(seq 41); do cat tools/engine/ref/generate.txt; done > /tmp/long41.txt
S=tools/engine/ref/generate.txt
W=KILN_ROUTE_GEMV_Q4_1_RP_SWIGLU_Q8_1S_NORM
run q8-short rs-q8_0 lib $S 512 X=1
run q8-short-prev rs-q8_0 lib-prev $S 512 X=1
run q8-long rs-q8_0 lib /tmp/long41.txt 2304 X=1
run q8-long-prev rs-q8_0 lib-prev /tmp/long41.txt 2304 X=1
run q4-long rs-q4_1 lib /tmp/long41.txt 2304 X=1
run q4-long-prev rs-q4_1 lib-prev /tmp/long41.txt 2304 $W=p1
# Nsight Compute: five consecutive T = 1 nodes of one layer (the variants only decode uses), the
# 1001st match on: layer 20 of the seventh decode step (1886 prompt positions).
RX='regex:(_r1x|qkv_cache_norm_p1e|rp_res_p1u16w4e|swiglu_q8_1s_norm_p1e)$'
timeout $(lim 150) ncu --clock-control none --set full --import-source no -k "$RX" --launch-skip 1000 -c 5 -o $R/layer \
  $K generate --model /tmp/rs-q8_0.gguf --package /tmp/p-lib/dist --device cuda --prompt-file /tmp/long41.txt -n 16 --ctx 2304 > $R/ncu.run.log 2>&1
echo "ncu rc $? ($((SECONDS - T0)) s)"; tail -n 3 $R/ncu.run.log
if [ -f $R/layer.ncu-rep ]; then
  ncu -i $R/layer.ncu-rep --page details > $R/layer.details.txt 2>&1
  for k in _r1x qkv_cache_norm_p1e swiglu_q8_1s_norm_p1e rp_res_p1u16w4e; do
    ncu -i $R/layer.ncu-rep --page source --print-source sass --csv -k "regex:$k\$" -c 1 > $R/layer$k.sass.csv 2>&1
  done
  rm -f $R/layer.ncu-rep
fi
grep -E "^  [a-z_0-9]+_(r1x|p1e|p1u16w4e)|Duration|Registers Per|Achieved Occupancy" $R/layer.details.txt | head -30; ck
wait $MPID; cat $R/models-r8b.log | tail -2
if [ -f /tmp/r8b-q8_0.gguf ] && [ $(left) -gt 100 ]; then
  sha256sum /tmp/r8b-q8_0.gguf >> $R/models.sha256
  timeout $(lim 100) $K generate --model /tmp/r8b-q8_0.gguf --package /tmp/p-lib/dist --device cuda --prompt-file $S -n 64 --ctx 256 --profile --json $R/prof-r8b.json > $R/prof-r8b.log 2>&1
  echo "r8b: $(grep -h 'wall time' $R/prof-r8b.log | cut -c1-240) | $(grep -h 'decode:' $R/prof-r8b.log | cut -c30-90)"; ck
fi
wait $LPID; tail -n 2 $R/llama_build.log
if [ -x $LB ]; then
  for m in r8b-q8_0 rs-q4_1 rs-q8_0; do
    [ -f /tmp/$m.gguf ] && [ $(left) -gt 30 ] || continue
    timeout $(lim 90) $LB -m /tmp/$m.gguf -ngl 99 -fa 1 -p 0 -n 128 -d 0,2048 -r 3 -o md > $R/llama-bench-$m.md 2> $R/llama-bench-$m.err
    echo "llama-bench $m:"; grep -h 'tg128' $R/llama-bench-$m.md; ck
  done
fi
echo "end ($((SECONDS - T0)) s)"; ck
