//! kiln-runtime: opens AOT packages, loads them on a device, routes and launches kernels, and
//! runs decode graphs eagerly or as captured graphs. It depends on kiln-ir only (no LLVM), and
//! loads the GPU drivers at run time, so one small binary runs on machines with or without them.
//!
//! ```no_run
//! use kiln_runtime::{Args, CpuOptions, Device, Package, Runtime};
//! # fn main() -> Result<(), kiln_runtime::RuntimeError> {
//! let package = Package::open("dist")?;
//! let device = Device::cuda(0).unwrap_or_else(|_| Device::cpu(CpuOptions::default()));
//! let rt = Runtime::load(&device, &package)?;
//! let x = device.upload(&[1.0f32, 4.0, 2.0])?;
//! let out = device.alloc(kiln_ir::ScalarType::U32, 1)?;
//! let launched = rt.launch("argmax_rows", &Args::new().buffer("x", &x).buffer("out", &out).scalar("n", 3u32))?;
//! println!("ran {} on grid {:?}: {:?}", launched.variant, launched.grid, out.read::<u32>()?);
//! # Ok(()) }
//! ```
//!
//! Layers, each with its error enum, chained into [`RuntimeError`]:
//! - [`package`]: open and check a package ([`LoadError`]);
//! - [`device`]: cpu / cuda / hip devices and buffers ([`DeviceError`]);
//! - [`route`]: which variant a call runs ([`RouteError`]);
//! - [`launch`]: the [`Runtime`], argument checks ([`LaunchError`]);
//! - [`graph`]: decode graphs, capture and replay ([`GraphError`]);
#![deny(missing_docs)]
// Errors here are flat enums whose variants carry the kernel, variant, arch, and what was
// expected and found, as plain strings; they travel only on cold paths, where a few hundred
// bytes in a `Result` cost nothing, and boxing every variant would cost readability.
#![allow(clippy::result_large_err)]

pub mod device;
pub mod graph;
pub mod launch;
pub mod package;
pub mod route;
#[cfg(test)]
mod testing;
pub mod value;

pub use device::{
    Buffer, CpuOptions, Device, DeviceError, DeviceKind, DeviceLimits, Event, L2Access, L2Applied,
    L2Window, ReadBack, Ticket, HIP_UNTESTED_NOTICE,
};
pub use graph::{CapturedGraph, DecodeGraph, GraphError, Hazard, HazardKind, NodeArgs};
pub use launch::{
    ArgValue, Args, Catalog, KernelCatalog, LaunchError, Launched, PreparedCall, Runtime,
};
pub use package::{LoadError, Package, PackageObject};
pub use route::{Overrides, RouteDecision, RouteError, Router};
pub use value::{Element, Scalar};

/// Any error of the runtime.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// Opening a package or loading an object.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The device.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// Routing.
    #[error(transparent)]
    Route(#[from] RouteError),
    /// Argument checks.
    #[error(transparent)]
    Launch(#[from] LaunchError),
    /// The decode graph.
    #[error(transparent)]
    Graph(#[from] GraphError),
}

/// Everything a serving engine shares between threads is `Send + Sync`.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<Package>();
    shared::<Device>();
    shared::<Buffer>();
    shared::<Runtime>();
    shared::<RuntimeError>();
};
