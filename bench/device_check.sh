#!/usr/bin/env bash
# One whole check on a GPU machine, in one call: parity, runtime device tests (graph replay), then
# benchmarks, then peers (torch, Triton) in the same run. Full logs under $OUT.
# Expects (carried): .carry/kiln (runtime-only binary), .carry/tests/* (test binaries), dist/.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
{
    date -u
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv
    ls -la .carry .carry/tests
} 2>&1 | tee "$OUT/env.log"
echo "== parity (cuda) =="
./.carry/kiln parity --device cuda --package dist --large 2>&1 | tee "$OUT/parity.log" | tail -4
echo "== runtime device tests =="
for t in .carry/tests/*; do
    echo "-- $t"
    # The cuda instances are #[ignore]d unless selected; selected, they fail without a device.
    "$t" --ignored cuda --test-threads=1 2>&1 | tee -a "$OUT/device_tests.log" | grep -E "test result|FAILED|panicked" | head -20
done
echo "== bench =="
./.carry/kiln bench --package dist --json "$OUT/kiln_bench.json" 2>&1 | tee "$OUT/bench.log" | tail -12
echo "== peers =="
python3 bench/peers.py "$OUT/peers.json" ${PEER_ARGS:-} 2>&1 | tee "$OUT/peers.log" | grep -v Warning | tail -8
echo "== A/B in one process (kiln PTX through the driver API, torch, Triton, interleaved) =="
python3 bench/ab.py dist "$OUT/ab.json" --rounds 5 2> "$OUT/ab.err" | tee "$OUT/ab.log" | grep -v "address steps"
# The device tool returns a limited number of files: one archive holds every log.
tar czf /tmp/device_check.tgz -C "$OUT" . && rm -rf "${OUT:?}"/* && mv /tmp/device_check.tgz "$OUT/"
