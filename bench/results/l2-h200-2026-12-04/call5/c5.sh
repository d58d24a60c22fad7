#!/usr/bin/env bash
# Call 5 (2026-12-04, twenty-fifth session): the final figures. llama.cpp's llama-bench built
# from the llama-cpp-python 0.3.36 sdist (CUDA, sm_90) first, while the runtime's cuda tests
# run (with the new group and L2-window tests); then kiln (this commit's runtime-only binary,
# the whole-library sm_90 package `hist`, kernels unchanged since the twenty-fourth session)
# on the SmolLM2-shaped random models, Q4_1 and Q8_0, at ~173 / ~587 / ~2013 positions:
# `--kernels used` (the default now: only the step's modules loaded, after the whole package
# decided the placements) against `--kernels all`, and `--l2 keep` at ~2013; the logit
# digests; llama-bench on the same files last (depths 0, 512, 2048).
# Run as `bash .carry/c5.sh` with .carry/{kiln,rt-tests,hist.txz,smol-vocab.gguf,llama-src.tgz}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c5; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c5.tgz -C /tmp c5; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/hist; mkdir -p /tmp/hist; tar xf .carry/hist.txz -C /tmp/hist
P=/tmp/hist/dist
V=.carry/smol-vocab.gguf
cp .carry/c5.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nproc; } > $R/env.log 2>&1
L=/tmp/llama-src
( mkdir -p $L && tar xzf .carry/llama-src.tgz -C $L && cd $L && \
  cmake -S . -B build -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_CURL=OFF \
    -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=ON && timeout 330 ninja -C build -j14 llama-bench; echo "BUILD-END $(date -u)" ) > $R/llama_build.log 2>&1 &
BPID=$!
timeout 100 .carry/rt-tests --ignored cuda:: --test-threads 1 > $R/rt-tests.log 2>&1
echo "rt-tests rc $?: $(grep 'test result' $R/rt-tests.log)"; grep -E "FAILED|panicked" $R/rt-tests.log | head -5
$K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf > $R/models.log 2>&1
$K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf >> $R/models.log 2>&1
sha256sum /tmp/rs-*.gguf > $R/models.sha256
ck
wait $BPID; tail -n 1 $R/llama_build.log
for i in $(seq 10); do cat tools/engine/ref/generate.txt; done > /tmp/long10.txt
for i in $(seq 41); do cat tools/engine/ref/generate.txt; done > /tmp/long41.txt
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c20-40) | replay $(grep -h 'graph replay' $2 | sed 's/.*device //' | cut -c1-10) | $(grep -h 'decode:' $2 | sed 's/.*decode: //')"; }
run() { local name=$1 m=$2 pf=$3 ctx=$4; shift 4
  timeout 90 $K generate --model /tmp/rs-$m.gguf --package $P --device cuda --prompt-file $pf -n 128 --ctx $ctx --profile --json $R/prof-$name.json "$@" > $R/prof-$name.log 2>&1
  line "$name" $R/prof-$name.log; ck; }
S=tools/engine/ref/generate.txt
for pos in short:$S:512 mid:/tmp/long10.txt:1024 long:/tmp/long41.txt:2304; do
  IFS=: read tag pf ctx <<< "$pos"
  for m in q4_1 q8_0; do
    run $m-$tag-used $m $pf $ctx --kernels used
    run $m-$tag-all $m $pf $ctx --kernels all
  done
done
run q4_1-long-used-keep q4_1 /tmp/long41.txt 2304 --kernels used --l2 keep
run q8_0-long-used-keep q8_0 /tmp/long41.txt 2304 --kernels used --l2 keep
for m in q4_1 q8_0; do
  timeout 40 $K generate --model /tmp/rs-$m.gguf --package $P --device cuda --oracle tools/engine/tests/data/oracle-$m.json --positions 16 > $R/digest-$m.log 2>&1
  echo "digest $m: $(grep -h 'digest' $R/digest-$m.log | cut -c1-100)"
done
ck
LB=$L/build/bin/llama-bench
if [ -x $LB ]; then
  for m in rs-q4_1 rs-q8_0; do
    timeout 100 $LB -m /tmp/$m.gguf -ngl 99 -fa 1 -p 0 -n 128 -d 0,512,2048 -r 3 -o md > $R/llama-bench-$m.md 2> $R/llama-bench-$m.err
    echo "llama-bench $m:"; grep -h 'tg128' $R/llama-bench-$m.md
    ck
  done
fi
ck
