#!/usr/bin/env bash
# Call 2 (2026-12-02, eighth session): A/B of two sm_90 packages on the engine's decode step:
# b = before this session's kernel changes, a = with them (the `_swiglu_q8_1s_norm` GEMVs' `p1`
# loads its first weight blocks before the norm prologue; `p1` variants of the Q8_0 / Q4_0
# gate/up kernels for one token; `gemv_q8_0_rp` `p1r4w2` for short rows, the tied LM head).
# Both with this session's kiln (the tied LM head on a repacked copy). The old routes forced on
# a for comparison; decode at longer contexts; the LM head and gate/up shapes in kiln bench;
# parity of the changed families on cuda; llama.cpp's llama-bench on the same files.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c2; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c2.tgz -C /tmp c2; }
K=./.carry/kiln
for p in a b; do rm -rf /tmp/$p && mkdir -p /tmp/$p && tar xzf .carry/$p.tgz -C /tmp/$p; done
V=.carry/smol-vocab.gguf
cp .carry/c2.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
( for q in q4_1 q8_0; do $K random-model --shape smollm2-135m --type $q --vocab-from $V -o /tmp/rs-$q.gguf; done
  $K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf ) > $R/models.log 2>&1
sha256sum /tmp/rs-*.gguf /tmp/r8b-q8_0.gguf > $R/models.sha256
G="--device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile"
for p in a b; do timeout 120 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/$p/dist --device cuda --prompt hi -n 4 > $R/warm-$p.log 2>&1; done
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c1-112) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
for i in 1 2; do for p in a b; do for m in rs-q4_1 rs-q8_0; do
  timeout 60 $K generate --model /tmp/$m.gguf --package /tmp/$p/dist $G --json $R/prof-$m-$p-$i.json > $R/prof-$m-$p-$i.log 2>&1
  line "$m $p $i" $R/prof-$m-$p-$i.log
done; done; done
ck
KILN_ROUTE_GEMV_Q8_0_RP_SWIGLU_Q8_1S_NORM=p2 timeout 60 $K generate --model /tmp/rs-q8_0.gguf --package /tmp/a/dist $G --json $R/prof-rs-q8_0-a-p2.json > $R/prof-rs-q8_0-a-p2.log 2>&1
line "rs-q8_0 a gate/up p2" $R/prof-rs-q8_0-a-p2.log
KILN_ROUTE_GEMV_Q8_0_RP=p1r2u8w2 timeout 60 $K generate --model /tmp/rs-q4_1.gguf --package /tmp/a/dist $G --json $R/prof-rs-q4_1-a-head-p1r2u8w2.json > $R/prof-rs-q4_1-a-head-p1r2u8w2.log 2>&1
line "rs-q4_1 a head p1r2u8w2" $R/prof-rs-q4_1-a-head-p1r2u8w2.log
for n in 10 41; do
  for i in $(seq $n); do cat tools/engine/ref/generate.txt; done > /tmp/long-$n.txt
  for m in rs-q4_1 rs-q8_0; do
    timeout 90 $K generate --model /tmp/$m.gguf --package /tmp/a/dist --device cuda --prompt-file /tmp/long-$n.txt -n 128 --profile --json $R/prof-$m-a-long$n.json > $R/prof-$m-a-long$n.log 2>&1
    line "$m a prompt x$n" $R/prof-$m-a-long$n.log
  done
done
ck
G8="--device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile"
for p in a a-p2 b; do
  pk=${p%%-*}; ev=""; [ "$p" = a-p2 ] && ev="KILN_ROUTE_GEMV_Q8_0_RP_SWIGLU_Q8_1S=p2"
  env $ev timeout 100 $K generate --model /tmp/r8b-q8_0.gguf --package /tmp/$pk/dist $G8 --json $R/prof-r8b-$p.json > $R/prof-r8b-$p.log 2>&1
  line "r8b $p" $R/prof-r8b-$p.log
done
ck
for q in q4_1 q8_0; do
  timeout 60 $K generate --model /tmp/rs-$q.gguf --package /tmp/a/dist --device cuda --oracle tools/engine/tests/data/oracle-$q.json --positions 16 > $R/digest-$q-a.log 2>&1
  echo "digest $q a: $(grep -h 'digests' $R/digest-$q-a.log | cut -c1-100)"
done
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
timeout 90 $K bench --package /tmp/a/dist --kernel gemv_q8_0_n49152_k576_t1,gemv_q8_0_rp_n49152_k576_t1,gemv_q8_0_rp_swiglu_q8_1s_n14336_t1 --json $R/bench.json > $R/bench.log 2>&1
grep -E "^gemv" $R/bench.log | cut -c1-200
ck
F=gemv_q4_1_rp_swiglu_q8_1s_norm,gemv_q8_0_rp_swiglu_q8_1s_norm,gemv_q4_0_rp_swiglu_q8_1s_norm,gemv_q8_0_rp,gemv_q8_0_rp_swiglu_q8_1s
timeout 120 $K parity --device cuda --package /tmp/a/dist --kernel $F > $R/parity.log 2>&1
echo "parity rc $?: $(grep -h '^time' $R/parity.log | cut -c1-70 | tr '\n' ';') $(tail -n 1 $R/parity.log | cut -c1-90)"
ck
wait $BPID
if [ -x $L/build/bin/llama-bench ]; then
  timeout 90 $L/build/bin/llama-bench -m /tmp/rs-q4_1.gguf -ngl 99 -fa 1 -p 0 -n 128 -d 0,512,2048 -r 3 -o md > $R/llama-bench-rs-q4_1.md 2> $R/llama-bench-rs-q4_1.err
  echo "llama-bench rs-q4_1:"; grep -h 'tg128' $R/llama-bench-rs-q4_1.md
  for m in rs-q8_0 r8b-q8_0; do
    timeout 60 $L/build/bin/llama-bench -m /tmp/$m.gguf -ngl 99 -fa 1 -p 0 -n 128 -r 3 -o md > $R/llama-bench-$m.md 2> $R/llama-bench-$m.err
    echo "llama-bench $m: $(grep -h 'tg128' $R/llama-bench-$m.md)"
  done
else
  echo "llama-bench did not build"; tail -5 $R/llama_build.log
fi
tail -n 3 $R/llama_build.log > $R/llama_build-tail.log
ck
