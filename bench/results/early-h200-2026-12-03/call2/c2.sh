#!/usr/bin/env bash
# Call 2 (2026-12-03, eighteenth session): call 1 again, with the early loads held before the
# wait (`prefetch::hold`: a prefetch whose address depends on every early value; in call 1 ptxas
# had sunk every early `LDG` after `ACQBULK`, so call 1 compared two equal kernels).
# Package `new`: the k4 wide variants load their first trip's weights (quants and scales), the
# one-token dense GEMVs their first trips' weight blocks, before the grid-dependency wait; the
# runtime overlaps a launch only where no grid in flight writes what it reads early. Package
# `late`: the same kernels with the wait before those loads (KILN_LATE_WAIT=1 at build time, a
# switch kept only for this comparison). Parity of `new` on cuda, SASS order of two kernels,
# bench of both packages interleaved, then the engine's steps (8B and SmolLM2 shapes) with both.
# Run as `bash .carry/c2.sh` with .carry/{kiln,new.tgz,late.tgz,smol-vocab.gguf}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c2; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c2.tgz -C /tmp c2; }
K=$(pwd)/.carry/kiln; export PATH=$PATH:/usr/local/cuda/bin
for p in new late; do rm -rf /tmp/$p; mkdir -p /tmp/$p; tar xzf .carry/$p.tgz -C /tmp/$p; done
N=/tmp/new/dist; L=/tmp/late/dist
V=.carry/smol-vocab.gguf
cp .carry/c2.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
( $K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf
  $K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf
  $K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf ) > $R/models.log 2>&1 &
MPID=$!
# SASS: is each LDG of the early weights before the wait?
for f in gemv_q8_0_rp/p1r2u8w2 gemv_q8_0_rp_k4/wide_t2_g4 gemv_q8_0_rp_k4/wide_t1_g2p; do
  n=$(echo $f | tr / _)
  ptxas -arch=sm_90 $N/$f.sm_90.ptx -o /tmp/$n.cubin && cuobjdump -sass /tmp/$n.cubin > $R/sass-$n.txt 2>&1
  awk '/ACQBULK/{w=1} /LDG/{if(!w) b++; else a++} END{print FILENAME, "LDG before wait", b, "after", a}' $R/sass-$n.txt
done
ck
F=gemv_q8_0_rp_k4,gemv_q8_0_rp,gemv_q4_0_rp,gemv_q4_1_rp,gemv_q8_0,gemv_f16,gemv_q8_0_rp_res,gemv_q4_1_rp_res,gemv_q8_0_rp_swiglu_q8_1s,gemv_q4_1_rp_swiglu_q8_1s_norm,gemv_q8_0_rp_swiglu_q8_1s_norm,gemv_q8_0_rp_res_rmsnorm
timeout 200 $K parity --device cuda --package $N --kernel $F > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-100)"; grep -i "fail" $R/parity.log | head -3
ck
B=gemv_q8_0_rp_n14336_t1,gemv_q8_0_rp_n4096_t1,gemv_q8_0_rp_n49152_k576_t1,gemv_q4_0_rp_n14336_t1,gemv_q4_1_rp_n14336_t1,gemv_q8_0_rp_res
for i in 1 2; do for p in new late; do
  P=/tmp/$p/dist
  timeout 100 $K bench --package $P --kernel gemv_q8_0_rp_k4 --variant wide_t2_g4,wide_t1_g2p --json $R/bench-k4-$p-$i.json > $R/bench-k4-$p-$i.log 2>&1
  echo "bench k4 $p $i rc $?"; grep -E "^gemv" $R/bench-k4-$p-$i.log | sort -u | cut -c1-150
  timeout 100 $K bench --package $P --kernel $B --json $R/bench-t1-$p-$i.json > $R/bench-t1-$p-$i.log 2>&1
  echo "bench t1 $p $i rc $?"; grep -E "^gemv" $R/bench-t1-$p-$i.log | sort -u | cut -c1-150
  ck
done; done
wait $MPID
sha256sum /tmp/rs-q4_1.gguf /tmp/rs-q8_0.gguf /tmp/r8b-q8_0.gguf > $R/models.sha256 2>&1
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c1-150) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
G8="--device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile"
G="--device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile"
for i in 1 2; do for p in new late; do
  P=/tmp/$p/dist
  timeout 120 $K generate --model /tmp/r8b-q8_0.gguf --package $P $G8 --json $R/prof-r8b-$p-$i.json > $R/prof-r8b-$p-$i.log 2>&1
  line "r8b $p $i" $R/prof-r8b-$p-$i.log
  for m in q4_1 q8_0; do
    timeout 40 $K generate --model /tmp/rs-$m.gguf --package $P $G --json $R/prof-rs-$m-$p-$i.json > $R/prof-rs-$m-$p-$i.log 2>&1
    line "rs-$m $p $i" $R/prof-rs-$m-$p-$i.log
  done
  ck
done; done
for m in q4_1 q8_0; do
  timeout 40 $K generate --model /tmp/rs-$m.gguf --package $N --device cuda --oracle tools/engine/tests/data/oracle-$m.json --positions 16 > $R/digest-$m.log 2>&1
  echo "digest $m: $(grep -h 'digest' $R/digest-$m.log | cut -c1-120)"
done
ck
