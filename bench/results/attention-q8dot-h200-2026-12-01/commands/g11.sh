#!/usr/bin/env bash
set -uo pipefail
O=${OUT:-/tmp/out}
rm -rf /tmp/da && mkdir -p /tmp/da && tar xzf .carry/att.tgz -C /tmp/da; P=/tmp/da/dist
timeout 150 ./.carry/kiln parity --device cuda --package $P --kernel attention_decode_q8_0_q8dot_d64,attention_decode_q8_0_q8dot_d128 > $O/parity.log 2>&1; tail -1 $O/parity.log; grep -c "^ok" $O/parity.log; grep -v "^ok" $O/parity.log | head -5
./.carry/kiln bench --package $P --kernel attention_decode_q8_0_d128,attention_decode_q8_0_q8dot_d128 --json $O/bench.json > $O/bench.log 2>&1; grep -E "^attn" $O/bench.log
