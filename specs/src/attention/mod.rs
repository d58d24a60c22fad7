//! Decode attention over a quantized KV cache (issue 13): `kv_append_{q8_0,f16}` (K and V rows
//! into the cache, K rotated), `rope_f32` (Q rotated), and `attention_decode_{q8_0,f16}_d{64,128}`
//! (1..8 query rows, GQA, R1/R4/R8 rows sharing each K/V read, split-K with a fixed-order
//! log-sum-exp finish), and `attention_decode_rope_q8_0_d{64,128}_q8_1s` (the same with RoPE
//! of Q on the way in and the Q8_1 quantize of the output on the way out: one launch where a
//! decoder layer ran three), and `attention_decode_q8_0_i8_d{64,128}` (q and P quantized to 8
//! bits, both products on the integer matrix unit). `docs/attention.md` has the numbers, the
//! orders and the resources.

pub mod decode;
pub mod kv_append;
pub mod prefill;
pub mod rope;
pub mod trig;
pub mod tune;

use crate::KernelSpec;
use kiln_ir::ScalarType;

/// The element type of a KV cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheType {
    /// ggml Q8_0 blocks: `{ f16 d; i8 qs[32]; }`, 34 bytes for 32 values.
    Q8_0,
    /// IEEE half.
    F16,
}

impl CacheType {
    /// Name in kernel names.
    pub fn name(self) -> &'static str {
        match self {
            CacheType::Q8_0 => "q8_0",
            CacheType::F16 => "f16",
        }
    }
    /// The cache buffer's element type.
    pub fn elem(self) -> ScalarType {
        match self {
            CacheType::Q8_0 => ScalarType::U8,
            CacheType::F16 => ScalarType::F16,
        }
    }
    /// Bytes of one cache row of `head_dim` values.
    pub fn row_bytes(self, head_dim: u32) -> u32 {
        match self {
            CacheType::Q8_0 => head_dim / 32 * 34,
            CacheType::F16 => head_dim * 2,
        }
    }
}

/// Every family of this module, for [`crate::library`].
pub fn specs() -> Vec<KernelSpec> {
    let mut v = kv_append::specs();
    v.push(rope::spec());
    v.extend(decode::specs());
    v.extend(prefill::specs());
    v
}
