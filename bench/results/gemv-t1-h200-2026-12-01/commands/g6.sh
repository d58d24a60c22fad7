#!/usr/bin/env bash
set -uo pipefail
O=${OUT:-/tmp/out}
rm -rf dist && mkdir dist && tar xzf .carry/pkgy.tgz -C dist --strip-components=1
timeout 100 ./.carry/kiln parity --device cuda --package dist --kernel gemv_q8_0_rp 2>&1 | tee $O/parity.log | tail -1
for i in 1 2 3; do
./.carry/kiln bench --package dist --kernel gemv_q8_0_rp_n14336_t1,gemv_q8_0_rp_n4096_t1 --json $O/bench$i.json 2>&1 | tee $O/bench$i.log | grep -E "^gemv" | tr ' ' '\n' | grep -E "^(gemv|p1|xp|tuned_t2|p2r2)" | paste -sd' ' | sed 's/ gemv/\ngemv/g'
done
