#!/usr/bin/env bash
# The forty-fifth session's standing call (2026-12-07): HEAD's sm_90 package (`libH`: `kiln
# build --arch sm_90 --strict` at b96a147) and runtime-only `kiln`, with llama.cpp's peer-bench
# built in the background unless a warm machine has it: the runtime's cuda device tests (a test
# binary of the same commit); issue 12's routed GEMV cases (every variant of each family timed);
# issue 13's Q8_0 d128 cases in both orders; llama.cpp's MUL_MAT, MUL_MAT_ID and
# FLASH_ATTN_EXT and torch SDPA on the same shapes in the same call. Carry: .cxd (kiln.xz,
# rt-tests.xz, peers.txz, call.sh, this script) and .cxh (libH.txz). Run from the repository
# root: `bash .cxd/c3.sh`.
. "$(dirname "$0")/call.sh"
begin c3 420
rm -rf /tmp/pH; mkdir -p /tmp/pH; tar xJf $(pwd)/.cxh/libH.txz -C /tmp/pH; P=/tmp/pH/dist
BP=
if [ ! -x /tmp/llb/bin/peer-bench ]; then
  mkdir -p /tmp/peers && tar xJf $C/peers.txz -C /tmp/peers
  grep -q PEER_FA_KV /tmp/peers/llamacpp/ggml/tests/peer-bench.cpp ||
    patch -p1 -d /tmp/peers/llamacpp < bench/peers/peer-bench-kiln.patch > $R/peer-patch.log 2>&1
  ( OUT=$R/peer STEPS="none" DEADLINE=290 BUILD_DEADLINE=285 nice -n 5 bash /tmp/peers/llamacpp/run.sh > $R/peer-build.log 2>&1; echo "rc $?" >> $R/peer-build.log ) &
  BP=$!
fi
xz -dc $C/rt-tests.xz > /tmp/rt-tests && chmod +x /tmp/rt-tests
timeout $(lim 90) /tmp/rt-tests --ignored cuda --test-threads=1 > $R/device-tests.log 2>&1
echo "device tests rc $?: $(grep -E '^test result' $R/device-tests.log) ($((SECONDS - T0)) s)"; ck
G=gemv_q8_0_rp_n14336_t1,gemv_q8_0_rp_k4_n14336_t4,gemv_q8_0_rp_k4_n14336_t8,gemv_q8_0_rp_n4096_t1,gemv_q8_0_rp_k4_n4096_t8
G=$G,gemv_q4_0_rp_n14336_t1,gemv_q4_1_rp_n14336_t1,gemv_moe_q8_0_qwen3_t1,gemv_moe_q8_0_qwen3_t8
timeout $(lim 90) $K bench --package $P --kernel $G --json $R/gemv.json > $R/gemv.log 2>&1
echo "gemv rc $? ($((SECONDS - T0)) s)"; grep -E "^gemv" $R/gemv.log | sort -u | cut -c1-120; ck
Q=attn_q8_0_ctx4k_t1,attn_q8_0_ctx4k_t4,attn_q8_0_ctx4k_t8,attn_q8_0_ctx32k_t1,attn_q8_0_ctx32k_t4,attn_q8_0_ctx32k_t8
I=attn_q8_0_i8_ctx4k_t1,attn_q8_0_i8_ctx4k_t4,attn_q8_0_i8_ctx4k_t8,attn_q8_0_i8_ctx32k_t1,attn_q8_0_i8_ctx32k_t4,attn_q8_0_i8_ctx32k_t8
timeout $(lim 45) $K bench --package $P --kernel $I --json $R/i8.json > $R/i8.log 2>&1
echo "i8 rc $? ($((SECONDS - T0)) s)"; grep -E "^attn" $R/i8.log | sort -u | cut -c1-120; ck
timeout $(lim 45) $K bench --package $P --kernel $Q --variant tuned_t1_short,tuned_t1_long,tuned_t2_5_short,tuned_t2_5_long,r8 --json $R/q8.json > $R/q8.log 2>&1
echo "q8 rc $? ($((SECONDS - T0)) s)"; grep -E "^attn" $R/q8.log | sort -u | cut -c1-120; ck
[ -n "$BP" ] && { wait $BP; echo "peer build: $(tail -n 1 $R/peer-build.log) ($((SECONDS - T0)) s)"; }
if [ -x /tmp/llb/bin/peer-bench ] && [ $(left) -gt 40 ]; then
  OUT=$R/peer STEPS="peer" PEER_FA_KV=4096,32768 DEADLINE=$(lim 120) timeout $(lim 125) bash /tmp/peers/llamacpp/run.sh > $R/peer-run.log 2>&1
  echo "peer rc $? ($((SECONDS - T0)) s)"
  grep -E "MUL_MAT|FLASH_ATTN_EXT" $R/peer/peer.txt 2>/dev/null | grep "mode=rot" | grep -v "layout=harness" | grep -E "n=1 |n=4 |n=8 |nb=1 |nb=4 |nb=8 " | cut -c1-150
else echo "peer skipped: $(left) s left"; fi
ck
[ $(left) -gt 30 ] && { timeout $(lim 90) python3 bench/attention_peers.py $R/sdpa.json 4096,32768 > $R/sdpa.log 2>&1
echo "sdpa rc $? ($((SECONDS - T0)) s): $(tail -n 6 $R/sdpa.log | tr '\n' ' ' | cut -c1-300)"; }
ck
echo "end ($((SECONDS - T0)) s)"
