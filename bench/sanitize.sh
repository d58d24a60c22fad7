#!/usr/bin/env bash
# `kiln parity --device cuda --large` under NVIDIA's compute-sanitizer: memcheck, racecheck,
# synccheck and initcheck, one after the other, in one call on a GPU machine. Each tool's log and
# its ERROR SUMMARY go under $OUT; the last lines printed are the four summaries.
# Expects (carried): .carry/kiln (runtime-only binary) and dist/ (the package).
# Usage: bash bench/sanitize.sh [extra parity args...]
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
[[ -x "$cs" ]] || { echo "sanitize: compute-sanitizer not found" >&2; exit 2; }
"$cs" --version | tail -1
for tool in memcheck racecheck synccheck initcheck; do
    start=$(date +%s)
    timeout "${SANITIZE_TIMEOUT:-170}" "$cs" --tool "$tool" --print-limit 50 --error-exitcode 99 \
        ./.carry/kiln parity --device cuda --package dist --large "$@" > "$OUT/sanitize-$tool.log" 2>&1
    rc=$?
    echo "$tool: exit $rc, $(( $(date +%s) - start )) s, $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize-$tool.log" | tail -1), parity: $(grep -E '^[0-9]+ passed' "$OUT/sanitize-$tool.log" | tail -1)" | tee -a "$OUT/sanitize-summary.log"
done
