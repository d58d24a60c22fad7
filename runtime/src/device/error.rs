//! Errors of the device layer: one enum for every device, the driver's own errors chained in.

#[cfg(feature = "hip")]
use super::HipError;
use super::{CudaError, DeviceKind};

/// Errors of the device layer.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// No such device here.
    #[error("no {kind} device: {reason}")]
    Unavailable {
        /// The kind asked for.
        kind: DeviceKind,
        /// Why (no driver, no GPU, feature not built...).
        reason: String,
    },
    /// A device kind name that is not `cpu`, `cuda` or `hip`.
    #[error("unknown device `{0}`; devices: cpu, cuda, hip")]
    UnknownKind(String),
    /// An L2 window no device could take ([`super::L2Window`]).
    #[error("bad L2 window {window}: {why}")]
    BadL2Window {
        /// The window, as asked for.
        window: String,
        /// What is wrong with it.
        why: String,
    },
    /// The CUDA driver failed.
    #[error(transparent)]
    Cuda(#[from] CudaError),
    /// HIP failed.
    #[cfg(feature = "hip")]
    #[error(transparent)]
    Hip(#[from] HipError),
    /// The interpreter stopped (sanitizer finding, division by zero, ...).
    #[error("{kernel} on the cpu device: {error}")]
    Interp {
        /// `kernel/variant`.
        kernel: String,
        /// The interpreter's error (in the message, not a separate cause, so an error chain
        /// does not print it twice).
        error: Box<kiln_ir::interp::InterpError>,
    },
    /// A buffer from another device.
    #[error("buffer belongs to {found}, not to this device ({expected})")]
    ForeignBuffer {
        /// This device.
        expected: String,
        /// The buffer's device.
        found: String,
    },
    /// An allocation whose size overflows or is beyond any device's memory, refused before
    /// the device is asked.
    #[error("cannot allocate {len} elements of {dtype}: {bytes} bytes is more than {max} bytes")]
    TooLarge {
        /// Elements asked for.
        len: usize,
        /// Their type.
        dtype: kiln_ir::ScalarType,
        /// Their size in bytes (exact: no overflow).
        bytes: u128,
        /// The most any device allocates.
        max: u64,
    },
    /// A host read or write with the wrong element type or size.
    #[error("{what}: expected {expected}, found {found}")]
    Mismatch {
        /// What was being done.
        what: &'static str,
        /// Expected.
        expected: String,
        /// Found.
        found: String,
    },
    /// The cpu device cannot give a buffer a fake device address: over 16 million buffers are
    /// alive, or one is larger than the 1 TiB between two addresses.
    #[error("cpu device: {0}")]
    CpuAddressSpace(String),
    /// A replay's new variant reads, before its grid-dependency wait, a buffer that a node
    /// before it in the graph writes, while the node was captured to overlap those nodes: the
    /// graph must be captured again.
    #[error(
        "graph node {node} ({kernel}) was captured to overlap the nodes before it, but its \
         variant now reads a buffer one of them writes before waiting for them; capture the \
         graph again"
    )]
    OverlapChanged {
        /// The node, in capture order.
        node: usize,
        /// `kernel/variant` now.
        kernel: String,
    },
    /// The device has no arch to emulate (cpu device before a package chose one).
    #[error("the cpu device has no arch: set CpuOptions::arch, or load it through a Runtime")]
    NoArch,
}
