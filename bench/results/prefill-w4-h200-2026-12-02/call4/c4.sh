#!/usr/bin/env bash
# Call 4 (2026-12-02): attention_prefill w4 / w4q timed alone (no other work on the machine),
# then Nsight Compute on one launch of each at L = 2048 (f16): stall reasons, pipes, occupancy,
# the SASS lines that stall most.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c4; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c4.tgz -C /tmp c4; }
K=./.carry/kiln
rm -rf /tmp/a && mkdir -p /tmp/a && tar xzf .carry/a.tgz -C /tmp/a
cp .carry/c4.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; which ncu; } > $R/env.log 2>&1
S=$(date +%s)
timeout 150 $K bench --package /tmp/a/dist --kernel attention_prefill_f16_d128,attention_prefill_q8_0_d128 --variant w4q,w4 --json $R/bench.json > $R/bench.log 2>&1
echo "bench rc $? in $(( $(date +%s) - S )) s"; grep -E "^prefill" $R/bench.log | sort -u | cut -c1-130
ck
NCU=$(which ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for v in w4 w4q; do
  S=$(date +%s)
  timeout 150 $NCU --clock-control none --launch-count 1 -k regex:attention_prefill \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section Occupancy \
    --section SchedulerStats --section WarpStateStats --section InstructionStats \
    --section MemoryWorkloadAnalysis --section SourceCounters \
    $K bench --package /tmp/a/dist --kernel prefill_f16_l2k --variant $v --replays 1 > $R/ncu-f16-l2k-$v.txt 2>&1
  echo "ncu $v rc $? in $(( $(date +%s) - S )) s"
  grep -E "Duration|Issue Slots Busy|Executed Ipc Active|No Eligible|Warp Cycles Per Issued|Achieved Occupancy|Stall|Registers Per" $R/ncu-f16-l2k-$v.txt | head -24
  ck
done
