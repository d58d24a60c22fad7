#!/usr/bin/env bash
# The device call the twenty-ninth session (2026-12-05, no device lent) left for the next one.
# Not run yet: copy to .carry/c1.sh, carry .carry/{kiln,lib.txz,smol-vocab.gguf} (the
# runtime-only kiln and `tar cJf .carry/lib.txz -C /tmp/lib dist` of `kiln build --arch sm_90
# --strict -o /tmp/lib/dist` at the commit to time) and .peers/llamacpp, then
# `bash .carry/c1.sh`. About 9 minutes. What it settles, in order:
# 1. Parity on cuda of every GEMV family with early loads (the back end's coherent activation
#    loads changed their machine code; the hold limits changed four-row twins and wide_t2_g4),
#    the MoE families (new peeled / early `slot_r*` variants) and the k4 family (new
#    `wide_t1_g1_w8_r64` / `_r80`).
# 2. The race the fix removes: the logits of T = 1 decode steps (`--chunk 1`, early twins
#    routed) on cuda against the interpreter's digest (EXPECT below, from
#    bench/results/digests-cpu-2026-12-05.md: recompute it with that file's command if the
#    engine's arithmetic changed since); with .carry/old.txz (the package before the fix) also
#    that package's, to see whether the race showed.
# 3. The GEMV bench with every variant (issue 12's cases, MoE with the new variants) and
#    llama.cpp's peer-bench in the same call.
set -uo pipefail
O=${OUT:-/tmp/out}; R=/tmp/c1; rm -rf $R; mkdir -p $R
ck() { tar czf $O/c1.tgz -C /tmp c1; }
K=$(pwd)/.carry/kiln
rm -rf /tmp/p1; mkdir -p /tmp/p1; tar xJf .carry/lib.txz -C /tmp/p1
P=/tmp/p1/dist
V=.carry/smol-vocab.gguf
cp "$0" $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $R/env.log 2>&1
# peer-bench needs bench/peers/peer-bench-kiln.patch (Q4 and MoE shapes) on ../shared's copy.
grep -q PEER_FA_KV .peers/llamacpp/ggml/tests/peer-bench.cpp ||
  patch -p1 -d .peers/llamacpp < bench/peers/peer-bench-kiln.patch > $R/peer-patch.log 2>&1
( OUT=$R/peer nice -n 5 bash .peers/llamacpp/run.sh > $R/peer-build.log 2>&1 ) &
BPID=$!
( $K random-model --shape smollm2-135m --type q4_1 --vocab-from $V -o /tmp/rs-q4_1.gguf
  $K random-model --shape smollm2-135m --type q8_0 --vocab-from $V -o /tmp/rs-q8_0.gguf ) > $R/models.log 2>&1 &
MPID=$!
F=gemv_q8_0_rp,gemv_q4_0_rp,gemv_q4_1_rp,gemv_q8_0_rp_res,gemv_q4_0_rp_res,gemv_q4_1_rp_res,gemv_q8_0_rp_res_rmsnorm,gemv_q8_0_rp_res_sq,gemv_q8_0_rp_swiglu_q8_1s,gemv_q8_0_rp_swiglu_q8_1s_rms,gemv_q8_0_rp_swiglu_q8_1s_norm,gemv_q8_0_rp_qkv_cache_norm,gemv_q4_1_rp_qkv_cache_norm,gemv_q8_0_rp_k4,gemv_moe_q8_0_rp,gemv_moe_q4_0_rp
timeout 200 $K parity --device cuda --package $P --kernel $F > $R/parity.log 2>&1
echo "parity rc $?: $(tail -n 1 $R/parity.log | cut -c1-120)"; grep -E "^FAIL" $R/parity.log | head -3
ck
wait $MPID
sha256sum /tmp/rs-q4_1.gguf /tmp/rs-q8_0.gguf > $R/models.sha256 2>&1
# EXPECT: the interpreter's logits (kiln generate --device cpu --arch sm_90, the same models,
# --positions 16) at the commit that wrote this script, the first prompt's BLAKE3: the same for
# --chunk 1 and --chunk 8 (every step's order is per token), and the same as every device digest
# since the sixth session (taken with --chunk 8, whose steps run no early twin).
declare -A EXPECT=([q4_1]="6a0581f903b7ec38" [q8_0]="9ea27d26")
# The package before the fix (7c4e09d, carried as .carry/old.txz if at hand): its T = 1 steps
# read activations before the wait; a digest that differs from EXPECT shows the race happened.
if [ -f .carry/old.txz ]; then
  rm -rf /tmp/p0; mkdir -p /tmp/p0; tar xJf .carry/old.txz -C /tmp/p0
  for m in q4_1 q8_0; do
    timeout 60 $K generate --model /tmp/rs-$m.gguf --package /tmp/p0/dist --device cuda --oracle tools/engine/tests/data/oracle-$m.json --positions 16 --chunk 1 > $R/digest-old-$m-c1.log 2>&1
    echo "old package, digest $m chunk 1: $(grep -h 'digest' $R/digest-old-$m-c1.log | cut -c1-100) (interpreter: ${EXPECT[$m]}...)"
  done
fi
for m in q4_1 q8_0; do
  for c in 1 8; do
    timeout 60 $K generate --model /tmp/rs-$m.gguf --package $P --device cuda --oracle tools/engine/tests/data/oracle-$m.json --positions 16 --chunk $c > $R/digest-$m-c$c.log 2>&1
    echo "digest $m chunk $c: $(grep -h 'digest' $R/digest-$m-c$c.log | cut -c1-100) (interpreter: ${EXPECT[$m]}...)"
  done
done
ck
B=gemv_q8_0_rp_k4_n14336_t1,gemv_q8_0_rp_k4_n14336_t4,gemv_q8_0_rp_k4_n14336_t8,gemv_q8_0_rp_k4_n4096_t1,gemv_q8_0_rp_k4_n4096_t8
timeout 120 $K bench --package $P --kernel $B --json $R/bench-k4.json > $R/bench-k4.log 2>&1
echo "bench k4 rc $?"; grep -E "^gemv" $R/bench-k4.log | sort -u | cut -c1-200
ck
B=gemv_q8_0_rp_n14336_t1,gemv_q8_0_rp_n4096_t1,gemv_q4_0_rp_n14336_t1,gemv_q4_1_rp_n14336_t1,gemv_moe_q8_0_qwen3_t1,gemv_moe_q8_0_qwen3_t8
timeout 150 $K bench --package $P --kernel $B --json $R/bench-t1.json > $R/bench-t1.log 2>&1
echo "bench t1/moe rc $?"; grep -E "^gemv" $R/bench-t1.log | sort -u | cut -c1-200
ck
wait $BPID; echo "peer: $(tail -n 2 $R/peer/build.txt 2>/dev/null | tr '\n' ' ' | cut -c1-200)"
grep -iE "m=4096 n=(1|8) |m=14336 n=(1|8) |MUL_MAT_ID" $R/peer/peer.txt 2>/dev/null | grep -E "q8_0|q4" | cut -c1-140 | head -12
ck
