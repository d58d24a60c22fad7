#!/usr/bin/env bash
# Prefetch A/B (2026-12-01, fifth session): packages `base` (HEAD 5d8a40b's kernels) and `pf` (the
# GEMV workgroups prefetch their weight rows into L2 before griddepcontrol.wait). Parity on cuda of
# every dense GEMV family of `pf`, the engine digest, kiln bench of both on issue 12's cases, the
# engine's step (SmolLM2 and Llama-3-8B shapes) interleaved base/pf, llama.cpp's MUL_MAT and
# llama-bench in the same call.
set -uo pipefail
O=${OUT:-/tmp/out}; R=$O/p1; mkdir -p $R
export PYTHONUNBUFFERED=1
K=./.carry/kiln
for p in base pf; do rm -rf /tmp/$p && mkdir -p /tmp/$p && tar xzf .carry/$p.tgz -C /tmp/$p; done
V=.carry/smol-vocab.gguf
cp .carry/p1.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
L=/tmp/llama-src
(
  mkdir -p $L && tar xzf .carry/engine/llama-src.tgz -C $L
  cmake -S $L -B $L/build -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_CURL=OFF \
    -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=ON
  ninja -C $L/build -j8 llama-bench
  echo BUILD-END
) > $R/llama_build.log 2>&1 &
BPID=$!
(STEPS="peer" OUT=$R/llamacpp DEADLINE=420 bash .peers/llamacpp/run.sh > $R/llamacpp.out 2>&1) &
( for q in q4_1 q8_0; do $K random-model --shape smollm2-135m --type $q --vocab-from $V -o /tmp/rs-$q.gguf; done
  $K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf ) > $R/models.log 2>&1 &
WPID=$!
FAM=$(ls /tmp/pf/dist | grep '^gemv_' | grep -v moe | paste -sd, -)
timeout 150 $K parity --device cuda --package /tmp/pf/dist --kernel $FAM > $R/parity-cuda.log 2>&1; tail -n 1 $R/parity-cuda.log
CASES=gemv_q8_0_rp,gemv_q8_0_rp_res,gemv_q4_0_rp_n14336_t1,gemv_q4_1_rp_n14336_t1
for p in base pf; do
  timeout 100 $K bench --package /tmp/$p/dist --kernel $CASES --variant p1r2u8w2,p8r4,tuned_t5_8_nlo,tuned_t2_nhi,p4r2,p1,p1r1u16w2 --json $R/bench-$p.json > $R/bench-$p.log 2>&1
  echo "bench $p"; grep -E "^gemv" $R/bench-$p.log | cut -c1-75
done
wait $WPID; sha256sum /tmp/rs-*.gguf /tmp/r8b-q8_0.gguf > $R/models.sha256
timeout 60 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/pf/dist --device cuda --oracle tools/engine/tests/data/oracle-q4_1.json --positions 16 > $R/digest-q4_1.log 2>&1
grep -h "digests" $R/digest-q4_1.log | cut -c1-120
G="--device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile"
for i in 1 2; do for p in base pf; do for m in rs-q4_1 rs-q8_0; do
  timeout 60 $K generate --model /tmp/$m.gguf --package /tmp/$p/dist $G --json $R/prof-$m-$p-$i.json > $R/prof-$m-$p-$i.log 2>&1
  echo "$m $p $i: $(grep -h 'wall time' $R/prof-$m-$p-$i.log | cut -c1-120) | $(grep -h 'decode:' $R/prof-$m-$p-$i.log | cut -c1-60)"
done; done; done
G8="--device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile"
for p in base pf base pf; do
  timeout 100 $K generate --model /tmp/r8b-q8_0.gguf --package /tmp/$p/dist $G8 --json $R/prof-r8b-$p.json > $R/prof-r8b-$p.log 2>&1
  echo "r8b $p: $(grep -h 'wall time' $R/prof-r8b-$p.log | cut -c1-120) | $(grep -h 'decode:' $R/prof-r8b-$p.log | cut -c1-60)"
done
tar czf $O/p1.tgz -C $O p1
wait $BPID
if [ -x $L/build/bin/llama-bench ]; then
  for m in rs-q4_1 rs-q8_0; do
    timeout 60 $L/build/bin/llama-bench -m /tmp/$m.gguf -ngl 99 -fa 1 -p 0 -n 128 -d 0,512 -r 3 -o md > $R/llama-bench-$m.md 2> $R/llama-bench-$m.err
  done
  timeout 90 $L/build/bin/llama-bench -m /tmp/r8b-q8_0.gguf -ngl 99 -fa 1 -p 0 -n 128 -d 0 -r 3 -o md > $R/llama-bench-r8b-q8_0.md 2> $R/llama-bench-r8b-q8_0.err
fi
cat $R/llama-bench-*.md 2>/dev/null | grep -E "tg"
tail -1 $R/llama_build.log
wait
grep -h "MUL_MAT" $R/llamacpp/*.txt $R/llamacpp/*.log 2>/dev/null | grep -v MUL_MAT_ID | head -20
tar czf $O/p1.tgz -C $O p1
