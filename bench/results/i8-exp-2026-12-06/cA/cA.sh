#!/usr/bin/env bash
# The fortieth session's call A (2026-12-06): llama.cpp's peer build in the background (for call B
# on the same warm machine), cuda parity of the i8 order with the cheaper weight exp and the
# one-fma P quant (`libI`), the runtime's cuda device tests, then Nsight Compute of the routed
# i8 variants at 4K T = 8 and 32K T = 8 (libI). Carry: .cxd.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cA; rm -rf $R; mkdir -p $R/peer
ck() { tar czf $O/cA.tgz -C /tmp cA; }
T0=$SECONDS
C=$(pwd)/.cxd
xz -dc $C/kiln.xz > /tmp/kiln && chmod +x /tmp/kiln; K=/tmp/kiln
for p in F I; do rm -rf /tmp/p$p; mkdir -p /tmp/p$p; tar xJf $C/lib$p.txz -C /tmp/p$p; done
mkdir -p /tmp/peers && tar xJf $C/peers.txz -C /tmp/peers
grep -q PEER_FA_KV /tmp/peers/llamacpp/ggml/tests/peer-bench.cpp ||
  patch -p1 -d /tmp/peers/llamacpp < bench/peers/peer-bench-kiln.patch > $R/peer-patch.log 2>&1
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; ncu --version; } > $R/env.log 2>&1
cat $R/env.log
( OUT=$R/peer STEPS="none" nice -n 5 bash /tmp/peers/llamacpp/run.sh > $R/peer-build.log 2>&1; echo "build rc $?" >> $R/peer-build.log ) &
BPID=$!
timeout 200 $K parity --device cuda --package /tmp/pI/dist --kernel attention_decode_q8_0_i8_d128,attention_decode_q8_0_i8_d64 > $R/parity.log 2>&1
echo "cuda parity rc $?: $(tail -n 1 $R/parity.log) ($((SECONDS - T0)) s)"; grep -E "^time|FAIL" $R/parity.log | head -8; ck
xz -dc $C/rt-tests.xz > /tmp/rt-tests && chmod +x /tmp/rt-tests
timeout 90 /tmp/rt-tests --ignored cuda --test-threads=1 > $R/device-tests.log 2>&1
echo "device tests rc $?: $(grep -E '^test result' $R/device-tests.log) ($((SECONDS - T0)) s)"; ck
prof() {
  local name=$1 case=$2 variant=$3
  timeout 100 ncu --clock-control none --set full --import-source no -k regex:attention_decode_q8_0_i8_d128 -c 1 -o $R/$name \
    $K bench --package /tmp/pI/dist --kernel $case --variant $variant --replays 1 --bandwidth-bytes 67108864 > $R/$name.run.log 2>&1
  echo "$name rc $? ($((SECONDS - T0)) s)"
  ncu -i $R/$name.ncu-rep --page details > $R/$name.details.txt 2>&1
  ncu -i $R/$name.ncu-rep --page source --print-source sass --csv 2>&1 | gzip > $R/$name.sass.csv.gz
  grep -E "Duration|Registers Per|Achieved Occ|Issue Slots Busy|DRAM Throughput|Executed Ipc A" $R/$name.details.txt | head -8
  rm -f $R/$name.ncu-rep
  ck
}
prof t8-4k attn_q8_0_i8_ctx4k_t8 mma8
prof t8lds-32k attn_q8_0_i8_ctx32k_t8 mma8_lds
wait $BPID; echo "peer build: $(tail -n 3 $R/peer-build.log | tr '\n' ' ' | cut -c1-300) ($((SECONDS - T0)) s)"
ls /tmp/llb 2>/dev/null | head -5
ck
echo "end ($((SECONDS - T0)) s)"
