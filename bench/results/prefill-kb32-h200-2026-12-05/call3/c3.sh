#!/usr/bin/env bash
# Third device call of 2026-12-05: the prompt attention routed by chunk length (`LONG_CHUNK`:
# `w4gxa` / `w4qsxc` from 1024 rows, `w4gx` below), timed at L = 512, 1K, 2K, 4K, 8K (one order: c1 showed A and B within 1%)
# beside torch SDPA, then the Q8_0 caches' wide variants against float64 through gguf (c2 ran
# out of time before them). Run as `bash .carry/c3.sh` with .carry/{kiln,lib.txz,py}.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c3; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c3.tgz -C /tmp c3; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/lib; mkdir -p /tmp/lib; tar xJf .carry/lib.txz -C /tmp/lib
P=/tmp/lib/dist
cp .carry/c3.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
F=attention_prefill_f16_d64,attention_prefill_f16_d128,attention_prefill_q8_0_d64,attention_prefill_q8_0_d128
timeout 60 $K parity --device cuda --package $P --kernel $F > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-150)"; grep -i "fail" $R/parity.log | head -3
ck
CF=prefill_f16_l512,prefill_f16_l1k,prefill_f16_l2k,prefill_f16_l4k,prefill_f16_l8k
CQ=prefill_q8_0_l512,prefill_q8_0_l1k,prefill_q8_0_l2k,prefill_q8_0_l4k,prefill_q8_0_l8k
b() { local name=$1 cases=$2 vars=$3
  timeout 90 $K bench --package $P --kernel $cases --json $R/bench-$name.json $vars > $R/bench-$name.log 2>&1
  echo "$name rc $?"; grep -E "^prefill" $R/bench-$name.log | sort -u | cut -c1-160; ck; }
b f16-a $CF "--variant w4gxa,w4gx,w4g"
b q8-a $CQ "--variant w4qsxc,w4qsx,w4gx,w4qs"
timeout 90 python3 bench/prefill_peers.py $R/sdpa.json > $R/sdpa.log 2>&1; tail -n 5 $R/sdpa.log
ck
PYTHONPATH=.carry/py timeout 150 python3 bench/prefill_ref.py --kiln $K --package $P --device cuda --arch sm_90 --caches q8_0 --variants w4qsxc,w4gx --large > $R/ref.log 2>&1
echo "ref rc $?: $(grep -c '^ok' $R/ref.log) ok, $(grep -c '^FAIL' $R/ref.log) failed; $(grep 'L=4101' $R/ref.log | cut -c1-60 | tr '\n' ';')"
ck
