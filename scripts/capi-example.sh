#!/usr/bin/env bash
# Builds the C API example (tools/capi/examples/argmax.c) against the release static library:
#   scripts/capi-example.sh OUT_EXE
# then, on any machine with the package: OUT_EXE PACKAGE_DIR cpu|cuda|hip [SEED [CPU_ARCH]]
set -euo pipefail
out=${1:?usage: scripts/capi-example.sh OUT_EXE}
cd "$(dirname "$0")/.."
cargo build --release -p kiln-capi
${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -I tools/capi/include tools/capi/examples/argmax.c \
    target/release/libkiln_capi.a -lpthread -ldl -lm -o "$out"
echo "built $out"
