#!/usr/bin/env python3
"""Writes tools/engine/tests/data/tiny.gguf with the PyPI package `gguf` (0.19): the outside
fixture of the engine's GGUF reader (`python3 scripts/engine-tiny-gguf.py`). Metadata of every
scalar type, a string array, and three tensors: F32 `a` [2 x 4] = arange(8), Q8_0 `b` [2 x 32]
and Q4_1 `c` [1 x 64] quantized by gguf from fixed values (the test checks the bytes' scales)."""
import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q

w = gguf.GGUFWriter("tools/engine/tests/data/tiny.gguf", "llama")
w.add_uint8("t.u8", 200)
w.add_int8("t.i8", -7)
w.add_uint16("t.u16", 60000)
w.add_int16("t.i16", -30000)
w.add_uint32("t.u32", 4000000000)
w.add_int32("t.i32", -2000000000)
w.add_float32("t.f32", 1.5)
w.add_bool("t.bool", True)
w.add_string("t.str", "héllo")
w.add_array("t.arr", ["a", "Ġb", "c d"])
w.add_uint64("t.u64", 1 << 40)
w.add_int64("t.i64", -(1 << 40))
w.add_float64("t.f64", 0.25)
w.add_tensor("a", np.arange(8, dtype=np.float32).reshape(2, 4))
b = np.linspace(-1.0, 1.0, 64, dtype=np.float32).reshape(2, 32)
w.add_tensor("b", gguf.quants.quantize(b, Q.Q8_0), raw_shape=(2, 34), raw_dtype=Q.Q8_0)
c = np.linspace(0.0, 3.0, 64, dtype=np.float32).reshape(1, 64)
w.add_tensor("c", gguf.quants.quantize(c, Q.Q4_1), raw_shape=(1, 40), raw_dtype=Q.Q4_1)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
