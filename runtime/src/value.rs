//! Typed values crossing the host/device boundary: scalar arguments and buffer elements.
//!
//! A [`Scalar`] keeps its [`ScalarType`] so a launch can refuse a `u32` where the ABI says `i32`
//! instead of reinterpreting the bits. Its payload is the bit pattern zero-extended to 64 bits,
//! which is what the interpreter takes and what a kernel parameter holds in little-endian order.

use half::{bf16, f16};
use kiln_ir::ScalarType;
use std::fmt;

/// A typed scalar argument.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Scalar {
    ty: ScalarType,
    bits: u64,
}

impl Scalar {
    /// A scalar from its type and bit pattern (bits above the type's width are dropped).
    pub fn from_bits(ty: ScalarType, bits: u64) -> Scalar {
        let mask = match ty.bits() {
            64 => u64::MAX,
            w => (1u64 << w) - 1,
        };
        Scalar { ty, bits: bits & mask }
    }

    /// Its type.
    pub fn ty(&self) -> ScalarType {
        self.ty
    }

    /// Its bit pattern, zero-extended.
    pub fn bits(&self) -> u64 {
        self.bits
    }

    /// The value as a shape (a count or an index): integers that are not negative. `None` for
    /// floats and negative integers.
    pub fn as_shape(&self) -> Option<u64> {
        match self.ty {
            ScalarType::I1
            | ScalarType::U8
            | ScalarType::U16
            | ScalarType::U32
            | ScalarType::U64 => Some(self.bits),
            ScalarType::I8 | ScalarType::I16 | ScalarType::I32 | ScalarType::I64 => {
                let v = self.as_i64()?;
                u64::try_from(v).ok()
            }
            _ => None,
        }
    }

    /// Signed integers sign-extended, unsigned ones as they are (when they fit); `None` for floats.
    pub fn as_i64(&self) -> Option<i64> {
        let w = self.ty.bits();
        match self.ty.class() {
            kiln_ir::TypeClass::Signed => {
                let shift = 64 - w;
                Some(((self.bits << shift) as i64) >> shift)
            }
            kiln_ir::TypeClass::Unsigned | kiln_ir::TypeClass::Bool => {
                i64::try_from(self.bits).ok()
            }
            kiln_ir::TypeClass::Float => None,
        }
    }

    /// Integers by value (signed ones sign-extended), as a scalar rule reads them; `None` for floats.
    pub fn as_i128(&self) -> Option<i128> {
        match self.ty.class() {
            kiln_ir::TypeClass::Signed => self.as_i64().map(i128::from),
            kiln_ir::TypeClass::Unsigned | kiln_ir::TypeClass::Bool => Some(self.bits as i128),
            kiln_ir::TypeClass::Float => None,
        }
    }

    /// The little-endian bytes of the value, as many as the type occupies in memory.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        self.bits.to_le_bytes()[..self.ty.bytes() as usize].to_vec()
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.ty {
            ScalarType::F16 => write!(f, "{}", f16::from_bits(self.bits as u16)),
            ScalarType::BF16 => write!(f, "{}", bf16::from_bits(self.bits as u16)),
            ScalarType::F32 => write!(f, "{}", f32::from_bits(self.bits as u32)),
            ScalarType::F64 => write!(f, "{}", f64::from_bits(self.bits)),
            ScalarType::I1 => write!(f, "{}", self.bits != 0),
            _ => match self.as_i64() {
                Some(v) => write!(f, "{v}"),
                None => write!(f, "{}", self.bits),
            },
        }
    }
}

impl fmt::Debug for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self, self.ty)
    }
}

/// A host type that matches one buffer element type bit for bit.
pub trait Element: Copy + Send + Sync + 'static {
    /// The element type.
    const DTYPE: ScalarType;
    /// Appends the little-endian bytes.
    fn write_le(&self, out: &mut Vec<u8>);
    /// Reads one element from exactly `DTYPE.bytes()` little-endian bytes.
    fn read_le(bytes: &[u8]) -> Self;
}

macro_rules! element {
    ($($t:ty => $st:ident),* $(,)?) => {$(
        impl Element for $t {
            const DTYPE: ScalarType = ScalarType::$st;
            fn write_le(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn read_le(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().expect("element width"))
            }
        }
        impl From<$t> for Scalar {
            fn from(v: $t) -> Scalar {
                let mut b = [0u8; 8];
                let le = v.to_le_bytes();
                b[..le.len()].copy_from_slice(&le);
                Scalar { ty: ScalarType::$st, bits: u64::from_le_bytes(b) }
            }
        }
    )*};
}

element!(
    u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32, u64 => U64, i64 => I64,
    f32 => F32, f64 => F64, f16 => F16, bf16 => BF16,
);

impl From<bool> for Scalar {
    fn from(v: bool) -> Scalar {
        Scalar { ty: ScalarType::I1, bits: v as u64 }
    }
}

/// Encodes a slice as little-endian bytes.
pub(crate) fn to_bytes<T: Element>(data: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() * T::DTYPE.bytes() as usize);
    for x in data {
        x.write_le(&mut out);
    }
    out
}

/// Decodes little-endian bytes.
pub(crate) fn from_bytes<T: Element>(bytes: &[u8]) -> Vec<T> {
    bytes.chunks_exact(T::DTYPE.bytes() as usize).map(T::read_le).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_keep_type_and_bits() {
        let s = Scalar::from(-1i32);
        assert_eq!(s.ty(), ScalarType::I32);
        assert_eq!(s.bits(), 0xffff_ffff);
        assert_eq!(s.as_i64(), Some(-1));
        assert_eq!(s.as_shape(), None);
        assert_eq!(Scalar::from(7u16).as_shape(), Some(7));
        assert_eq!(Scalar::from(1.5f32).as_shape(), None);
        assert_eq!(Scalar::from(1.5f32).to_le_bytes(), 1.5f32.to_le_bytes());
        assert_eq!(format!("{:?}", Scalar::from(-3i8)), "-3i8");
        assert_eq!(Scalar::from_bits(ScalarType::U8, 0x1ff).bits(), 0xff);
    }

    #[test]
    fn elements_round_trip() {
        let v = vec![f16::from_f32(1.5), f16::from_f32(-2.0)];
        assert_eq!(from_bytes::<f16>(&to_bytes(&v)), v);
        let w = vec![u64::MAX, 3];
        assert_eq!(from_bytes::<u64>(&to_bytes(&w)), w);
    }
}
