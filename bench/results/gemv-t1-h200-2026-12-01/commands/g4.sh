#!/usr/bin/env bash
# Where T=1 time goes: a pure-read roofline, kiln's T=1 GEMV and attention, ncu of each.
set -uo pipefail
O=${OUT:-/tmp/out}
export PYTHONUNBUFFERED=1
rm -rf dist && mkdir dist && tar xzf .carry/pkg.tgz -C dist --strip-components=1
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $O/env.log 2>&1
timeout 200 python3 bench/read_roofline.py --json $O/read.json 2>&1 | tee $O/read.log
./.carry/kiln bench --package dist --kernel gemv_q8_0_rp_n14336_t1,gemv_q8_0_rp_n4096_t1,gemv_q4_0_rp_n14336_t1,gemv_q4_1_rp_n14336_t1,attn_q8_0_ctx32k_t1,attn_q8_0_ctx4k_t1 --json $O/bench.json 2>&1 | tee $O/bench.log | tail -40
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for spec in "gemv_q8_0_rp_n14336_t1 p1r2u2 gemv" "gemv_q4_0_rp_n14336_t1 p1 gemv" "attn_q8_0_ctx32k_t1 r4t256 attention" "attn_q8_0_ctx4k_t1 r4t256 attention"; do
  set -- $spec
  timeout 100 $NCU --clock-control none --kernel-name regex:$3 --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section InstructionStats \
    ./.carry/kiln bench --package dist --kernel $1 --variant $2 --replays 1 > $O/ncu_$1_$2.txt 2>&1
  echo "== $1 $2"
  grep -E "Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Theoretical Occupancy|Warp Cycles Per Issued|Issued Warp|Executed Ipc|Grid Size|Block Size|No Eligible|Eligible Warps" $O/ncu_$1_$2.txt | head -20
done
