#!/usr/bin/env bash
# Call 3 (2026-12-03, seventeenth session): the k4 family's routes with the scales by tile
# again, then llama.cpp's MUL_MAT (q8_0, its rotated peer-bench, built in this call) on the
# same shapes, so the two stand side by side from one machine and one call. (Run twice: the
# first run named gemv_q8_0_rp, not in its package; the second, on the warm machine, reused
# the llama.cpp build of the first.)
# Run as `bash .carry/c3.sh` with .carry/{kiln,k4x.tgz} and .peers/llamacpp.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c3; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c3.tgz -C /tmp c3; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/k4x && mkdir -p /tmp/k4x && tar xzf .carry/k4x.tgz -C /tmp/k4x
cp .carry/c3.sh $R/
timeout 100 $K bench --package /tmp/k4x/dist --kernel gemv_q8_0_rp_k4 --variant wide_t2_g4,wide_t1_g2p,wide_t1_g1 --json $R/bench.json > $R/bench.log 2>&1
echo "bench rc $?"; grep -E "^gemv" $R/bench.log | sort -u | cut -c1-200
ck
mkdir -p $R/peer
OUT=$R/peer STEPS="peer" DEADLINE=420 BUILD_DEADLINE=380 bash .peers/llamacpp/run.sh > $R/peer/run.log 2>&1
echo "peer rc $?"; grep -E "MUL_MAT type=q8_0" $R/peer/peer.txt | head -20
ck
