#!/usr/bin/env bash
# Call 6 (2026-12-03, nineteenth session): call 5 again with the package it should have had: the
# one-token buckets of gemv_q8_0_rp, _res and _swiglu_q8_1s tuned in calls 3 and 4 (call 5's
# package was built by a kiln binary compiled before those entries were merged, so it routed
# the previous variants). No peers (device time): parity, the GEMV bench, the engine's steps.
# Run as `bash .carry/c6.sh` with .carry/{kiln,k6.tgz,smol-vocab.gguf}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c6; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c6.tgz -C /tmp c6; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/k6; mkdir -p /tmp/k6; tar xzf .carry/k6.tgz -C /tmp/k6
N=/tmp/k6/dist
V=.carry/smol-vocab.gguf
cp .carry/c6.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
( $K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf
  $K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf
  $K random-model --shape llama3-8b --type q8_0 --vocab-from $V -o /tmp/r8b-q8_0.gguf ) > $R/models.log 2>&1 &
MPID=$!
timeout 60 $K parity --device cuda --package $N --kernel gemv_q8_0_rp,gemv_q8_0_rp_res,gemv_q8_0_rp_swiglu_q8_1s > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-100)"; grep -i "fail" $R/parity.log | head -3
B=gemv_q8_0_rp_n14336_t1,gemv_q8_0_rp_n4096_t1,gemv_q8_0_rp_n49152_k576_t1,gemv_q8_0_rp_res,gemv_q8_0_rp_swiglu_q8_1s_n14336_t1
timeout 80 $K bench --package $N --kernel $B --variant tuned_t1_nlo,tuned_t1_nhi,tuned_t1_klo,tuned_t1_khi,tuned_t1,p1r2u8w2e,p1r2u8w2,p1r4w2,p1u16w4,p1u16w2,p2 --json $R/bench-t1.json > $R/bench-t1.log 2>&1
echo "bench t1 rc $?"; grep -E "^gemv" $R/bench-t1.log | sort -u | cut -c1-170
ck
wait $MPID
sha256sum /tmp/rs-q4_1.gguf /tmp/rs-q8_0.gguf /tmp/r8b-q8_0.gguf > $R/models.sha256 2>&1
line() { echo "$1: $(grep -h 'wall time' $2 | cut -c1-150) | $(grep -h 'decode:' $2 | cut -c30-90)"; }
G8="--device cuda --prompt-file tools/engine/ref/generate.txt -n 64 --ctx 256 --profile"
G="--device cuda --prompt-file tools/engine/ref/generate.txt -n 128 --ctx 512 --profile"
timeout 60 $K generate --model /tmp/r8b-q8_0.gguf --package $N $G8 --json $R/prof-r8b.json > $R/prof-r8b.log 2>&1
line "r8b routed" $R/prof-r8b.log; grep -A12 "kernel  " $R/prof-r8b.log | cut -c1-100
ck
KILN_ROUTE_GEMV_Q8_0_RP_SWIGLU_Q8_1S=p2 timeout 60 $K generate --model /tmp/r8b-q8_0.gguf --package $N $G8 --json $R/prof-r8b-p2.json > $R/prof-r8b-p2.log 2>&1
line "r8b swiglu p2 forced" $R/prof-r8b-p2.log
ck
for m in q4_1 q8_0; do
  timeout 30 $K generate --model /tmp/rs-$m.gguf --package $N $G --json $R/prof-rs-$m.json > $R/prof-rs-$m.log 2>&1
  line "rs-$m routed" $R/prof-rs-$m.log
done
KILN_ROUTE_GEMV_Q8_0_RP_RES=p1u16w4e KILN_ROUTE_GEMV_Q8_0_RP=p1r4w2 \
  timeout 30 $K generate --model /tmp/rs-q8_0.gguf --package $N $G --json $R/prof-rs-q8_0-prev.json > $R/prof-rs-q8_0-prev.log 2>&1
line "rs-q8_0 previous res/head" $R/prof-rs-q8_0-prev.log
grep -A10 "kernel  " $R/prof-rs-q8_0.log | cut -c1-100
for m in q4_1 q8_0; do
  timeout 30 $K generate --model /tmp/rs-$m.gguf --package $N --device cuda --oracle tools/engine/tests/data/oracle-$m.json --positions 16 > $R/digest-$m.log 2>&1
  echo "digest $m: $(grep -h 'digest' $R/digest-$m.log | cut -c1-100)"
done
ck
