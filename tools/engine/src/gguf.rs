//! GGUF files (ggml's model format, versions 2 and 3), memory-mapped: the metadata is parsed
//! into owned values, the tensors stay in the map and are handed out as byte slices.
//!
//! A small reader rather than a crate: the format is a header of length-prefixed fields, and the
//! engine needs each refusal to say where in the file it happened (the byte offset and the field
//! being read), which the crates we looked at (`ggus`, candle's reader) do not report. Every
//! length read from the file is checked against what is left of it before anything is allocated,
//! so a corrupt count fails as a truncation at its offset instead of an allocation of terabytes.
//!
//! Layout: `"GGUF"`, `u32` version, `u64` tensor count, `u64` metadata count, the metadata
//! (`string key, u32 type, value`), the tensor infos (`string name, u32 n_dims, u64 dims[n_dims]`
//! innermost first, `u32 ggml type, u64 offset`), padding to `general.alignment` (default 32),
//! then the tensor data, each tensor at its offset from there (a multiple of the alignment).

use memmap2::Mmap;
use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Why a GGUF file was refused. Offsets are bytes from the start of the file.
#[derive(Debug, thiserror::Error)]
pub enum GgufError {
    /// The file cannot be opened or mapped.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Not a GGUF file.
    #[error("expected the magic \"GGUF\" at offset 0, found {found:?}")]
    BadMagic {
        /// The first bytes.
        found: Vec<u8>,
    },
    /// A version this reader does not know.
    #[error("GGUF version {0} is not supported (expected 2 or 3)")]
    Version(u32),
    /// The file ends inside a field.
    #[error(
        "truncated at offset {offset} reading {what}: needs {need} bytes, the file has {left} left"
    )]
    Truncated {
        /// What was being read.
        what: String,
        /// Where.
        offset: u64,
        /// Bytes it needs.
        need: u64,
        /// Bytes left in the file.
        left: u64,
    },
    /// A metadata value type id that GGUF does not define.
    #[error("offset {offset}: {what} has value type {ty}, expected 0..=12")]
    ValueType {
        /// The key (or array) being read.
        what: String,
        /// Where.
        offset: u64,
        /// The type id found.
        ty: u32,
    },
    /// A string that is not UTF-8.
    #[error("offset {offset}: {what} is not UTF-8")]
    Utf8 {
        /// What was being read.
        what: String,
        /// Where.
        offset: u64,
    },
    /// A key or tensor name given twice.
    #[error("offset {offset}: duplicate {what} `{name}`")]
    Duplicate {
        /// `metadata key` or `tensor`.
        what: &'static str,
        /// The name.
        name: String,
        /// Where the second one starts.
        offset: u64,
    },
    /// A tensor with more dimensions than ggml allows, or an empty one.
    #[error("offset {offset}: tensor `{name}` has {n_dims} dimensions, expected 1..=4")]
    Dims {
        /// The tensor.
        name: String,
        /// Where.
        offset: u64,
        /// Found.
        n_dims: u32,
    },
    /// A tensor type this reader cannot size (or that the engine does not run).
    #[error("tensor `{name}` has ggml type {ty} ({}), expected one of {}", type_name(*ty), SUPPORTED)]
    TensorType {
        /// The tensor.
        name: String,
        /// The ggml type id.
        ty: u32,
    },
    /// A tensor whose rows are not whole blocks.
    #[error(
        "tensor `{name}` ({ty}): a row of {row} values is not a multiple of the block of {block}"
    )]
    PartialBlock {
        /// The tensor.
        name: String,
        /// Its type.
        ty: GgmlType,
        /// Its innermost dimension.
        row: u64,
        /// The type's block.
        block: u64,
    },
    /// Tensor data outside the file or not aligned.
    #[error("tensor `{name}`: data at {start}..{end} (file offsets) {why}")]
    TensorData {
        /// The tensor.
        name: String,
        /// First byte.
        start: u64,
        /// One past the last.
        end: u64,
        /// What is wrong with it.
        why: String,
    },
    /// Arrays nested deeper than GGUF files use.
    #[error("offset {offset}: `{key}` nests arrays more than 4 deep")]
    Nesting {
        /// The key.
        key: String,
        /// Where.
        offset: u64,
    },
    /// `general.alignment` is not a power of two.
    #[error("general.alignment is {0}, expected a power of two")]
    Alignment(u64),
}

/// A metadata value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `u8`.
    U8(u8),
    /// `i8`.
    I8(i8),
    /// `u16`.
    U16(u16),
    /// `i16`.
    I16(i16),
    /// `u32`.
    U32(u32),
    /// `i32`.
    I32(i32),
    /// `f32`.
    F32(f32),
    /// `bool`.
    Bool(bool),
    /// A UTF-8 string.
    Str(String),
    /// An array (of one element type).
    Array(Vec<Value>),
    /// `u64`.
    U64(u64),
    /// `i64`.
    I64(i64),
    /// `f64`.
    F64(f64),
}

impl Value {
    /// The value as an unsigned integer, when it is an integer `>= 0`.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::U8(v) => Some(v.into()),
            Value::U16(v) => Some(v.into()),
            Value::U32(v) => Some(v.into()),
            Value::U64(v) => Some(v),
            Value::I8(v) => u64::try_from(v).ok(),
            Value::I16(v) => u64::try_from(v).ok(),
            Value::I32(v) => u64::try_from(v).ok(),
            Value::I64(v) => u64::try_from(v).ok(),
            Value::F32(_) | Value::F64(_) | Value::Bool(_) | Value::Str(_) | Value::Array(_) => {
                None
            }
        }
    }
    /// The value as a float, when it is a number.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::F32(v) => Some(v.into()),
            Value::F64(v) => Some(v),
            Value::U8(_)
            | Value::U16(_)
            | Value::U32(_)
            | Value::U64(_)
            | Value::I8(_)
            | Value::I16(_)
            | Value::I32(_)
            | Value::I64(_) => self.as_u64().map(|v| v as f64),
            Value::Bool(_) | Value::Str(_) | Value::Array(_) => None,
        }
    }
    /// The string, when it is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            Value::U8(_)
            | Value::I8(_)
            | Value::U16(_)
            | Value::I16(_)
            | Value::U32(_)
            | Value::I32(_)
            | Value::F32(_)
            | Value::Bool(_)
            | Value::Array(_)
            | Value::U64(_)
            | Value::I64(_)
            | Value::F64(_) => None,
        }
    }
    /// The name of its type, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::U8(_) => "u8",
            Value::I8(_) => "i8",
            Value::U16(_) => "u16",
            Value::I16(_) => "i16",
            Value::U32(_) => "u32",
            Value::I32(_) => "i32",
            Value::F32(_) => "f32",
            Value::Bool(_) => "bool",
            Value::Str(_) => "string",
            Value::Array(_) => "array",
            Value::U64(_) => "u64",
            Value::I64(_) => "i64",
            Value::F64(_) => "f64",
        }
    }
}

/// The ggml tensor types this reader sizes (the ones kiln's kernels read).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GgmlType {
    /// f32.
    F32,
    /// f16.
    F16,
    /// Q4_0 blocks of 32 (18 bytes).
    Q4_0,
    /// Q4_1 blocks of 32 (20 bytes).
    Q4_1,
    /// Q8_0 blocks of 32 (34 bytes).
    Q8_0,
    /// bf16.
    Bf16,
}

const SUPPORTED: &str = "F32 (0), F16 (1), Q4_0 (2), Q4_1 (3), Q8_0 (8), BF16 (30)";

/// ggml's name of a type id (for messages about types this reader does not take).
fn type_name(id: u32) -> &'static str {
    const NAMES: [&str; 40] = [
        "F32",
        "F16",
        "Q4_0",
        "Q4_1",
        "Q4_2 (removed)",
        "Q4_3 (removed)",
        "Q5_0",
        "Q5_1",
        "Q8_0",
        "Q8_1",
        "Q2_K",
        "Q3_K",
        "Q4_K",
        "Q5_K",
        "Q6_K",
        "Q8_K",
        "IQ2_XXS",
        "IQ2_XS",
        "IQ3_XXS",
        "IQ1_S",
        "IQ4_NL",
        "IQ3_S",
        "IQ2_S",
        "IQ4_XS",
        "I8",
        "I16",
        "I32",
        "I64",
        "F64",
        "IQ1_M",
        "BF16",
        "Q4_0_4_4 (removed)",
        "Q4_0_4_8 (removed)",
        "Q4_0_8_8 (removed)",
        "TQ1_0",
        "TQ2_0",
        "IQ4_NL_4_4 (removed)",
        "IQ4_NL_4_8 (removed)",
        "IQ4_NL_8_8 (removed)",
        "MXFP4",
    ];
    NAMES.get(id as usize).copied().unwrap_or("unknown")
}

impl GgmlType {
    /// The type of a ggml type id, if this reader takes it.
    pub fn from_id(id: u32) -> Option<GgmlType> {
        Some(match id {
            0 => GgmlType::F32,
            1 => GgmlType::F16,
            2 => GgmlType::Q4_0,
            3 => GgmlType::Q4_1,
            8 => GgmlType::Q8_0,
            30 => GgmlType::Bf16,
            _ => return None,
        })
    }
    /// The ggml type id.
    pub fn id(self) -> u32 {
        match self {
            GgmlType::F32 => 0,
            GgmlType::F16 => 1,
            GgmlType::Q4_0 => 2,
            GgmlType::Q4_1 => 3,
            GgmlType::Q8_0 => 8,
            GgmlType::Bf16 => 30,
        }
    }
    /// Values a block.
    pub fn block(self) -> u64 {
        match self {
            GgmlType::F32 | GgmlType::F16 | GgmlType::Bf16 => 1,
            GgmlType::Q4_0 | GgmlType::Q4_1 | GgmlType::Q8_0 => 32,
        }
    }
    /// Bytes a block.
    pub fn block_bytes(self) -> u64 {
        match self {
            GgmlType::F32 => 4,
            GgmlType::F16 | GgmlType::Bf16 => 2,
            GgmlType::Q4_0 => 18,
            GgmlType::Q4_1 => 20,
            GgmlType::Q8_0 => 34,
        }
    }
}

impl fmt::Display for GgmlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(type_name(self.id()))
    }
}

/// One tensor's description.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorInfo {
    /// Name (`blk.0.attn_q.weight`, ...).
    pub name: String,
    /// Dimensions, innermost first (ggml's `ne`): a matrix of `n` rows of `k` is `[k, n]`.
    pub dims: Vec<u64>,
    /// Element type.
    pub ty: GgmlType,
    /// First byte in the file.
    pub start: u64,
    /// Size in bytes.
    pub bytes: u64,
}

impl TensorInfo {
    /// Number of values.
    pub fn values(&self) -> u64 {
        self.dims.iter().product()
    }
}

/// An open GGUF file: parsed metadata and tensor infos over a memory map.
pub struct Gguf {
    path: PathBuf,
    map: Mmap,
    /// The version (2 or 3).
    pub version: u32,
    /// Metadata by key.
    pub metadata: BTreeMap<String, Value>,
    /// Tensors in file order.
    pub tensors: Vec<TensorInfo>,
}

impl fmt::Debug for Gguf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Gguf({}, v{}, {} keys, {} tensors)",
            self.path.display(),
            self.version,
            self.metadata.len(),
            self.tensors.len()
        )
    }
}

impl Gguf {
    /// Opens and maps `path`, and checks the header and every tensor's place in the file.
    pub fn open(path: impl AsRef<Path>) -> Result<Gguf, GgufError> {
        let path = path.as_ref().to_path_buf();
        let io = |source| GgufError::Io { path: path.clone(), source };
        let file = File::open(&path).map_err(io)?;
        // SAFETY: the map is read-only and private to this process; a file changed underneath
        // it by another process is the usual caveat of memory-mapped model files (llama.cpp
        // maps them the same way).
        let map = unsafe { Mmap::map(&file) }.map_err(io)?;
        let (version, metadata, tensors) = parse(&map)?;
        Ok(Gguf { path, map, version, metadata, tensors })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A metadata value.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.metadata.get(key)
    }

    /// A tensor's info by name.
    pub fn tensor(&self, name: &str) -> Option<&TensorInfo> {
        self.tensors.iter().find(|t| t.name == name)
    }

    /// A tensor's bytes (in the map; checked to lie in the file when opened).
    pub fn data(&self, t: &TensorInfo) -> &[u8] {
        &self.map[t.start as usize..(t.start + t.bytes) as usize]
    }
}

/// Parses a whole GGUF image: `(version, metadata, tensors)`.
pub fn parse(bytes: &[u8]) -> Result<(u32, BTreeMap<String, Value>, Vec<TensorInfo>), GgufError> {
    let mut r = Reader { bytes, pos: 0 };
    let magic = r.take(4, "the magic")?;
    if magic != b"GGUF" {
        return Err(GgufError::BadMagic { found: magic.to_vec() });
    }
    let version = r.u32("the version")?;
    if !(2..=3).contains(&version) {
        return Err(GgufError::Version(version));
    }
    let n_tensors = r.u64("the tensor count")?;
    let n_kv = r.u64("the metadata count")?;
    let mut metadata = BTreeMap::new();
    for i in 0..n_kv {
        let at = r.pos as u64;
        let key = r.string(&format!("metadata key {i}"))?;
        let ty = r.u32(&format!("the type of `{key}`"))?;
        let v = r.value(ty, &key, 0)?;
        if metadata.insert(key.clone(), v).is_some() {
            return Err(GgufError::Duplicate { what: "metadata key", name: key, offset: at });
        }
    }
    let mut infos = vec![];
    for i in 0..n_tensors {
        let at = r.pos as u64;
        let name = r.string(&format!("tensor name {i}"))?;
        let n_dims = r.u32(&format!("the dimension count of `{name}`"))?;
        if !(1..=4).contains(&n_dims) {
            return Err(GgufError::Dims { name, offset: at, n_dims });
        }
        let mut dims = vec![];
        for d in 0..n_dims {
            dims.push(r.u64(&format!("dimension {d} of `{name}`"))?);
        }
        let ty = r.u32(&format!("the type of `{name}`"))?;
        let offset = r.u64(&format!("the data offset of `{name}`"))?;
        if infos.iter().any(|(n, ..): &(String, _, _, _)| *n == name) {
            return Err(GgufError::Duplicate { what: "tensor", name, offset: at });
        }
        infos.push((name, dims, ty, offset));
    }
    let align = match metadata.get("general.alignment") {
        Some(v) => v.as_u64().unwrap_or(0),
        None => 32,
    };
    if align == 0 || !align.is_power_of_two() {
        return Err(GgufError::Alignment(align));
    }
    let data_start = (r.pos as u64).div_ceil(align) * align;
    let len = bytes.len() as u64;
    let mut tensors = vec![];
    for (name, dims, ty, offset) in infos {
        let Some(t) = GgmlType::from_id(ty) else {
            return Err(GgufError::TensorType { name, ty });
        };
        if dims[0] % t.block() != 0 {
            return Err(GgufError::PartialBlock { name, ty: t, row: dims[0], block: t.block() });
        }
        let values = dims.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
        let size = values.and_then(|v| (v / t.block()).checked_mul(t.block_bytes()));
        let start = data_start.checked_add(offset);
        let (Some(size), Some(start)) = (size, start) else {
            return Err(GgufError::TensorData {
                name,
                start: data_start,
                end: u64::MAX,
                why: format!("overflows (dims {dims:?}, offset {offset})"),
            });
        };
        let end = start.saturating_add(size);
        if offset % align != 0 {
            return Err(GgufError::TensorData {
                name,
                start,
                end,
                why: format!("is not aligned to {align} bytes from the data section"),
            });
        }
        if end > len {
            return Err(GgufError::TensorData {
                name,
                start,
                end,
                why: format!("runs past the end of the file ({len} bytes)"),
            });
        }
        tensors.push(TensorInfo { name, dims, ty: t, start, bytes: size });
    }
    Ok((version, metadata, tensors))
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: u64, what: &str) -> Result<&'a [u8], GgufError> {
        let left = (self.bytes.len() - self.pos) as u64;
        if n > left {
            return Err(GgufError::Truncated {
                what: what.to_string(),
                offset: self.pos as u64,
                need: n,
                left,
            });
        }
        let s = &self.bytes[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(s)
    }
    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], GgufError> {
        Ok(self.take(N as u64, what)?.try_into().expect("took N bytes"))
    }
    fn u32(&mut self, what: &str) -> Result<u32, GgufError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }
    fn u64(&mut self, what: &str) -> Result<u64, GgufError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }
    fn string(&mut self, what: &str) -> Result<String, GgufError> {
        let n = self.u64(&format!("the length of {what}"))?;
        let at = self.pos as u64;
        let b = self.take(n, what)?;
        String::from_utf8(b.to_vec())
            .map_err(|_| GgufError::Utf8 { what: what.to_string(), offset: at })
    }
    /// A value of type `ty` for `key`; `depth` counts enclosing arrays (GGUF nests them).
    fn value(&mut self, ty: u32, key: &str, depth: u32) -> Result<Value, GgufError> {
        let w = || format!("the value of `{key}`");
        Ok(match ty {
            0 => Value::U8(self.array::<1>(&w())?[0]),
            1 => Value::I8(self.array::<1>(&w())?[0] as i8),
            2 => Value::U16(u16::from_le_bytes(self.array(&w())?)),
            3 => Value::I16(i16::from_le_bytes(self.array(&w())?)),
            4 => Value::U32(self.u32(&w())?),
            5 => Value::I32(i32::from_le_bytes(self.array(&w())?)),
            6 => Value::F32(f32::from_le_bytes(self.array(&w())?)),
            7 => Value::Bool(self.array::<1>(&w())?[0] != 0),
            8 => Value::Str(self.string(&w())?),
            9 if depth >= 4 => {
                return Err(GgufError::Nesting { key: key.to_string(), offset: self.pos as u64 })
            }
            9 => {
                let at = self.pos as u64;
                let ety = self.u32(&format!("the element type of `{key}`"))?;
                let n = self.u64(&format!("the length of `{key}`"))?;
                // Every element takes at least one byte: a count beyond the file is a
                // truncation, found before allocating for it.
                let left = (self.bytes.len() - self.pos) as u64;
                if n > left {
                    return Err(GgufError::Truncated {
                        what: format!("the {n} elements of `{key}`"),
                        offset: self.pos as u64,
                        need: n,
                        left,
                    });
                }
                if ety > 12 {
                    return Err(GgufError::ValueType {
                        what: format!("an element of `{key}`"),
                        offset: at,
                        ty: ety,
                    });
                }
                let mut v = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    v.push(self.value(ety, key, depth + 1)?);
                }
                Value::Array(v)
            }
            10 => Value::U64(self.u64(&w())?),
            11 => Value::I64(i64::from_le_bytes(self.array(&w())?)),
            12 => Value::F64(f64::from_le_bytes(self.array(&w())?)),
            _ => {
                return Err(GgufError::ValueType {
                    what: format!("`{key}`"),
                    offset: self.pos as u64 - 4,
                    ty,
                })
            }
        })
    }
}

pub mod write;

#[cfg(test)]
mod tests;
