//! The verifier (stub: being written).
use crate::{Kernel, Target};

/// One verifier error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct VerifyError(pub String);

/// All errors found.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", .0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"))]
pub struct VerifyErrors(pub Vec<VerifyError>);

/// Checks a kernel, optionally against a target.
pub fn verify(_k: &Kernel, _t: Option<&Target>) -> Result<(), VerifyErrors> {
    Ok(())
}
