#!/usr/bin/env bash
# Builds the kernel library ahead of time for every supported architecture into dist/ and prints
# the resource report. Needs no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
source scripts/env.sh
cargo build --release -p kiln
./target/release/kiln build --all-archs -o dist "$@"
