#!/usr/bin/env bash
# Second call of the thirty-sixth session (2026-12-06): cuda parity of the families whose
# interpreter paths this session changed and the first call did not reach: f16 MMA (the prefill
# families on the matrix units: the reference converts each operand once now), LDS with the
# sanitizer and global atomics (decode attention), the fused rope/attention/quantize family.
# The interpreter (this session's) is the reference. Carry: .cxc.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cT; rm -rf $R; mkdir -p $R
ck() { tar czf $O/cT.tgz -C /tmp cT; }
T0=$SECONDS
C=$(pwd)/.cxc
[ -x /tmp/kiln ] || { xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; }; K=/tmp/kiln
[ -d /tmp/pS/dist ] || { mkdir -p /tmp/pS; tar xJf $C/libS.txz -C /tmp/pS; }; P=/tmp/pS/dist
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $R/env.log 2>&1; cat $R/env.log
for fam in attention_prefill_f16_d64 attention_prefill_q8_0_d128 attention_decode_q8_0_d64 attention_decode_rope_q8_0_d64_q8_1s gemv_q8_0_rp_res_rmsnorm; do
  l=$((540 - (SECONDS - T0))); [ $l -gt 20 ] || { echo "$fam skipped"; continue; }
  timeout $((l < 200 ? l : 200)) $K parity --device cuda --package $P --kernel $fam > $R/parity-$fam.log 2>&1
  echo "$fam rc $?: $(tail -n 1 $R/parity-$fam.log) ($((SECONDS - T0)) s)"; ck
done
