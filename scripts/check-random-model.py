#!/usr/bin/env python3
"""Checks a `kiln random-model` file with an outside reader, the PyPI package gguf: every tensor
dequantizes to finite values; the matrices have about unit-gain rows (std of a weight within 15%
of 1/sqrt(k), mean near 0), the embedding about unit values, the norms in [0.8, 1.2]; the
vocabulary is padded to llama.vocab_size. Usage: check-random-model.py FILE.gguf"""
import sys

import gguf
import numpy as np

r = gguf.GGUFReader(sys.argv[1])
vocab = int(r.fields["llama.vocab_size"].parts[-1][0])
tokens = r.fields["tokenizer.ggml.tokens"]
assert len(tokens.data) == vocab, f"{len(tokens.data)} tokens, llama.vocab_size {vocab}"
bad = []
for t in r.tensors:
    x = gguf.dequantize(t.data, t.tensor_type).astype(np.float64)
    if not np.isfinite(x).all():
        bad.append(f"{t.name}: non-finite values")
        continue
    k = x.shape[-1]
    if x.ndim == 1:
        ok = x.min() >= 0.8 and x.max() <= 1.2
        what = f"range [{x.min():.3f}, {x.max():.3f}]"
    else:
        want = 1.0 if t.name == "token_embd.weight" else 1.0 / np.sqrt(k)
        ok = abs(x.std() / want - 1) < 0.15 and abs(x.mean()) < 0.05 * want
        what = f"std {x.std():.4f} (want {want:.4f}), mean {x.mean():.2e}"
    if not ok:
        bad.append(f"{t.name} ({t.tensor_type.name}): {what}")
print(f"{sys.argv[1]}: {len(r.tensors)} tensors read by the gguf package, vocabulary {vocab}: "
      + ("all as drawn" if not bad else f"{len(bad)} wrong"))
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
