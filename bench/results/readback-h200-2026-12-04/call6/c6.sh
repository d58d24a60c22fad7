#!/usr/bin/env bash
# Call 6 (2026-12-04, twenty-fourth session): the whole library on the H200 at the session's
# end (last whole run 2026-12-02): kiln parity --device cuda of every family and variant of the
# sm_90 package (`hist`: the committed tree's kernels).
# Run as `bash .carry/c6.sh` with .carry/{kiln,hist.txz}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c6; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c6.tgz -C /tmp c6; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/hist; mkdir -p /tmp/hist; tar xf .carry/hist.txz -C /tmp/hist
cp .carry/c6.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nproc; } > $R/env.log 2>&1
SECONDS=0
timeout 280 $K parity --device cuda --package /tmp/hist/dist > $R/parity.log 2>&1
echo "parity rc $? in ${SECONDS}s: $(tail -n 1 $R/parity.log)"
grep -hE "^(FAIL|fail|error)" $R/parity.log | head -5
ck
