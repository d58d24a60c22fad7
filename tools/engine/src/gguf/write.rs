//! Writing GGUF files (version 3): metadata as [`Value`]s, then tensors streamed one at a time,
//! so a file larger than memory (an 8B model's 8.5 GB) is written without holding it.
//!
//! The layout is the reader's (see the parent module): header, metadata, tensor infos with
//! offsets that are multiples of the alignment (32), padding, data. The writer computes every
//! offset from the declared shapes and types up front and refuses a tensor whose data is not
//! the declared length, so what it writes is what [`super::Gguf::open`] accepts.

use super::{GgmlType, Value};
use std::io::{self, Write};

/// The alignment of the data section and of every tensor in it.
const ALIGN: u64 = 32;

/// A tensor to write: name, dims (innermost first), type.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorSpec {
    /// Its name (`blk.0.attn_q.weight`).
    pub name: String,
    /// Dims, innermost first (ggml's order: `[k, n]` for an `n x k` matrix).
    pub dims: Vec<u64>,
    /// The element type.
    pub ty: GgmlType,
}

impl TensorSpec {
    /// Bytes of its data; `None` when the innermost dim is not a whole number of blocks.
    pub fn bytes(&self) -> Option<u64> {
        let inner = *self.dims.first()?;
        if inner % self.ty.block() != 0 {
            return None;
        }
        let rows: u64 = self.dims[1..].iter().product();
        Some(inner / self.ty.block() * self.ty.block_bytes() * rows)
    }
}

/// Why a file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Writing failed.
    #[error("writing GGUF: {0}")]
    Io(#[from] io::Error),
    /// A tensor's innermost dim is not a whole number of its type's blocks.
    #[error(
        "tensor `{name}`: innermost dim {inner} is not a multiple of {ty:?}'s block of {block}"
    )]
    Blocks {
        /// The tensor.
        name: String,
        /// Its innermost dim.
        inner: u64,
        /// Its type.
        ty: GgmlType,
        /// The type's block.
        block: u64,
    },
    /// The data handed in for a tensor is not its declared length.
    #[error("tensor `{name}`: {found} bytes written, its shape and type need {expected}")]
    Length {
        /// The tensor.
        name: String,
        /// Bytes its shape and type need.
        expected: u64,
        /// Bytes given.
        found: u64,
    },
    /// An array mixes element types (GGUF arrays have one).
    #[error("metadata `{0}`: an array's elements must share one type")]
    MixedArray(String),
}

fn type_id(v: &Value) -> u32 {
    match v {
        Value::U8(_) => 0,
        Value::I8(_) => 1,
        Value::U16(_) => 2,
        Value::I16(_) => 3,
        Value::U32(_) => 4,
        Value::I32(_) => 5,
        Value::F32(_) => 6,
        Value::Bool(_) => 7,
        Value::Str(_) => 8,
        Value::Array(_) => 9,
        Value::U64(_) => 10,
        Value::I64(_) => 11,
        Value::F64(_) => 12,
    }
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend((s.len() as u64).to_le_bytes());
    out.extend(s.as_bytes());
}

fn put_value(out: &mut Vec<u8>, key: &str, v: &Value) -> Result<(), WriteError> {
    match v {
        Value::U8(x) => out.push(*x),
        Value::I8(x) => out.extend(x.to_le_bytes()),
        Value::U16(x) => out.extend(x.to_le_bytes()),
        Value::I16(x) => out.extend(x.to_le_bytes()),
        Value::U32(x) => out.extend(x.to_le_bytes()),
        Value::I32(x) => out.extend(x.to_le_bytes()),
        Value::F32(x) => out.extend(x.to_le_bytes()),
        Value::Bool(x) => out.push(u8::from(*x)),
        Value::Str(s) => put_str(out, s),
        Value::Array(items) => {
            // An empty array still needs an element type: string, as llama.cpp's merges are.
            let ty = items.first().map_or(8, type_id);
            if items.iter().any(|i| type_id(i) != ty) {
                return Err(WriteError::MixedArray(key.to_string()));
            }
            out.extend(ty.to_le_bytes());
            out.extend((items.len() as u64).to_le_bytes());
            for i in items {
                put_value(out, key, i)?;
            }
        }
        Value::U64(x) => out.extend(x.to_le_bytes()),
        Value::I64(x) => out.extend(x.to_le_bytes()),
        Value::F64(x) => out.extend(x.to_le_bytes()),
    }
    Ok(())
}

/// Writes a GGUF file to `out`: `metadata` in order, then each tensor's data as `fill` writes it
/// (exactly [`TensorSpec::bytes`] bytes each, checked).
pub fn write(
    out: &mut dyn Write,
    metadata: &[(String, Value)],
    tensors: &[TensorSpec],
    fill: &mut dyn FnMut(&TensorSpec, &mut dyn Write) -> io::Result<()>,
) -> Result<(), WriteError> {
    let mut head = b"GGUF".to_vec();
    head.extend(3u32.to_le_bytes());
    head.extend((tensors.len() as u64).to_le_bytes());
    head.extend((metadata.len() as u64).to_le_bytes());
    for (k, v) in metadata {
        put_str(&mut head, k);
        head.extend(type_id(v).to_le_bytes());
        put_value(&mut head, k, v)?;
    }
    let mut offset = 0u64;
    let mut sizes = Vec::with_capacity(tensors.len());
    for t in tensors {
        let bytes = t.bytes().ok_or_else(|| WriteError::Blocks {
            name: t.name.clone(),
            inner: t.dims.first().copied().unwrap_or(0),
            ty: t.ty,
            block: t.ty.block(),
        })?;
        put_str(&mut head, &t.name);
        head.extend((t.dims.len() as u32).to_le_bytes());
        for d in &t.dims {
            head.extend(d.to_le_bytes());
        }
        head.extend(t.ty.id().to_le_bytes());
        head.extend(offset.to_le_bytes());
        sizes.push(bytes);
        offset = (offset + bytes).div_ceil(ALIGN) * ALIGN;
    }
    head.resize((head.len() as u64).div_ceil(ALIGN) as usize * ALIGN as usize, 0);
    out.write_all(&head)?;
    for (t, &bytes) in tensors.iter().zip(&sizes) {
        let mut counted = Counted { inner: &mut *out, n: 0 };
        fill(t, &mut counted)?;
        if counted.n != bytes {
            return Err(WriteError::Length {
                name: t.name.clone(),
                expected: bytes,
                found: counted.n,
            });
        }
        let pad = bytes.div_ceil(ALIGN) * ALIGN - bytes;
        out.write_all(&vec![0u8; pad as usize])?;
    }
    out.flush()?;
    Ok(())
}

/// A writer that counts what passes through.
struct Counted<'a> {
    inner: &'a mut dyn Write,
    n: u64,
}

impl Write for Counted<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.n += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gguf::Gguf;
    use rand::{Rng, SeedableRng};

    fn spec(name: &str, dims: &[u64], ty: GgmlType) -> TensorSpec {
        TensorSpec { name: name.into(), dims: dims.to_vec(), ty }
    }

    /// Every value kind and tensor type written, then read back by the reader: the same
    /// metadata, the same bytes at offsets the reader accepts.
    #[test]
    fn what_is_written_reads_back() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(rand::random());
        let meta: Vec<(String, Value)> = vec![
            ("a.u8".into(), Value::U8(rng.gen())),
            ("a.i8".into(), Value::I8(rng.gen())),
            ("a.u16".into(), Value::U16(rng.gen())),
            ("a.i16".into(), Value::I16(rng.gen())),
            ("a.u32".into(), Value::U32(rng.gen())),
            ("a.i32".into(), Value::I32(rng.gen())),
            ("a.f32".into(), Value::F32(rng.gen())),
            ("a.bool".into(), Value::Bool(rng.gen())),
            ("a.str".into(), Value::Str("héllo, 世界".into())),
            ("a.u64".into(), Value::U64(rng.gen())),
            ("a.i64".into(), Value::I64(rng.gen())),
            ("a.f64".into(), Value::F64(rng.gen())),
            ("a.strs".into(), Value::Array(vec![Value::Str("x".into()), Value::Str("".into())])),
            ("a.ints".into(), Value::Array((0..rng.gen_range(0..40)).map(Value::I32).collect())),
            ("a.empty".into(), Value::Array(vec![])),
        ];
        // Odd row counts, every type, sizes that need padding to the alignment.
        let tensors = vec![
            spec("f32", &[3], GgmlType::F32),
            spec("f16", &[5, 3], GgmlType::F16),
            spec("q8", &[64, 3], GgmlType::Q8_0),
            spec("q40", &[32, 7], GgmlType::Q4_0),
            spec("q41", &[96, 1], GgmlType::Q4_1),
            spec("bf16", &[1, 1, 1], GgmlType::Bf16),
        ];
        let data: Vec<Vec<u8>> =
            tensors.iter().map(|t| (0..t.bytes().unwrap()).map(|_| rng.gen()).collect()).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.gguf");
        let mut f = std::fs::File::create(&path).unwrap();
        let mut i = 0;
        write(&mut f, &meta, &tensors, &mut |_, w| {
            i += 1;
            w.write_all(&data[i - 1])
        })
        .unwrap();
        drop(f);
        let g = Gguf::open(&path).unwrap();
        for (k, v) in &meta {
            assert_eq!(g.get(k), Some(v), "{k}");
        }
        for (t, d) in tensors.iter().zip(&data) {
            let info = g.tensor(&t.name).unwrap();
            assert_eq!(info.dims, t.dims, "{}", t.name);
            assert_eq!(info.ty, t.ty, "{}", t.name);
            assert_eq!(g.data(info), &d[..], "{}", t.name);
        }
    }

    #[test]
    fn wrong_lengths_blocks_and_arrays_are_refused() {
        let mut out = vec![];
        let short = write(&mut out, &[], &[spec("w", &[32, 2], GgmlType::Q8_0)], &mut |_, w| {
            w.write_all(&[0; 67])
        });
        assert!(
            matches!(short, Err(WriteError::Length { expected: 68, found: 67, .. })),
            "{short:?}"
        );
        let mut out = vec![];
        let blocks =
            write(&mut out, &[], &[spec("w", &[48, 2], GgmlType::Q4_1)], &mut |_, _| Ok(()));
        let e = blocks.unwrap_err().to_string();
        assert!(e.contains("`w`") && e.contains("48") && e.contains("32"), "{e}");
        let mut out = vec![];
        let mixed = vec![("m".to_string(), Value::Array(vec![Value::U32(1), Value::I32(1)]))];
        let e = write(&mut out, &mixed, &[], &mut |_, _| Ok(())).unwrap_err();
        assert!(matches!(e, WriteError::MixedArray(ref k) if k == "m"), "{e}");
    }
}
