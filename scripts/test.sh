#!/usr/bin/env bash
# Runs the whole test suite: formatting, lints, every crate's tests (interpreter, verifier,
# codegen-tests, packages, runtime on the cpu device; GPU tests skip with a message when no
# device is present), and the `hip` feature build against Debian's ROCm headers.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
source scripts/env.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
HIP_PATH=/usr cargo clippy -p kiln-runtime --features hip --all-targets -- -D warnings
cargo test --workspace
HIP_PATH=/usr cargo test -p kiln-runtime --features hip
