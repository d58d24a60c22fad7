#!/usr/bin/env bash
# Call 4 (2026-12-03, eighteenth session): the package of the final code (`fin`): the one-token
# dense GEMVs peel their first trips (weights loaded right after the wait, as call 2's `late`
# package), their early twins (routed by `n` on sm_90) load them before the wait and hold them;
# the k4 wide variants load their first trip before the wait. Parity on cuda (--large), the
# GEMV bench, the engine's steps (SmolLM2 shape Q4_1 / Q8_0, the Q8_0 one also with the plain
# twins forced; Llama-3-8B shape Q8_0), the logit digests.
# Run as `bash .carry/c4.sh` with .carry/{kiln,fin.tgz,smol-vocab.gguf}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c4; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c4.tgz -C /tmp c4; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/fin; mkdir -p /tmp/fin; tar xzf .carry/fin.tgz -C /tmp/fin
N=/tmp/fin/dist
V=.carry/smol-vocab.gguf
cp .carry/c4.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
( $K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf
  $K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf
  $K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf ) > $R/models.log 2>&1 &
MPID=$!
F=gemv_q8_0_rp_k4,gemv_q8_0_rp,gemv_q4_0_rp,gemv_q4_1_rp,gemv_q8_0_rp_res,gemv_q4_1_rp_res,gemv_q8_0_rp_res_rmsnorm,gemv_q8_0_rp_swiglu_q8_1s_norm,gemv_q4_1_rp_swiglu_q8_1s_norm,gemv_q8_0,gemv_f16
timeout 220 $K parity --device cuda --package $N --kernel $F --large > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-100)"; grep -i "fail" $R/parity.log | head -3
ck
B=gemv_q8_0_rp_n14336_t1,gemv_q8_0_rp_n4096_t1,gemv_q8_0_rp_n4096_t8,gemv_q8_0_rp_n49152_k576_t1,gemv_q4_0_rp_n14336_t1,gemv_q4_1_rp_n14336_t1,gemv_q8_0_rp_res
timeout 100 $K bench --package $N --kernel gemv_q8_0_rp_k4 --variant wide_t2_g4,wide_t1_g2p --json $R/bench-k4.json > $R/bench-k4.log 2>&1
echo "bench k4 rc $?"; grep -E "^gemv" $R/bench-k4.log | sort -u | cut -c1-150
timeout 120 $K bench --package $N --kernel $B --variant p1r2u8w2e,p1r2u8w2,p1r4w2,tuned_t1_nhi,tuned_t5_8_nlo,p1u16w4e,p1u16w4,p1u16w2 --json $R/bench-t1.json > $R/bench-t1.log 2>&1
echo "bench t1 rc $?"; grep -E "^gemv" $R/bench-t1.log | sort -u | cut -c1-150
ck
wait $MPID
sha256sum /tmp/rs-q4_1.gguf /tmp/rs-q8_0.gguf /tmp/r8b-q8_0.gguf > $R/models.sha256 2>&1
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c1-150) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
G8="--device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile"
G="--device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile"
timeout 120 $K generate --model /tmp/r8b-q8_0.gguf --package $N $G8 --json $R/prof-r8b.json > $R/prof-r8b.log 2>&1
line "r8b" $R/prof-r8b.log; grep -A12 "kernel  " $R/prof-r8b.log | cut -c1-100
ck
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
grep -A10 "kernel  " $R/prof-rs-q8_0-1.log | cut -c1-100
for m in q4_1 q8_0; do
  timeout 40 $K generate --model /tmp/rs-$m.gguf --package $N --device cuda --oracle tools/engine/tests/data/oracle-$m.json --positions 16 > $R/digest-$m.log 2>&1
  echo "digest $m: $(grep -h 'digest' $R/digest-$m.log | cut -c1-120)"
done
ck
