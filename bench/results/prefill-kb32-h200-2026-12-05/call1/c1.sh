#!/usr/bin/env bash
# Device call for the twenty-seventh session's work (2026-12-05; not run yet: no H200 was lent).
# The prompt attention's softmax in blocks of 32 keys on NVIDIA (`prefill::key_block`), with and
# without `ld_matrix` (`w4g`, `w4qs`, `w4gx`, `w4qsx`), against the 16-key package of 2026-12-04
# (`old16`: its `w4g` / `w4qs` are what was last timed) in the same call, torch SDPA beside, and
# `w4gxa` (f16: K and V by async copies, 165 registers) and `w4gxl` (`w4gx` with the row groups
# in order, not longest first), `w4qsxc` (Q8_0: `w4qsx` in 128 registers, 16 warps an SM):
# (a) the op checks of sm_90 (`ld_matrix` among them: never run on a GPU yet);
# (b) parity of the four prefill families on cuda (device against the interpreter within the
#     matrix unit's bound);
# (c) the bench in the orders A B B A at L = 512, 2048, 8192, both caches;
# (d) torch SDPA on the same shapes. Float64 through gguf is in c2.sh.
# Run as `bash .carry/c1.sh` with .carry/{kiln,lib.txz,old16.txz,chk.txz}: kiln runtime-only,
# lib.txz the whole sm_90 library at this commit (`kiln build --arch sm_90 --strict`), old16.txz
# the same built at 8f28a79, chk.txz `kiln build --matrix specs/checks.ron --arch sm_90`.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c1; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c1.tgz -C /tmp c1; }
K=$(pwd)/.carry/kiln
for p in lib old16 chk; do rm -rf /tmp/$p; mkdir -p /tmp/$p; tar xJf .carry/$p.txz -C /tmp/$p; done
P=/tmp/lib/dist; P0=/tmp/old16/dist
cp .carry/c1.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
timeout 60 $K parity --device cuda --package /tmp/chk/dist > $R/checks.log 2>&1
echo "op checks rc $?: $(tail -n 1 $R/checks.log)"; grep -E "ld_matrix|fail" $R/checks.log | head -5
ck
F=attention_prefill_f16_d64,attention_prefill_f16_d128,attention_prefill_q8_0_d64,attention_prefill_q8_0_d128
timeout 120 $K parity --device cuda --package $P --kernel $F > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-150)"; grep -i "fail" $R/parity.log | head -3
ck
CF=prefill_f16_l512,prefill_f16_l2k,prefill_f16_l8k
CQ=prefill_q8_0_l512,prefill_q8_0_l2k,prefill_q8_0_l8k
b() { local name=$1 pkg=$2 cases=$3 vars=$4
  timeout 80 $K bench --package $pkg --kernel $cases --variant $vars --json $R/bench-$name.json > $R/bench-$name.log 2>&1
  echo "$name rc $?"; grep -E "^prefill" $R/bench-$name.log | sort -u | cut -c1-150; ck; }
b f16-new-a $P $CF w4gx,w4gxa,w4gxl,w4g,w4qsx
b f16-old-a $P0 $CF w4g
b q8-new-a $P $CQ w4qsx,w4qsxc,w4qs,w4gx,w4gxl
b q8-old-a $P0 $CQ w4qs
timeout 90 python3 bench/prefill_peers.py $R/sdpa.json > $R/sdpa.log 2>&1; tail -n 4 $R/sdpa.log
ck
b q8-old-b $P0 $CQ w4qs
b q8-new-b $P $CQ w4gxl,w4gx,w4qs,w4qsxc,w4qsx
b f16-old-b $P0 $CF w4g
b f16-new-b $P $CF w4qsx,w4g,w4gxl,w4gxa,w4gx
