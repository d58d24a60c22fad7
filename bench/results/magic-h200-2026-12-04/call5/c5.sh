#!/usr/bin/env bash
# Call 5 (2026-12-04, twenty-first session): the cargo tests that need a CUDA device (ignored in
# CI), from test binaries built here: kiln-runtime's and the kiln crate's (runtime only).
set -uo pipefail
O=${OUT:-/tmp/out}; R=$O/c5; mkdir -p $R
cp .carry/c5.sh $R/
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $R/env.log 2>&1
timeout 200 .carry/runtime-tests --ignored cuda:: --test-threads 1 > $R/runtime-cuda.log 2>&1; echo "runtime rc $?"; tail -n 3 $R/runtime-cuda.log
timeout 60 .carry/kiln-tests --ignored cuda --test-threads 1 > $R/kiln-cuda.log 2>&1; echo "kiln rc $?"; tail -n 3 $R/kiln-cuda.log
