#!/usr/bin/env bash
# The correctness check on a GPU machine, in one call: parity of the library (--large) and of the
# op checks (specs/checks.ron: packed ops, unaligned/64-bit access, mma), the selected cuda
# device tests of the runtime and of the tools (how many ran, how many were left out and why),
# then both parity runs under compute-sanitizer (memcheck, racecheck, synccheck, initcheck),
# then `kiln bench` with its floor from a copy measured in the same run. Logs under $OUT.
# Expects (carried): .carry/kiln (runtime-only), .carry/tests/* (test binaries), .carry/dist
# (library package), .carry/checks (op-check package).
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
{
    date -u
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv
    ls -la .carry .carry/tests
} > "$OUT/env.log" 2>&1
K=./.carry/kiln
echo "== parity: library (--large) =="
$K parity --device cuda --package .carry/dist --large > "$OUT/parity-library.log" 2>&1; echo "exit $?: $(tail -1 "$OUT/parity-library.log")"
echo "== parity: op checks =="
$K parity --device cuda --package .carry/checks --large > "$OUT/parity-checks.log" 2>&1; echo "exit $?: $(tail -1 "$OUT/parity-checks.log")"
grep -E "^FAIL|not run" "$OUT/parity-checks.log" | head -20
grep -E "mma_f16/.*max" "$OUT/parity-checks.log"
echo "== device tests (selected: cuda only; hip ones need an AMD GPU) =="
for t in .carry/tests/*; do
    "$t" --ignored cuda --test-threads=1 > "$OUT/tests-$(basename "$t").log" 2>&1
    echo "$(basename "$t") (cuda, selected): exit $?, $(grep -E '^test result' "$OUT/tests-$(basename "$t").log" | tail -1)"
    "$t" --test-threads=4 > "$OUT/tests-default-$(basename "$t").log" 2>&1
    echo "$(basename "$t") (default selection): exit $?, $(grep -E '^test result' "$OUT/tests-default-$(basename "$t").log" | tail -1)"
done
echo "== compute-sanitizer =="
cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
for pkg in dist checks; do
    for tool in memcheck racecheck synccheck initcheck; do
        timeout 150 "$cs" --tool "$tool" --print-limit 50 --error-exitcode 99 \
            $K parity --device cuda --package .carry/$pkg --large > "$OUT/sanitize-$pkg-$tool.log" 2>&1
        echo "$pkg $tool: exit $?, $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize-$pkg-$tool.log" | tail -1), $(grep -E '^[0-9]+ passed' "$OUT/sanitize-$pkg-$tool.log" | tail -1)"
    done
done 2>&1 | tee "$OUT/sanitize-summary.log"
echo "== bench (floor from a copy measured in this run) =="
$K bench --package .carry/dist --json "$OUT/kiln_bench.json" > "$OUT/bench.log" 2>&1; echo "exit $?"; tail -14 "$OUT/bench.log"
tar czf /tmp/soundness.tgz -C "$OUT" . && rm -rf "${OUT:?}"/* && mv /tmp/soundness.tgz "$OUT/"
