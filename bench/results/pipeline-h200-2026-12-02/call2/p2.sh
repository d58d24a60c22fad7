#!/usr/bin/env bash
# Call 2 (2026-12-02, sixth session): the norms in the residual GEMVs' tails (`_res_rmsnorm`,
# `--norms residual`: the default on Llama-3-8B's shape) against the norms as nodes (`apart`)
# and folded (SmolLM2's default), each with the queued decode; the logit digests of every
# placement (bit for bit the same on the interpreter); parity on cuda of the new families and of
# the matrix-unit GEMV with two new unrolls (`wide_t2_g2`, `wide_t2_g4`, forced), timed at
# N = 14336; then llama.cpp's llama-bench built and run on the same files.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/p2; rm -rf $R; mkdir -p $R
ck() { tar czf $O/p2.tgz -C /tmp p2; }
K=./.carry/kiln
rm -rf /tmp/b && mkdir -p /tmp/b && tar xzf .carry/b.tgz -C /tmp/b
V=.carry/smol-vocab.gguf
cp .carry/p2.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
( for q in q4_1 q8_0; do $K random-model --shape smollm2-135m --type $q --vocab-from $V -o /tmp/rs-$q.gguf; done
  $K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf ) > $R/models.log 2>&1
sha256sum /tmp/rs-*.gguf /tmp/r8b-q8_0.gguf > $R/models.sha256
timeout 120 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/b/dist --device cuda --prompt hi -n 4 > $R/warm.log 2>&1
G="--device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile"
G8="--device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile"
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c1-110) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
for i in 1 2; do for nm in auto residual; do
  timeout 60 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/b/dist $G --norms $nm --json $R/prof-rs-q4_1-$nm-$i.json > $R/prof-rs-q4_1-$nm-$i.log 2>&1
  line "rs-q4_1 $nm $i" $R/prof-rs-q4_1-$nm-$i.log
done; done
for nm in auto residual; do
  timeout 60 $K generate --model /tmp/rs-q8_0.gguf --package /tmp/b/dist $G --norms $nm --json $R/prof-rs-q8_0-$nm.json > $R/prof-rs-q8_0-$nm.log 2>&1
  line "rs-q8_0 $nm" $R/prof-rs-q8_0-$nm.log
done
for i in 1 2; do for nm in auto apart; do
  timeout 100 $K generate --model /tmp/r8b-q8_0.gguf --package /tmp/b/dist $G8 --norms $nm --json $R/prof-r8b-$nm-$i.json > $R/prof-r8b-$nm-$i.log 2>&1
  line "r8b $nm $i" $R/prof-r8b-$nm-$i.log
done; done
ck
for q in q4_1 q8_0; do for nm in auto residual apart; do
  timeout 60 $K generate --model /tmp/rs-$q.gguf --package /tmp/b/dist --device cuda --norms $nm --oracle tools/engine/tests/data/oracle-$q.json --positions 16 > $R/digest-$q-$nm.log 2>&1
  echo "digest $q $nm: $(grep -h 'digests' $R/digest-$q-$nm.log | cut -c36-110)"
done; done
ck
L=/tmp/llama-src
(
  mkdir -p $L && tar xzf .carry/engine/llama-src.tgz -C $L
  cmake -S $L -B $L/build -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_CURL=OFF \
    -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=ON
  ninja -C $L/build -j16 llama-bench
  echo BUILD-END
) > $R/llama_build.log 2>&1 &
BPID=$!
timeout 120 $K parity --device cuda --package /tmp/b/dist --kernel gemv_q8_0_rp_res_rmsnorm,gemv_q4_0_rp_res_rmsnorm,gemv_q4_1_rp_res_rmsnorm,gemv_q8_0_rp_k4 > $R/parity-cuda.log 2>&1
echo "parity: ok $(grep -c '^ok' $R/parity-cuda.log); $(tail -n 1 $R/parity-cuda.log | cut -c1-90)"
timeout 90 $K bench --package /tmp/b/dist --kernel gemv_q8_0_rp_k4_n14336_t1,gemv_q8_0_rp_k4_n14336_t4,gemv_q8_0_rp_k4_n14336_t8 --json $R/bench-k4.json > $R/bench-k4.log 2>&1
grep -E "^gemv" $R/bench-k4.log | cut -c1-250
timeout 90 $K bench --package /tmp/b/dist --kernel gemv_q8_0_rp_res,gemv_q8_0_rp_res_rmsnorm --json $R/bench-res.json > $R/bench-res.log 2>&1
grep -E "^gemv" $R/bench-res.log | cut -c1-200
ck
wait $BPID
if [ -x $L/build/bin/llama-bench ]; then
  for m in rs-q4_1 rs-q8_0 r8b-q8_0; do
    timeout 60 $L/build/bin/llama-bench -m /tmp/$m.gguf -ngl 99 -fa 1 -p 0 -n 128 -r 3 -o md > $R/llama-bench-$m.md 2> $R/llama-bench-$m.err
    echo "llama-bench $m: $(grep -h 'tg128' $R/llama-bench-$m.md)"
  done
else
  echo "llama-bench did not build"; tail -5 $R/llama_build.log
fi
ck
