#!/usr/bin/env bash
set -uo pipefail
O=${OUT:-/tmp/out}
export PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $O/env.log 2>&1
timeout 200 python3 bench/read_roofline.py --json $O/read.json 2>&1 | tee $O/read.log
