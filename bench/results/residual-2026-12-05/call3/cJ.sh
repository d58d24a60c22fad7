#!/usr/bin/env bash
# The third device call of the thirty-third session (2026-12-05): `r1x` with its split's first
# K and V loads asked for before q (lib) against the package before it (lib-prev: the first two
# calls' changes), SmolLM2-shaped steps at ~587 and ~2013 positions (where r1x is routed), and
# at ~173 (unchanged code: a control); cuda parity of the head-dim-64 Q8_0 families; llama-bench
# (built here) on the same files. Carry: .cxa.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cJ; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cJ.tgz -C /tmp cJ; }
T0=$SECONDS; B=${BUDGET:-570}
left() { echo $((B - (SECONDS - T0))); }
lim() { local l; l=$(left); [ $l -gt $1 ] && echo $1 || echo $((l > 5 ? l : 5)); }
K=$(pwd)/.carry/kiln
for p in lib lib-prev; do rm -rf /tmp/p-$p; mkdir -p /tmp/p-$p; tar xJf .carry/$p.txz -C /tmp/p-$p; done
V=.carry/smol-vocab.gguf
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
L=/tmp/llama-src; LB=$L/llama.cpp/build/bin/llama-bench
( [ -x $LB ] || { rm -rf $L; mkdir -p $L/llama.cpp && tar xzf .carry/llama-src.tgz -C $L/llama.cpp && cd $L/llama.cpp && \
  cmake -S . -B build -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_CURL=OFF \
    -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=ON && nice ninja -C build -j12 llama-bench; }
  echo "BUILD-END $(date -u)" ) > $R/llama_build.log 2>&1 &
LPID=$!
for m in q4_1 q8_0; do
  [ -f /tmp/rs-$m.gguf ] || $K random-model --shape smollm2-135m --type $m --vocab-from $V -o /tmp/rs-$m.gguf >> $R/models.log 2>&1
done
sha256sum /tmp/rs-q4_1.gguf /tmp/rs-q8_0.gguf > $R/models.sha256 2>&1
timeout $(lim 100) $K parity --device cuda --package /tmp/p-lib/dist --kernel attention_decode_rope_q8_0_d64_q8_1s,attention_decode_q8_0_d64 > $R/parity.log 2>&1
echo "parity rc $? ($((SECONDS - T0)) s): $(grep -E 'passed' $R/parity.log | tail -3 | tr '\n' ' ')"; ck
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c20-110) | $(grep -h 'attention_decode' $2 | head -1 | cut -c38-70) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
run() { local name=$1 m=$2 pk=$3 pf=$4 ctx=$5; shift 5
  [ $(left) -gt 150 ] || { echo "$name skipped"; return; }
  env "$@" timeout 40 $K generate --model /tmp/$m.gguf --package /tmp/p-$pk/dist --device cuda --prompt-file $pf -n 128 --ctx $ctx --profile --json $R/prof-$name.json > $R/prof-$name.log 2>&1
  line "$name" $R/prof-$name.log; ck; }
for i in $(seq 10); do cat tools/engine/ref/generate.txt; done > /tmp/long10.txt
for i in $(seq 41); do cat tools/engine/ref/generate.txt; done > /tmp/long41.txt
S=tools/engine/ref/generate.txt
for pos in mid:/tmp/long10.txt:1024 long:/tmp/long41.txt:2304; do
  IFS=: read tag pf ctx <<< "$pos"
  for m in q4 q8; do
    mm=rs-q4_1; [ $m = q8 ] && mm=rs-q8_0
    run $m-$tag $mm lib $pf $ctx X=1
    run $m-$tag-prev $mm lib-prev $pf $ctx X=1
  done
done
run q4-short rs-q4_1 lib $S 512 X=1
run q8-short rs-q8_0 lib $S 512 X=1
wait $LPID; tail -n 2 $R/llama_build.log
if [ -x $LB ]; then
  for m in rs-q4_1 rs-q8_0; do
    timeout $(lim 100) $LB -m /tmp/$m.gguf -ngl 99 -fa 1 -p 0 -n 128 -d 0,512,2048 -r 3 -o md > $R/llama-bench-$m.md 2> $R/llama-bench-$m.err
    echo "llama-bench $m:"; grep -h 'tg128' $R/llama-bench-$m.md; ck
  done
fi
echo "end ($((SECONDS - T0)) s)"; ck
