#!/usr/bin/env python3
"""Writes specs/tests/fixtures/q8_golden.bin: Q8_0 and Q8_1 blocks made by the `gguf` Python
package (llama.cpp's gguf-py, whose Q8_0 is bit-exact with ggml's quantize_row_q8_0_ref), for the
kiln-specs quantize tests.

    python3 -m pip install gguf numpy
    python3 specs/tools/q8_golden.py

gguf-py has no Q8_1 quantizer (Q8_1 is not a file format), so Q8_1 is derived from gguf's Q8_0
blocks: ggml's quantize_row_q8_1_ref computes d and qs exactly as Q8_0 does and adds
s = fp16(d * sum(qs)) (sum as int, product in f32), which is what is computed here.

File layout (little-endian):
    b"KQ8G", u32 version = 1, u32 n (values, a multiple of 32)
    f32  x[n]                  inputs (random rows plus edge-case blocks)
    u8   q8_0_x[n / 32 * 34]   gguf Q8_0 of x
    u8   q8_1_x[n / 32 * 36]   Q8_1 of x
    u16  h[n]                  f16 inputs (bits)
    u8   q8_0_h[n / 32 * 34]   gguf Q8_0 of h widened to f32
    u8   q8_1_h[n / 32 * 36]   Q8_1 of the same
"""
import os
import struct
import warnings

import numpy as np
from gguf import GGMLQuantizationType, quants

QK = 32


def edge_blocks() -> np.ndarray:
    """Blocks that hit ggml's corner cases (no NaN: ggml's amax depends on where it sits)."""
    b = []
    b.append(np.zeros(QK))                                        # all zero: d = 0, id = 0
    b.append(np.full(QK, -0.0))                                   # negative zero
    halves = np.array([127.0, 2.5, -2.5, 0.5, -0.5, 126.5, -126.5, 1.5, -1.5, 3.5] + [0.25] * 22)
    b.append(halves)                                              # x * id exactly k + 0.5 (d = 1)
    b.append(np.linspace(-1e7, 1e7, QK))                          # d above f16 max: stored as inf
    b.append(np.linspace(-65504.0 * 127, 3.0, QK))                # d right at f16 max
    b.append(np.full(QK, 3.0e38) * np.sign(np.arange(QK) - 15.5)) # near f32 max
    b.append(np.array([1e-40, -3e-41] + [0.0] * 30))              # subnormal: 1/d overflows, qs = 0
    b.append(np.array([2e-36, -1e-37, 5e-38] + [1e-39] * 29))     # tiny but 1/d finite
    b.append(np.array([np.inf] + [1.0] * 31))                     # inf: d = inf, id = 0
    b.append(np.array([6.0e-8 * k for k in range(QK)]))            # f16 subnormal d
    return np.array(b, dtype=np.float32).reshape(-1)


def q8_0(x: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return quants.quantize(x.reshape(-1, QK), GGMLQuantizationType.Q8_0).reshape(-1, 34)


def q8_1(x: np.ndarray) -> np.ndarray:
    b0 = q8_0(x)
    # s uses the f32 d (before its rounding to f16), as ggml does.
    amax = np.abs(x.reshape(-1, QK)).max(axis=1).astype(np.float32)
    d32 = (amax / np.float32(127)).astype(np.float32)
    qsum = b0[:, 2:].view(np.int8).astype(np.int32).sum(axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = (qsum.astype(np.float32) * d32).astype(np.float32).astype(np.float16)
    out = np.zeros((b0.shape[0], 36), dtype=np.uint8)
    out[:, 0:2] = b0[:, 0:2]
    out[:, 2:4] = s.view(np.uint8).reshape(-1, 2)
    out[:, 4:] = b0[:, 2:]
    return out


def main() -> None:
    rng = np.random.default_rng(20240611)
    rows = [
        rng.normal(0.0, 1.0, 16 * QK),
        rng.normal(0.0, 30.0, 16 * QK) * (rng.random(16 * QK) < 0.3),
        rng.uniform(-1e-3, 1e-3, 16 * QK),
        rng.integers(-127, 128, 16 * QK) / 8.0,
    ]
    x = np.concatenate([np.concatenate(rows).astype(np.float32), edge_blocks()])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        h = x.astype(np.float16)
    hx = h.astype(np.float32)
    n = x.size
    assert n % QK == 0
    path = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "q8_golden.bin")
    with open(path, "wb") as f:
        f.write(b"KQ8G" + struct.pack("<II", 1, n))
        f.write(x.astype("<f4").tobytes())
        f.write(q8_0(x).tobytes())
        f.write(q8_1(x).tobytes())
        f.write(h.view("<u2").tobytes())
        f.write(q8_0(hx).tobytes())
        f.write(q8_1(hx).tobytes())
    print(f"wrote {os.path.normpath(path)}: {n} values, {n // QK} blocks")


if __name__ == "__main__":
    main()
