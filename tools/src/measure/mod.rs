//! Measurements for `kiln bench`, with the bench-only kernels they launch: the launch cost of a
//! trivial kernel ([`launch_cost`]) and the device's copy bandwidth ([`bandwidth`]), which gives
//! the floor every bench case is compared against.
//!
//! They live with the tools, not in the runtime: a serving engine never launches them. Their
//! kernels are hand-written PTX (no LLVM in the runtime-only `kiln`) packaged in memory with the
//! runtime's public [`Package::from_memory`], and on the cpu device the same kernel's IR.

// The runtime's errors are flat enums that travel only on cold paths (see kiln-runtime's crate
// doc); these measurements return them as they are.
#![allow(clippy::result_large_err)]

pub mod bandwidth;
pub mod launch_cost;

use kiln_ir::package::{Abi, Manifest, ObjectEntry, ObjectFormat, Resources, Toolchain};
use kiln_ir::Kernel;
use kiln_runtime::{Package, Runtime, RuntimeError};
use std::collections::BTreeMap;

/// A one-kernel package of `ir` with `bytes` as its object for `arch` (PTX text for cuda; any
/// bytes for the cpu device, which runs the IR).
pub(crate) fn built_in_package(
    ir: &Kernel,
    arch: &str,
    format: ObjectFormat,
    bytes: Vec<u8>,
) -> Result<Package, RuntimeError> {
    let (obj, ir_file) = (format!("{}.obj", ir.name), format!("{}.ir.ron", ir.name));
    let entry = ObjectEntry {
        kernel: ir.name.clone(),
        variant: "baseline".into(),
        symbol: ir.name.clone(),
        consts: ir.consts.clone(),
        arch: arch.to_string(),
        target_id: kiln_ir::Target::by_name(arch)
            .map(|t| format!("{}--{arch}", t.triple()))
            .unwrap_or_else(|_| arch.to_string()),
        wave_size: ir.wave_size,
        workgroup_size: ir.workgroup_size,
        grid: ir.grid.clone(),
        abi: Abi::of(ir),
        resources: Resources {
            wave_size: ir.wave_size,
            source: "built in".into(),
            ..Resources::default()
        },
        occupancy: None,
        ir_hash: ir.content_hash(),
        ir_file: ir_file.clone(),
        file: obj.clone(),
        format,
        content_hash: blake3_hex(&bytes),
        // The built-in kernels' PTX is hand-written without the entry wait: each is timed on
        // its own, so none claims to wait for its predecessor (the package check refuses a
        // claim the object does not keep).
        grid_dependency: false,
    };
    let files = BTreeMap::from([(obj, bytes), (ir_file, ir.to_ron().into_bytes())]);
    let manifest = Manifest {
        format: kiln_ir::package::MANIFEST_FORMAT,
        toolchain: Toolchain {
            kiln: env!("CARGO_PKG_VERSION").into(),
            llvm: "none".into(),
            ..Toolchain::default()
        },
        objects: vec![entry],
        routes: vec![],
    };
    Package::from_memory(manifest, &files)
}

fn blake3_hex(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The median over `samples` runs of `issue` (which does `units` units of work) timed between
/// two device events, in microseconds per unit.
pub(crate) fn median_us_per_unit(
    rt: &Runtime,
    samples: usize,
    units: usize,
    mut issue: impl FnMut() -> Result<(), RuntimeError>,
) -> Result<f64, RuntimeError> {
    let mut out = vec![];
    for _ in 0..samples.max(1) {
        let start = rt.device().record_event()?;
        issue()?;
        let end = rt.device().record_event()?;
        out.push(start.elapsed_ms(&end)? * 1e3 / units.max(1) as f64);
    }
    Ok(median(out))
}

#[cfg(test)]
mod tests {
    use super::bandwidth::{stream_copy_ir, STREAM_COPY_PTX};
    use super::*;

    /// The built-in kernels load as packages for every NVIDIA arch, sm_90's launch overlap
    /// included (a manifest claiming the entry wait for this PTX was refused on the H200, so
    /// `kiln bench --device cuda` could not measure its floor).
    #[test]
    fn built_in_ptx_packages_pass_the_package_check_on_every_nvidia_arch() {
        let copy = stream_copy_ir(32);
        let touch = launch_cost::trivial_ir();
        for t in kiln_ir::TARGETS.iter().filter(|t| t.vendor == kiln_ir::target::Vendor::Nvidia) {
            for (ir, ptx) in [(&copy, STREAM_COPY_PTX), (&touch, launch_cost::TRIVIAL_PTX)] {
                let bytes = ptx.replace("{target}", t.name).into_bytes();
                if let Err(e) = built_in_package(ir, t.name, ObjectFormat::Ptx, bytes) {
                    panic!("{} on {}: {e}", ir.name, t.name);
                }
            }
        }
    }
}
