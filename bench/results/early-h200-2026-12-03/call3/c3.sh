#!/usr/bin/env bash
# Call 3 (2026-12-03, eighteenth session): the kept form of the early weight loads. The k4
# wide variants always load their first trip's weights before `griddepcontrol.wait` (held
# there by `prefetch::hold`); the dense GEMVs have early twins routed by `n` on sm_90
# (`gemv_q8_0_rp` `p1r2u8w2e` n <= 4096, `gemv_q8_0_rp_res` `p1u16w4e` n <= 1024,
# `gemv_q8_0_rp_swiglu_q8_1s_norm` `p1e` n <= 2048), beside their plain forms in the same
# package. llama.cpp's peer-bench builds in the background and runs after kiln's runs.
# Run as `bash .carry/c3.sh` with .carry/{kiln,new.tgz,smol-vocab.gguf} and .peers/llamacpp.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c3; rm -rf $R; mkdir -p $R/peer
ck() { tar czf $O/c3.tgz -C /tmp c3; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/new; mkdir -p /tmp/new; tar xzf .carry/new.tgz -C /tmp/new
N=/tmp/new/dist
V=.carry/smol-vocab.gguf
cp .carry/c3.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
( OUT=$R/peer STEPS="none" bash .peers/llamacpp/run.sh > $R/peer-build.log 2>&1 ) &
BPID=$!
( $K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf
  $K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf ) > $R/models.log 2>&1 &
MPID=$!
F=gemv_q8_0_rp_k4,gemv_q8_0_rp,gemv_q8_0_rp_res,gemv_q8_0_rp_swiglu_q8_1s_norm,gemv_q4_1_rp,gemv_q8_0_rp_res_rmsnorm
timeout 200 $K parity --device cuda --package $N --kernel $F --large > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-100)"; grep -i "fail" $R/parity.log | head -3
ck
B=gemv_q8_0_rp_n14336_t1,gemv_q8_0_rp_n4096_t1,gemv_q8_0_rp_n4096_t8,gemv_q8_0_rp_n49152_k576_t1,gemv_q8_0_rp_res
for i in 1 2; do
  timeout 100 $K bench --package $N --kernel gemv_q8_0_rp_k4 --variant wide_t2_g4,wide_t1_g2p --json $R/bench-k4-$i.json > $R/bench-k4-$i.log 2>&1
  echo "bench k4 $i rc $?"; grep -E "^gemv" $R/bench-k4-$i.log | sort -u | cut -c1-150
  timeout 100 $K bench --package $N --kernel $B --variant p1r2u8w2e,p1r2u8w2,p1r4w2,tuned_t2_nlo,p1u16w4e,p1u16w4,p1u16w2,tuned_t5_8_nlo --json $R/bench-t1-$i.json > $R/bench-t1-$i.log 2>&1
  echo "bench t1 $i rc $?"; grep -E "^gemv" $R/bench-t1-$i.log | sort -u | cut -c1-150
  ck
done
wait $MPID
sha256sum /tmp/rs-q4_1.gguf /tmp/rs-q8_0.gguf > $R/models.sha256 2>&1
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c1-150) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
G="--device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile"
for i in 1 2; do
  for m in q4_1 q8_0; do
    timeout 40 $K generate --model /tmp/rs-$m.gguf --package $N $G --json $R/prof-rs-$m-$i.json > $R/prof-rs-$m-$i.log 2>&1
    line "rs-$m routed $i" $R/prof-rs-$m-$i.log
  done
  KILN_ROUTE_GEMV_Q8_0_RP_RES=p1u16w4 KILN_ROUTE_GEMV_Q8_0_RP_SWIGLU_Q8_1S_NORM=p1 \
    timeout 40 $K generate --model /tmp/rs-q8_0.gguf --package $N $G --json $R/prof-rs-q8_0-plain-$i.json > $R/prof-rs-q8_0-plain-$i.log 2>&1
  line "rs-q8_0 plain $i" $R/prof-rs-q8_0-plain-$i.log
  ck
done
for m in q4_1 q8_0; do
  timeout 40 $K generate --model /tmp/rs-$m.gguf --package $N --device cuda --oracle tools/engine/tests/data/oracle-$m.json --positions 16 > $R/digest-$m.log 2>&1
  echo "digest $m: $(grep -h 'digest' $R/digest-$m.log | cut -c1-120)"
done
ck
wait $BPID; echo "peer build: $(tail -n 2 $R/peer/build.txt 2>/dev/null | tr '\n' ' ' | cut -c1-200)"
OUT=$R/peer STEPS="peer" timeout 200 bash .peers/llamacpp/run.sh > $R/peer-run.log 2>&1
echo "peer rc $?"; grep -iE "mul_mat|q8_0" $R/peer/peer.txt 2>/dev/null | head -20
ck
