//! .npy in and out (through `npyz`), as raw little-endian bytes of a kiln scalar type.
//! bf16 has no NumPy dtype: it travels as `<u2` (its bits), and is accepted as such.

use anyhow::{anyhow, bail, Context, Result};
use kiln_ir::ScalarType;
use npyz::WriterBuilder;
use std::path::Path;

fn type_of(descr: &str) -> Option<ScalarType> {
    Some(match descr {
        "|b1" => ScalarType::I1,
        "|i1" => ScalarType::I8,
        "|u1" => ScalarType::U8,
        "<i2" => ScalarType::I16,
        "<u2" => ScalarType::U16,
        "<i4" => ScalarType::I32,
        "<u4" => ScalarType::U32,
        "<i8" => ScalarType::I64,
        "<u8" => ScalarType::U64,
        "<f2" => ScalarType::F16,
        "<f4" => ScalarType::F32,
        "<f8" => ScalarType::F64,
        _ => return None,
    })
}

macro_rules! read_as {
    ($f:expr, $t:ty) => {
        $f.into_vec::<$t>()?.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()
    };
}

/// Reads a C-ordered little-endian array: its element type and bytes.
pub fn read(path: &Path) -> Result<(ScalarType, Vec<u8>)> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let f = npyz::NpyFile::new(&bytes[..])
        .with_context(|| format!("{}: not a .npy file", path.display()))?;
    if f.order() != npyz::Order::C {
        bail!("{}: Fortran order is not supported; save it C-contiguous", path.display());
    }
    // `DType::descr` is the Python literal (`'<f4'`, quoted); a plain dtype's `TypeStr` prints bare.
    let descr = match f.dtype() {
        npyz::DType::Plain(ts) => ts.to_string(),
        other => other.descr(),
    };
    let ty =
        type_of(&descr).ok_or_else(|| anyhow!("{}: unsupported dtype {descr}", path.display()))?;
    let data = match ty {
        ScalarType::I1 | ScalarType::U8 => read_as!(f, u8),
        ScalarType::I8 => read_as!(f, i8),
        ScalarType::I16 => read_as!(f, i16),
        ScalarType::U16 | ScalarType::BF16 => read_as!(f, u16),
        ScalarType::I32 => read_as!(f, i32),
        ScalarType::U32 => read_as!(f, u32),
        ScalarType::I64 => read_as!(f, i64),
        ScalarType::U64 => read_as!(f, u64),
        ScalarType::F16 => read_as!(f, half::f16),
        ScalarType::F32 => read_as!(f, f32),
        ScalarType::F64 => read_as!(f, f64),
    };
    Ok((ty, data))
}

macro_rules! write_as {
    ($w:expr, $bytes:expr, $t:ty) => {{
        let n = std::mem::size_of::<$t>();
        let mut wr = npyz::WriteOptions::<$t>::new()
            .default_dtype()
            .shape(&[($bytes.len() / n) as u64])
            .writer(&mut $w)
            .begin_nd()?;
        wr.extend(
            $bytes.chunks(n).map(|c| <$t>::from_le_bytes(c.try_into().expect("chunk size"))),
        )?;
        wr.finish()?;
    }};
}

/// Writes a 1-D array to `path` atomically (temporary file, then rename).
pub fn write_atomic(path: &Path, ty: ScalarType, bytes: &[u8]) -> Result<()> {
    let mut out: Vec<u8> = vec![];
    match ty {
        ScalarType::I1 | ScalarType::U8 => write_as!(out, bytes, u8),
        ScalarType::I8 => write_as!(out, bytes, i8),
        ScalarType::I16 => write_as!(out, bytes, i16),
        ScalarType::U16 | ScalarType::BF16 => write_as!(out, bytes, u16),
        ScalarType::I32 => write_as!(out, bytes, i32),
        ScalarType::U32 => write_as!(out, bytes, u32),
        ScalarType::I64 => write_as!(out, bytes, i64),
        ScalarType::U64 => write_as!(out, bytes, u64),
        ScalarType::F16 => write_as!(out, bytes, half::f16),
        ScalarType::F32 => write_as!(out, bytes, f32),
        ScalarType::F64 => write_as!(out, bytes, f64),
    }
    let tmp = path.with_extension(format!("npy.tmp{}", std::process::id()));
    std::fs::write(&tmp, &out).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}
