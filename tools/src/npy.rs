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

/// Where the data starts and the header's `shape` (when it can be read as a tuple of integers),
/// read before `npyz` sees the file: npyz multiplies the shape unchecked.
fn header_shape(bytes: &[u8]) -> Option<(usize, Vec<u64>)> {
    let rest = bytes.strip_prefix(b"\x93NUMPY")?;
    let (len, start) = match rest.first()? {
        1 => (u16::from_le_bytes(rest.get(2..4)?.try_into().ok()?) as usize, 10usize),
        _ => (u32::from_le_bytes(rest.get(2..6)?.try_into().ok()?) as usize, 12),
    };
    let header = std::str::from_utf8(bytes.get(start..start.checked_add(len)?)?).ok()?;
    let at = header.find("'shape'").or_else(|| header.find("\"shape\""))?;
    let tuple = &header[at..];
    let (open, close) = (tuple.find('(')?, tuple.find(')')?);
    let dims = tuple.get(open + 1..close)?;
    let shape = dims
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| d.parse::<u64>().ok())
        .collect::<Option<Vec<u64>>>()?;
    Some((start + len, shape))
}

/// Reads a C-ordered little-endian array: its element type and bytes. Every refusal names the
/// file: not a .npy file, a dtype kiln has no type for, Fortran order, a shape whose element
/// count overflows, or less data than the shape needs.
pub fn read(path: &Path) -> Result<(ScalarType, Vec<u8>)> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    if let Some((data_at, shape)) = header_shape(&bytes) {
        // Every partial product of the dimensions must fit (npyz computes strides from them
        // even when another dimension is 0).
        let nonzero = shape.iter().filter(|&&d| d != 0).try_fold(1u64, |n, &d| n.checked_mul(d));
        if nonzero.is_none() {
            bail!("{}: the shape {shape:?} has more elements than 2^64", path.display());
        }
        let count: u64 = if shape.contains(&0) { 0 } else { nonzero.unwrap_or(0) };
        // The widest element is 8 bytes: a shape that needs more data than the file has is
        // refused before anything is allocated for it.
        let data = bytes.len().saturating_sub(data_at) as u64;
        if count > data {
            bail!(
                "{}: the shape {shape:?} needs {count} elements, the file has {data} bytes of data",
                path.display()
            );
        }
    }
    let f = npyz::NpyFile::new(&bytes[..])
        .with_context(|| format!("{}: not a .npy file", path.display()))?;
    let shape = f.shape().to_vec();
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
    let data = (|| -> std::io::Result<Vec<u8>> {
        Ok(match ty {
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
        })
    })()
    .with_context(|| {
        format!("{}: the data does not match the header (shape {shape:?}, {descr})", path.display())
    })?;
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
    let written =
        std::fs::write(&tmp, &out).with_context(|| format!("writing {}", tmp.display())).and_then(
            |()| std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display())),
        );
    if written.is_err() {
        // A full disk or a lost rename leaves no temporary file behind.
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_type_and_refuses_short_data_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let bytes: Vec<u8> = (0..64u8).map(|b| b.wrapping_mul(37)).collect();
        for ty in [
            ScalarType::U8,
            ScalarType::I8,
            ScalarType::I16,
            ScalarType::U16,
            ScalarType::BF16,
            ScalarType::F16,
            ScalarType::I32,
            ScalarType::U32,
            ScalarType::F32,
            ScalarType::I64,
            ScalarType::U64,
            ScalarType::F64,
        ] {
            let p = dir.path().join(format!("{ty}.npy"));
            write_atomic(&p, ty, &bytes).unwrap();
            let (back, data) = read(&p).unwrap();
            // bf16 travels as its bits: it reads back as u16.
            let want = if ty == ScalarType::BF16 { ScalarType::U16 } else { ty };
            assert_eq!((back, &data), (want, &bytes), "{ty}");
            let whole = std::fs::read(&p).unwrap();
            std::fs::write(&p, &whole[..whole.len() - 1]).unwrap();
            let e = format!("{:#}", read(&p).unwrap_err());
            assert!(e.contains(&p.display().to_string()), "{e}");
        }
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    /// Shapes whose dimensions multiply past 2^64, even with a zero dimension (npyz's strides
    /// would overflow), are refused by name (a fuzz case: `(0, 3, 9223372036854775807)`).
    #[test]
    fn a_shape_that_overflows_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.npy");
        for dims in
            ["(0, 3, 9223372036854775807)", "(4294967296, 4294967296)", "(18446744073709551615, 2)"]
        {
            let mut header =
                format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {dims}, }}");
            let unpadded = 10 + header.len() + 1;
            header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
            header.push('\n');
            let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
            bytes.extend((header.len() as u16).to_le_bytes());
            bytes.extend(header.as_bytes());
            bytes.extend([0u8; 16]);
            std::fs::write(&p, &bytes).unwrap();
            let e = format!("{:#}", read(&p).unwrap_err());
            assert!(e.contains(&p.display().to_string()) && e.contains("2^64"), "{dims}: {e}");
        }
    }

    #[test]
    fn a_write_that_fails_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        // The target is a directory: the rename fails after the temporary file was written.
        let target = dir.path().join("out.npy");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("keep"), b"x").unwrap();
        assert!(write_atomic(&target, ScalarType::F32, &[0; 8]).is_err());
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["out.npy"]);
    }
}
