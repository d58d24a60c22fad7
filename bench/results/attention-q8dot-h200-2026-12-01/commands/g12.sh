#!/usr/bin/env bash
set -uo pipefail
O=${OUT:-/tmp/out}
rm -rf /tmp/da && mkdir -p /tmp/da && tar xzf .carry/att.tgz -C /tmp/da; P=/tmp/da/dist
timeout 100 ./.carry/kiln bench --package $P --kernel attn_q8_0_ctx32k_t1,attn_q8dot_ctx32k_t1,attn_q8_0_ctx32k_t8,attn_q8dot_ctx32k_t8,attn_q8dot_ctx4k_t8 --variant r4t256,r4,r8,r1 --json $O/bench.json > $O/bench.log 2>&1; grep -E "^attn" $O/bench.log
