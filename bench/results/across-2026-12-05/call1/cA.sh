#!/usr/bin/env bash
# The first device call of the thirty-first session (2026-12-05): what c1 and c3
# (bench/plans/h200-after-2026-12-05*.sh) settle first, in one call of at most 10 minutes:
# parity on cuda of the attention families (the split-across-waves variants, the V rows'
# 64-bit indices) and of the GEMV families (the early-load fix); the T = 1 / T = 8 decode
# digests against the interpreter's; decode attention at six contexts with every candidate;
# torch SDPA and llama.cpp's FLASH_ATTN_EXT on the same shapes. Steps that find too little time
# left are skipped and say so. AF: the attention families to check. CTX="4k 32k": those contexts only; PEERS=0: no SDPA, no llama.cpp.
# Carry: the tracked tree is about 30 MiB, so the carried files travel compressed in one
# ignored folder .cx (kiln.xz: xz of the runtime-only kiln; peers.txz: tar cJf of
# .peers/llamacpp; lib.txz; smol-vocab.gguf; this file as cA.sh), unpacked by the command:
#   mkdir -p .carry .peers; cp .cx/*.sh .cx/*.txz .cx/*.gguf .carry/;
#   xz -dc .cx/kiln.xz > .carry/kiln; chmod +x .carry/kiln; tar xJf .cx/peers.txz -C .peers;
#   bash .carry/cA.sh
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/cA; rm -rf $R; mkdir -p $R/peer
ck() { tar czf $O/cA.tgz -C /tmp cA; }
T0=$SECONDS
B=${BUDGET:-575}
left() { echo $((B - (SECONDS - T0))); }
lim() { local l; l=$(left); [ $l -gt $1 ] && echo $1 || echo $((l > 5 ? l : 5)); }
K=$(pwd)/.carry/kiln
rm -rf /tmp/pA; mkdir -p /tmp/pA; tar xJf .carry/lib.txz -C /tmp/pA
P=/tmp/pA/dist
V=.carry/smol-vocab.gguf
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
cat $R/env.log
grep -q PEER_FA_KV .peers/llamacpp/ggml/tests/peer-bench.cpp ||
  patch -p1 -d .peers/llamacpp < bench/peers/peer-bench-kiln.patch > $R/peer-patch.log 2>&1
BPID=
[ "${PEERS:-1}" = 1 ] && { ( OUT=$R/peer STEPS="none" nice -n 5 bash .peers/llamacpp/run.sh > $R/peer-build.log 2>&1 ) & BPID=$!; }
( $K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf
  $K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf ) > $R/models.log 2>&1 &
MPID=$!
F=${AF:-attention_decode_q8_0_d64,attention_decode_q8_0_d128,attention_decode_rope_q8_0_d64_q8_1s,attention_decode_rope_q8_0_d128_q8_1s}
timeout $(lim 120) $K parity --device cuda --package $P --kernel $F > $R/parity-attn.log 2>&1
echo "attn parity rc $? ($((SECONDS - T0)) s): $(tail -n 1 $R/parity-attn.log | cut -c1-120)"; grep -E "^FAIL" $R/parity-attn.log | head -3
ck
A=""
for c in ${CTX:-1k 2k 4k 8k 16k 32k}; do for t in 1 4 8; do A="$A,attn_q8_0_ctx${c}_t${t}"; done; done
A=${A#,}
VV=tuned_t2_5_short,tuned_t2_5_long,r4t256,r8,r1x,r4x,r4x2
timeout $(lim 200) $K bench --package $P --kernel $A --variant $VV --replays 10 --json $R/bench-attn.json > $R/bench-attn.log 2>&1
echo "attn rc $? ($((SECONDS - T0)) s)"; grep -E "^attn" $R/bench-attn.log | sort -u | cut -c1-220; ck
if [ "${PEERS:-1}" = 1 ] && [ $(left) -gt 60 ]; then
  timeout $(lim 90) python3 bench/attention_peers.py $R/sdpa.json 1024,2048,4096,8192,16384,32768 > $R/sdpa.log 2>&1
  echo "sdpa rc $? ($((SECONDS - T0)) s): $(tail -n 18 $R/sdpa.log | tr '\n' ' ' | cut -c1-600)"; ck
else echo "sdpa skipped: $(left) s left"; fi
if [ $(left) -gt 90 ]; then
F=gemv_q8_0_rp,gemv_q4_0_rp,gemv_q4_1_rp,gemv_q8_0_rp_res,gemv_q4_0_rp_res,gemv_q4_1_rp_res,gemv_q8_0_rp_res_rmsnorm,gemv_q8_0_rp_res_sq,gemv_q8_0_rp_swiglu_q8_1s,gemv_q8_0_rp_swiglu_q8_1s_rms,gemv_q8_0_rp_swiglu_q8_1s_norm,gemv_q8_0_rp_qkv_cache_norm,gemv_q4_1_rp_qkv_cache_norm,gemv_q8_0_rp_k4,gemv_moe_q8_0_rp,gemv_moe_q4_0_rp
timeout $(lim 100) $K parity --device cuda --package $P --kernel $F > $R/parity-gemv.log 2>&1
echo "gemv parity rc $? ($((SECONDS - T0)) s): $(tail -n 1 $R/parity-gemv.log | cut -c1-120)"; grep -E "^FAIL" $R/parity-gemv.log | head -3
ck
wait $MPID
sha256sum /tmp/rs-q4_1.gguf /tmp/rs-q8_0.gguf > $R/models.sha256 2>&1
declare -A EXPECT=([q4_1]="6a0581f903b7ec38" [q8_0]="9ea27d26")
for m in q4_1 q8_0; do
  for c in 1 8; do
    timeout $(lim 40) $K generate --model /tmp/rs-$m.gguf --package $P --device cuda --oracle tools/engine/tests/data/oracle-$m.json --positions 16 --chunk $c > $R/digest-$m-c$c.log 2>&1
    echo "digest $m chunk $c: $(grep -h 'digest' $R/digest-$m-c$c.log | cut -c1-100) (interpreter: ${EXPECT[$m]}...)"
  done
done
ck
else echo "gemv parity and digests skipped: $(left) s left"; fi
if [ "${PEERS:-1}" = 1 ] && [ $(left) -gt 40 ]; then
  wait $BPID; echo "peer build: $(tail -n 2 $R/peer/build.txt 2>/dev/null | tr '\n' ' ' | cut -c1-200)"
  OUT=$R/peer STEPS="peer" PEER_FA_ONLY=1 PEER_FA_KV=1024,2048,4096,8192,16384,32768 timeout $(lim 150) bash .peers/llamacpp/run.sh > $R/peer-run.log 2>&1
  echo "peer rc $? ($((SECONDS - T0)) s)"; grep -E "FLASH_ATTN_EXT type_KV=q8_0 layout=llama" $R/peer/peer.txt 2>/dev/null | grep "mode=rot" | cut -c1-160 | head -18
else echo "peer skipped: $(left) s left"; fi
ck
