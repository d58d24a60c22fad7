//! MoE GEMV (to come in this file).
use crate::KernelSpec;

/// The MoE families.
pub fn specs() -> Vec<KernelSpec> {
    vec![]
}
