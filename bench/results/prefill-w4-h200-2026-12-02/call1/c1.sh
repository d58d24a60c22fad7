#!/usr/bin/env bash
# Call 1 (2026-12-02, seventh session): attention_prefill's `w4` variant (4 waves a workgroup,
# softmax in registers) on the H200: parity against the interpreter (cuda), float64 check
# (bench/prefill_ref.py), kiln bench of the d128 families (every variant), torch SDPA in the
# same call; the `_res_rmsnorm` GEMV re-timed after its one-token tail fix.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c1; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c1.tgz -C /tmp c1; }
K=./.carry/kiln
rm -rf /tmp/a && mkdir -p /tmp/a && tar xzf .carry/a.tgz -C /tmp/a
cp .carry/c1.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
P=attention_prefill_f16_d64,attention_prefill_f16_d128,attention_prefill_q8_0_d64,attention_prefill_q8_0_d128
timeout 150 $K parity --device cuda --package /tmp/a/dist --kernel $P > $R/parity.log 2>&1
echo "parity rc $?: $(grep -c '^ok' $R/parity.log) ok; $(tail -n 2 $R/parity.log | cut -c1-150)"
ck
timeout 240 $K bench --package /tmp/a/dist --kernel attention_prefill_f16_d128,attention_prefill_q8_0_d128 --json $R/bench.json > $R/bench.log 2>&1
echo "bench rc $?"; grep -E "prefill" $R/bench.log | cut -c1-120
ck
timeout 120 python3 bench/prefill_peers.py $R/sdpa.json > $R/sdpa.log 2>&1; tail -n 4 $R/sdpa.log
ck
PYTHONPATH=.carry/py timeout 150 python3 bench/prefill_ref.py --kiln $K --package /tmp/a/dist --device cuda --arch sm_90 --variants baseline,w4,pipe,m32 --large > $R/ref.log 2>&1
echo "ref rc $?: $(tail -n 3 $R/ref.log | cut -c1-200)"
ck
timeout 90 $K bench --package /tmp/a/dist --kernel gemv_q8_0_rp_res_rmsnorm,gemv_q8_0_rp_res,rmsnorm_q8_1s_f32 --json $R/bench-resnorm.json > $R/bench-resnorm.log 2>&1
echo "bench resnorm rc $?"; grep -E "^(gemv|rmsnorm)" $R/bench-resnorm.log | cut -c1-120
ck
