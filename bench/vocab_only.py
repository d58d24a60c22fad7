#!/usr/bin/env python3
"""A GGUF file with a model file's metadata (its tokenizer) and no tensors (1.8 MB for SmolLM2),
for `kiln random-model --vocab-from` on a machine the model files are not carried to:

    python3 bench/vocab_only.py models/SmolLM2-135M-Instruct.Q4_1.gguf .carry/smol-vocab.gguf

`kiln random-model` makes the same bytes from it as from the whole file (it reads the vocabulary
alone). Needs the PyPI package `gguf`.
"""
import sys

import gguf


def main(src: str, dst: str) -> None:
    r = gguf.GGUFReader(src)
    w = gguf.GGUFWriter(dst, arch=r.fields["general.architecture"].contents())
    # The writer adds these itself.
    skip = {"general.architecture", "GGUF.version", "GGUF.tensor_count", "GGUF.kv_count"}
    for name, f in r.fields.items():
        if name in skip:
            continue
        t = f.types[0]
        if t == gguf.GGUFValueType.ARRAY:
            w.add_key_value(name, f.contents(), t, sub_type=f.types[1] if len(f.types) > 1 else None)
        else:
            w.add_key_value(name, f.contents(), t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: vocab_only.py MODEL.gguf OUT.gguf")
    main(sys.argv[1], sys.argv[2])
