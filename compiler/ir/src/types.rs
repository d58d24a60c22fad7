//! Value types: scalars and short vectors of them (for wide loads and stores).
//!
//! A vector is at most 16 bytes, the widest single load every target issues. A matrix fragment
//! (one lane's share of an MMA operand, see [`crate::matrix`]) is the one exception: it is a
//! vector of exactly the elements the lane maps give a lane (up to 32 bytes), tagged with its
//! shape and role so that only fragment-aware ops (element access, element-wise arithmetic,
//! `select`, `mma`) take it and a plain load or store of 32 bytes never appears.

use crate::matrix::{FragmentRole, MmaKind};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A scalar element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ScalarType {
    /// A boolean; the result of compares, the condition of `if` and `select`.
    I1,
    /// Signed 8-bit integer.
    I8,
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 16-bit integer.
    I16,
    /// Unsigned 16-bit integer.
    U16,
    /// Signed 32-bit integer.
    I32,
    /// Unsigned 32-bit integer.
    U32,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 64-bit integer.
    U64,
    /// IEEE binary16.
    F16,
    /// bfloat16 (the upper half of an f32).
    BF16,
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
}

/// The broad class of a scalar type, which decides how arithmetic treats it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeClass {
    /// `i1`.
    Bool,
    /// Signed integers.
    Signed,
    /// Unsigned integers.
    Unsigned,
    /// Floating point.
    Float,
}

impl ScalarType {
    /// Every scalar type, in declaration order.
    pub const ALL: [ScalarType; 13] = [
        ScalarType::I1,
        ScalarType::I8,
        ScalarType::U8,
        ScalarType::I16,
        ScalarType::U16,
        ScalarType::I32,
        ScalarType::U32,
        ScalarType::I64,
        ScalarType::U64,
        ScalarType::F16,
        ScalarType::BF16,
        ScalarType::F32,
        ScalarType::F64,
    ];

    /// Size in bytes in memory (`i1` is stored as one byte).
    pub fn bytes(self) -> u32 {
        match self {
            ScalarType::I1 | ScalarType::I8 | ScalarType::U8 => 1,
            ScalarType::I16 | ScalarType::U16 | ScalarType::F16 | ScalarType::BF16 => 2,
            ScalarType::I32 | ScalarType::U32 | ScalarType::F32 => 4,
            ScalarType::I64 | ScalarType::U64 | ScalarType::F64 => 8,
        }
    }

    /// Width in bits (`i1` is 1).
    pub fn bits(self) -> u32 {
        match self {
            ScalarType::I1 => 1,
            s => s.bytes() * 8,
        }
    }

    /// The class of this type.
    pub fn class(self) -> TypeClass {
        match self {
            ScalarType::I1 => TypeClass::Bool,
            ScalarType::I8 | ScalarType::I16 | ScalarType::I32 | ScalarType::I64 => {
                TypeClass::Signed
            }
            ScalarType::U8 | ScalarType::U16 | ScalarType::U32 | ScalarType::U64 => {
                TypeClass::Unsigned
            }
            ScalarType::F16 | ScalarType::BF16 | ScalarType::F32 | ScalarType::F64 => {
                TypeClass::Float
            }
        }
    }

    /// True for the floating-point types.
    pub fn is_float(self) -> bool {
        self.class() == TypeClass::Float
    }

    /// True for signed and unsigned integers (not `i1`).
    pub fn is_int(self) -> bool {
        matches!(self.class(), TypeClass::Signed | TypeClass::Unsigned)
    }

    /// True for signed integers.
    pub fn is_signed(self) -> bool {
        self.class() == TypeClass::Signed
    }

    /// The name used by the text form.
    pub fn name(self) -> &'static str {
        match self {
            ScalarType::I1 => "i1",
            ScalarType::I8 => "i8",
            ScalarType::U8 => "u8",
            ScalarType::I16 => "i16",
            ScalarType::U16 => "u16",
            ScalarType::I32 => "i32",
            ScalarType::U32 => "u32",
            ScalarType::I64 => "i64",
            ScalarType::U64 => "u64",
            ScalarType::F16 => "f16",
            ScalarType::BF16 => "bf16",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
        }
    }

    /// Parses a name of the text form.
    pub fn from_name(name: &str) -> Option<ScalarType> {
        ScalarType::ALL.into_iter().find(|s| s.name() == name)
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a fragment type holds: one lane's elements of operand `role` of a `kind` MMA, element
/// `e` being element `e` of [`crate::matrix`]'s lane maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Fragment {
    /// The MMA shape and multiplicand types.
    pub kind: MmaKind,
    /// Which operand (C also types the result D).
    pub role: FragmentRole,
}

/// A value type: a scalar, a vector of 2..16 scalars of at most 16 bytes, or a matrix fragment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Type {
    /// The element type.
    pub scalar: ScalarType,
    /// Number of elements; 1 for a scalar.
    pub lanes: u8,
    /// Set for a matrix fragment (`lanes` is then the elements a lane holds). Skipped when
    /// absent, so every kernel without fragments keeps its serde text and content hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fragment: Option<Fragment>,
}

impl Type {
    /// A scalar type.
    pub const fn scalar(scalar: ScalarType) -> Type {
        Type { scalar, lanes: 1, fragment: None }
    }
    /// A vector type.
    pub const fn vector(scalar: ScalarType, lanes: u8) -> Type {
        Type { scalar, lanes, fragment: None }
    }
    /// The fragment type of operand `role` of `kind`: its element type, as many elements as a
    /// lane holds.
    pub fn fragment(kind: MmaKind, role: FragmentRole) -> Type {
        let lanes = kind.shape().elements_per_lane(role) as u8;
        Type { scalar: kind.elem(role), lanes, fragment: Some(Fragment { kind, role }) }
    }
    /// `i1`.
    pub const BOOL: Type = Type::scalar(ScalarType::I1);
    /// `i32`.
    pub const I32: Type = Type::scalar(ScalarType::I32);
    /// `u32`.
    pub const U32: Type = Type::scalar(ScalarType::U32);
    /// `i64`.
    pub const I64: Type = Type::scalar(ScalarType::I64);
    /// `u64`.
    pub const U64: Type = Type::scalar(ScalarType::U64);
    /// `f16`.
    pub const F16: Type = Type::scalar(ScalarType::F16);
    /// `bf16`.
    pub const BF16: Type = Type::scalar(ScalarType::BF16);
    /// `f32`.
    pub const F32: Type = Type::scalar(ScalarType::F32);
    /// `f64`.
    pub const F64: Type = Type::scalar(ScalarType::F64);
    /// `u8`.
    pub const U8: Type = Type::scalar(ScalarType::U8);
    /// `i8`.
    pub const I8: Type = Type::scalar(ScalarType::I8);

    /// True when this is a vector.
    pub fn is_vector(self) -> bool {
        self.lanes > 1
    }
    /// Size in bytes in memory.
    pub fn bytes(self) -> u32 {
        self.scalar.bytes() * self.lanes as u32
    }
    /// True for a matrix fragment.
    pub fn is_fragment(self) -> bool {
        self.fragment.is_some()
    }
    /// True when the shape is legal: 1 lane, or 2, 3, 4, 8 or 16 lanes within 16 bytes; a
    /// fragment exactly as [`Type::fragment`] makes it.
    pub fn is_legal(self) -> bool {
        if let Some(f) = self.fragment {
            return self == Type::fragment(f.kind, f.role);
        }
        match self.lanes {
            1 => true,
            2 | 3 | 4 | 8 | 16 => self.scalar != ScalarType::I1 && self.bytes() <= 16,
            _ => false,
        }
    }
    /// The scalar type as a `Type` (of a fragment too).
    pub fn element(self) -> Type {
        Type::scalar(self.scalar)
    }
}

impl From<ScalarType> for Type {
    fn from(s: ScalarType) -> Type {
        Type::scalar(s)
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(frag) = self.fragment {
            write!(f, "{}x{} frag {} of {}", self.scalar, self.lanes, frag.role, frag.kind)
        } else if self.lanes == 1 {
            write!(f, "{}", self.scalar)
        } else {
            write!(f, "{}x{}", self.scalar, self.lanes)
        }
    }
}

impl std::str::FromStr for Type {
    type Err = String;
    fn from_str(s: &str) -> Result<Type, String> {
        let (name, lanes) = match s.split_once('x') {
            Some((n, l)) => (n, l.parse::<u8>().map_err(|_| format!("bad lane count in `{s}`"))?),
            None => (s, 1),
        };
        let scalar = ScalarType::from_name(name).ok_or_else(|| format!("unknown type `{s}`"))?;
        Ok(Type { scalar, lanes, fragment: None })
    }
}
