#!/usr/bin/env bash
# The second device call the twenty-ninth session (2026-12-05, no device lent) left: the engine's
# steps re-timed after the early-load fix (docs/gemv.md, "The activations stay after the wait"),
# with llama-bench on the same files in the same call (issue 16's 2x), and (added in the
# thirtieth session) the attention node forced to the new `r1x` / `r4x`, and the steps with the
# package before the V rows' 64-bit indices (.carry/lib-prev.txz). Not run yet. Carry
# .carry/{kiln,lib.txz,smol-vocab.gguf,llama-src.tgz} (lib.txz: the sm_90 package of the commit
# to time; llama-src.tgz: the llama-cpp-python 0.3.36 sdist's vendor/llama.cpp, see
# ../shared/peers/llamacpp/README.md), then `bash .carry/c2.sh`. About 11 minutes.
set -uo pipefail
# REPS=1 PREV=0: one repetition, no A / B with the previous package, the forced split-across-waves
# variants at ~2013 positions only (about 6 minutes: the thirty-first session's shortened call).
REPS=${REPS:-2}; PREV=${PREV:-1}
O=${OUT:-/tmp/out}; R=/tmp/c2; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c2.tgz -C /tmp c2; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/p2; mkdir -p /tmp/p2; tar xJf .carry/lib.txz -C /tmp/p2
P=/tmp/p2/dist
V=.carry/smol-vocab.gguf
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
L=/tmp/llama-src
( mkdir -p $L && tar xzf .carry/llama-src.tgz -C $L && cd $L/llama.cpp && \
  cmake -S . -B build -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_CURL=OFF \
    -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=ON && nice -n 5 ninja -C build -j12 llama-bench; echo "BUILD-END $(date -u)" ) > $R/llama_build.log 2>&1 &
BPID=$!
$K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf > $R/models.log 2>&1
$K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf >> $R/models.log 2>&1
$K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf >> $R/models.log 2>&1
sha256sum /tmp/rs-q4_1.gguf /tmp/rs-q8_0.gguf /tmp/r8b-q8_0.gguf > $R/models.sha256 2>&1
for i in $(seq 10); do cat tools/engine/ref/generate.txt; done > /tmp/long10.txt
for i in $(seq 41); do cat tools/engine/ref/generate.txt; done > /tmp/long41.txt
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c20-140) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
run() { local name=$1 m=$2 pf=$3 ctx=$4; shift 4
  env "$@" timeout 60 $K generate --model /tmp/$m.gguf --package $P --device cuda --prompt-file $pf -n 128 --ctx $ctx --profile --json $R/prof-$name.json > $R/prof-$name.log 2>&1
  line "$name" $R/prof-$name.log; ck; }
S=tools/engine/ref/generate.txt
for rep in $(seq $REPS); do
  for pos in short:$S:512 mid:/tmp/long10.txt:1024 long:/tmp/long41.txt:2304; do
    IFS=: read tag pf ctx <<< "$pos"
    run q4-$tag-$rep rs-q4_1 $pf $ctx X=1
    run q8-$tag-$rep rs-q8_0 $pf $ctx X=1
  done
done
# The attention node by the split-across-waves variants (forced; not routed): SmolLM2's
# ~587 and ~2013 positions, where `short_r1t640` and `r1` are routed.
A=KILN_ROUTE_ATTENTION_DECODE_ROPE_Q8_0_D64_Q8_1S
for v in r1x r4x; do
  run q4-long-$v rs-q4_1 /tmp/long41.txt 2304 $A=$v
  run q8-long-$v rs-q8_0 /tmp/long41.txt 2304 $A=$v
  [ $REPS -gt 1 ] && run q4-mid-$v rs-q4_1 /tmp/long10.txt 1024 $A=$v
done
# A / B of the V rows' 64-bit indices (scan::v_rows_inside, thirtieth session: the routed Q8_0
# attention variants' machine code changed, not their bits): the steps again with the package
# before it (.carry/lib-prev.txz, commit 43fa4ef), where carried.
if [ $PREV = 1 ] && [ -f .carry/lib-prev.txz ]; then
  rm -rf /tmp/p2prev; mkdir -p /tmp/p2prev; tar xJf .carry/lib-prev.txz -C /tmp/p2prev
  PN=$P; P=/tmp/p2prev/dist
  for pos in mid:/tmp/long10.txt:1024 long:/tmp/long41.txt:2304; do
    IFS=: read tag pf ctx <<< "$pos"
    run prev-q4-$tag rs-q4_1 $pf $ctx X=1
    run prev-q8-$tag rs-q8_0 $pf $ctx X=1
  done
  P=$PN
fi
timeout 100 $K generate --model /tmp/r8b-q8_0.gguf --package $P --device cuda --prompt-file $S -n 64 --ctx 256 --profile --json $R/prof-r8b.json > $R/prof-r8b.log 2>&1
line "r8b" $R/prof-r8b.log; ck
wait $BPID; tail -n 2 $R/llama_build.log
LB=$L/llama.cpp/build/bin/llama-bench
if [ -x $LB ]; then
  for m in rs-q4_1 rs-q8_0; do
    timeout 150 $LB -m /tmp/$m.gguf -ngl 99 -fa 1 -p 0 -n 128 -d 0,512,2048 -r 3 -o md > $R/llama-bench-$m.md 2> $R/llama-bench-$m.err
    echo "llama-bench $m:"; grep -h 'tg128' $R/llama-bench-$m.md; ck
  done
  timeout 120 $LB -m /tmp/r8b-q8_0.gguf -ngl 99 -fa 1 -p 0 -n 128 -r 3 -o md > $R/llama-bench-r8b.md 2> $R/llama-bench-r8b.err
  echo "llama-bench r8b:"; grep -h 'tg128' $R/llama-bench-r8b.md
fi
ck
