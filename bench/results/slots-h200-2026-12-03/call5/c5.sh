#!/usr/bin/env bash
# Call 5 (2026-12-03, nineteenth session): the final package (eight K slots in gemv_q8_0_rp_k4 up
# to 8192 rows, wide_t1_g4_w8; the one-token buckets of gemv_q8_0_rp, _res, _swiglu_q8_1s, Q4_0
# and Q4_1 re-tuned with knob e in calls 1, 3 and 4). Parity on cuda, the GEMV bench (routed and
# the previous routes), the engine's steps (Llama-3-8B shape Q8_0, SmolLM2 shape Q4_1 / Q8_0,
# routed and with a previous route forced), the logit digests; llama.cpp's peer-bench (with
# bench/peers/peer-bench-kiln.patch) built in the background and run last.
# Run as `bash .carry/c5.sh` with .carry/{kiln,k5.tgz,smol-vocab.gguf} and .peers/llamacpp.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c5; rm -rf $R; mkdir -p $R/peer
ck() { tar czf $O/c5.tgz -C /tmp c5; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/k5; mkdir -p /tmp/k5; tar xzf .carry/k5.tgz -C /tmp/k5
N=/tmp/k5/dist
V=.carry/smol-vocab.gguf
cp .carry/c5.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
( OUT=$R/peer STEPS="none" nice -n 5 bash .peers/llamacpp/run.sh > $R/peer-build.log 2>&1 ) &
BPID=$!
( $K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf
  $K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf
  $K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf ) > $R/models.log 2>&1 &
MPID=$!
F=gemv_q8_0_rp_k4,gemv_q8_0_rp,gemv_q4_0_rp,gemv_q4_1_rp,gemv_q8_0_rp_res,gemv_q8_0_rp_swiglu_q8_1s
timeout 150 $K parity --device cuda --package $N --kernel $F > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-100)"; grep -i "fail" $R/parity.log | head -3
ck
C=gemv_q8_0_rp_k4_n14336_t1,gemv_q8_0_rp_k4_n14336_t4,gemv_q8_0_rp_k4_n14336_t8,gemv_q8_0_rp_k4_n4096_t1,gemv_q8_0_rp_k4_n4096_t8,gemv_q8_0_rp_k4_n8192_t1,gemv_q8_0_rp_k4_n8192_t8
timeout 90 $K bench --package $N --kernel $C --variant wide_t2_g4,wide_t1_g4_w8 --json $R/bench-k4.json > $R/bench-k4.log 2>&1
echo "bench k4 rc $?"; grep -E "^gemv" $R/bench-k4.log | sort -u | cut -c1-150
B=gemv_q8_0_rp_n14336_t1,gemv_q8_0_rp_n4096_t1,gemv_q8_0_rp_n49152_k576_t1,gemv_q4_0_rp_n14336_t1,gemv_q4_1_rp_n14336_t1,gemv_q8_0_rp_res,gemv_q8_0_rp_swiglu_q8_1s_n14336_t1
timeout 150 $K bench --package $N --kernel $B --variant tuned_t1_nlo,tuned_t1_nhi,tuned_t1_klo,tuned_t1_khi,tuned_t1,p1r2u8w2e,p1r2u8w2,p1r4w2,p1u16w4,p1u16w2,p2 --json $R/bench-t1.json > $R/bench-t1.log 2>&1
echo "bench t1 rc $?"; grep -E "^gemv" $R/bench-t1.log | sort -u | cut -c1-150
timeout 60 $K bench --package $N --kernel gemv_moe_q8_0_qwen3_t1,gemv_moe_q8_0_qwen3_t8 --json $R/bench-moe.json > $R/bench-moe.log 2>&1
echo "bench moe rc $?"; grep -E "^gemv" $R/bench-moe.log | sort -u | cut -c1-150
ck
wait $MPID
sha256sum /tmp/rs-q4_1.gguf /tmp/rs-q8_0.gguf /tmp/r8b-q8_0.gguf > $R/models.sha256 2>&1
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c1-150) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
G8="--device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile"
G="--device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile"
timeout 100 $K generate --model /tmp/r8b-q8_0.gguf --package $N $G8 --json $R/prof-r8b.json > $R/prof-r8b.log 2>&1
line "r8b routed" $R/prof-r8b.log; grep -A12 "kernel  " $R/prof-r8b.log | cut -c1-100
ck
KILN_ROUTE_GEMV_Q8_0_RP_SWIGLU_Q8_1S=p2 timeout 100 $K generate --model /tmp/r8b-q8_0.gguf --package $N $G8 --json $R/prof-r8b-p2.json > $R/prof-r8b-p2.log 2>&1
line "r8b swiglu p2" $R/prof-r8b-p2.log
ck
for i in 1 2; do
  for m in q4_1 q8_0; do
    timeout 40 $K generate --model /tmp/rs-$m.gguf --package $N $G --json $R/prof-rs-$m-$i.json > $R/prof-rs-$m-$i.log 2>&1
    line "rs-$m routed $i" $R/prof-rs-$m-$i.log
  done
  KILN_ROUTE_GEMV_Q8_0_RP_RES=p1u16w4e KILN_ROUTE_GEMV_Q8_0_RP=p1r4w2 \
    timeout 40 $K generate --model /tmp/rs-q8_0.gguf --package $N $G --json $R/prof-rs-q8_0-prev-$i.json > $R/prof-rs-q8_0-prev-$i.log 2>&1
  line "rs-q8_0 previous res/head $i" $R/prof-rs-q8_0-prev-$i.log
  ck
done
grep -A10 "kernel  " $R/prof-rs-q8_0-1.log | cut -c1-100
for m in q4_1 q8_0; do
  timeout 40 $K generate --model /tmp/rs-$m.gguf --package $N --device cuda --oracle tools/engine/tests/data/oracle-$m.json --positions 16 > $R/digest-$m.log 2>&1
  echo "digest $m: $(grep -h 'digest' $R/digest-$m.log | cut -c1-120)"
done
ck
wait $BPID; echo "peer build: $(tail -n 2 $R/peer/build.txt 2>/dev/null | tr '\n' ' ' | cut -c1-200)"
OUT=$R/peer STEPS="peer" timeout 150 bash .peers/llamacpp/run.sh > $R/peer-run.log 2>&1
echo "peer rc $?"; grep -iE "type=q4|m=4096 n=(1|8) |m=14336 n=(1|8) |MUL_MAT_ID" $R/peer/peer.txt 2>/dev/null | grep -E "rot" | grep -E "q8_0|q4" | cut -c1-140 | head -12
ck
