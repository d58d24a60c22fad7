#!/usr/bin/env bash
# Call 1 (2026-12-02, tenth session): gemv_q8_0_rp_k4's wide variants with the scales of a group
# of four blocks in one load a row (8 bytes) and a token (16 bytes) where k/32 is a multiple of 4
# (`v`), against the same variants without, and the two- and four-group ones; parity on cuda
# (--large), then llama.cpp's peer-bench, then kiln bench twice (the variants in two orders).
set -uo pipefail
O=${OUT:-/tmp/out}; R=$O/g1; mkdir -p $R
K=./.carry/kiln
cp .carry/g1.sh $R/
rm -rf /tmp/k4 && mkdir -p /tmp/k4 && tar xzf .carry/k4.tgz -C /tmp/k4
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
( STEPS=none OUT=$R/llama-build nice -n 10 bash .peers/llamacpp/run.sh ) > $R/llama-build.log 2>&1 &
BPID=$!
timeout 200 $K parity --device cuda --package /tmp/k4/dist --kernel gemv_q8_0_rp_k4 --large > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 2 $R/parity.log | tr '\n' ' ' | cut -c1-200)"
wait $BPID
( STEPS=peer OUT=$R/llama DEADLINE=200 bash .peers/llamacpp/run.sh ) > $R/llama-peer.log 2>&1
grep -iE 'mul_mat' $R/llama/peer.txt | head -24
V1=wide_t2_g1,wide_t2_g1v,wide_t2_g2,wide_t2_g2v,wide_t2_g4,wide_t1_g1,wide_t1_g1v,wide_t1_g2,wide_t1_g2v
V2=wide_t1_g2v,wide_t1_g2,wide_t1_g1v,wide_t1_g1,wide_t2_g4,wide_t2_g2v,wide_t2_g2,wide_t2_g1v,wide_t2_g1
i=0
for V in $V1 $V2; do
  i=$((i+1))
  timeout 150 $K bench --package /tmp/k4/dist --kernel gemv_q8_0_rp_k4 --variant $V --replays 10 --bandwidth-bytes 536870912 --json $R/bench-$i.json > $R/bench-$i.log 2>&1
  echo "bench $i rc $?"; cat $R/bench-$i.log | cut -c1-220
done
timeout 60 $K bench --package /tmp/k4/dist --kernel gemv_q8_0_rp --replays 10 --bandwidth-bytes 536870912 --json $R/bench-dp4a.json > $R/bench-dp4a.log 2>&1
grep -E "^gemv" $R/bench-dp4a.log | cut -c1-200
