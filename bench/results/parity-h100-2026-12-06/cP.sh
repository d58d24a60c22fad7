#!/usr/bin/env bash
# The thirty-seventh session's third device call (2026-12-06): `kiln parity --device cuda` of the
# sm_90 package's families that the second call (bench/results/passes-h100-2026-12-06/cK.sh) did
# not reach, the prefill families last, this session's interpreter as the reference. Carry: .cxd.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cP; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cP.tgz -C /tmp cP; }
T0=$SECONDS; B=${BUDGET:-570}
left() { echo $((B - (SECONDS - T0))); }
C=$(pwd)/.cxd
xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; K=/tmp/kiln
rm -rf /tmp/pF; mkdir -p /tmp/pF; tar xJf $C/libF.txz -C /tmp/pF; P=/tmp/pF/dist
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $R/env.log 2>&1; cat $R/env.log
timeout $(( $(left) - 150 )) $K parity --device cuda --package $P --kernel $(cat $C/rest.txt) > $R/parity-rest.log 2>&1
echo "cuda parity (the rest) rc $?: $(tail -n 1 $R/parity-rest.log) ($((SECONDS - T0)) s)"; ck
timeout $(( $(left) - 10 )) $K parity --device cuda --package $P --kernel $(cat $C/prefill.txt) > $R/parity-prefill.log 2>&1
echo "cuda parity (prefill) rc $?: $(tail -n 1 $R/parity-prefill.log) ($((SECONDS - T0)) s)"; ck
grep -hE "^time " $R/parity-*.log | awk '{p+=$3; f+=$5} END {print "families", NR, "passed", p, "failed", f}'
grep -hcE "^FAIL" $R/parity-*.log
echo "end ($((SECONDS - T0)) s)"
