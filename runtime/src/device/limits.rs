//! What a device accepts: its limits, and the checks an object passes before it is loaded
//! (exact arch, wave size, object format, LDS and registers; on cuda, also what the JIT
//! allocated).

use super::{Backend, Code, Device, DeviceError, DeviceKind};
use crate::package::{LoadError, PackageObject};
use kiln_ir::package::check::ObjectId;
use kiln_ir::package::ObjectFormat;
use kiln_ir::Target;
use std::sync::Arc;

/// What the device can hold; objects beyond these are refused at load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    /// Wave sizes the device runs.
    pub wave_sizes: Vec<u32>,
    /// Static LDS (shared memory) per workgroup, bytes.
    pub lds_per_workgroup: u64,
    /// VGPRs per lane (NVIDIA: registers per thread), as code objects count them: on CDNA2 /
    /// CDNA3 with the AGPRs ([`kiln_ir::Target::max_vgpr_count`]).
    pub max_vgprs: u32,
    /// SGPRs per wave (AMD).
    pub max_sgprs: Option<u32>,
    /// AGPRs per lane (CDNA).
    pub max_agprs: Option<u32>,
    /// Registers per workgroup (NVIDIA: registers per block).
    pub max_registers_per_workgroup: Option<u64>,
    /// Lanes per workgroup.
    pub max_workgroup_lanes: u32,
}

impl DeviceLimits {
    /// The limits of a target from the target table.
    pub fn of_target(t: &Target) -> DeviceLimits {
        let amd = t.vendor == kiln_ir::target::Vendor::Amd;
        DeviceLimits {
            wave_sizes: t.wave_sizes.to_vec(),
            lds_per_workgroup: t.lds_per_workgroup as u64,
            max_vgprs: t.max_vgpr_count(),
            max_sgprs: amd.then_some(t.sgprs),
            max_agprs: amd.then_some(t.agprs),
            max_registers_per_workgroup: (!amd).then_some(t.vgpr_file as u64),
            max_workgroup_lanes: 1024,
        }
    }
}

impl Device {
    /// Checks that an object can run here, as `arch`, and loads it.
    pub(crate) fn load_object(&self, obj: &PackageObject, arch: &str) -> Result<Code, LoadError> {
        let limits = self.limits(arch)?;
        let formats: &[ObjectFormat] = match self.kind() {
            // The cpu device runs the IR file; the object's own format does not matter.
            DeviceKind::Cpu => &[ObjectFormat::Hsaco, ObjectFormat::Ptx],
            DeviceKind::Cuda => &[ObjectFormat::Ptx],
            DeviceKind::Hip => &[ObjectFormat::Hsaco],
        };
        check_capability(obj, arch, &limits, self.kind(), formats)?;
        let driver = |e: DeviceError| LoadError::Driver { object: obj.who(), source: Box::new(e) };
        match self.backend() {
            Backend::Cpu(c) => c.load(obj, arch),
            Backend::Cuda(c) => {
                let f = c.load(obj).map_err(driver)?;
                // The JIT allocates registers itself: check what it allocated too.
                let lanes = obj.entry.workgroup_size.iter().product::<u32>();
                let after_jit = [
                    ("registers per lane (allocated by the JIT)", f.registers, limits.max_vgprs),
                    (
                        "lanes per workgroup (after the JIT's register allocation)",
                        lanes,
                        f.max_lanes,
                    ),
                ];
                for (resource, found, limit) in after_jit {
                    if found > limit {
                        return Err(LoadError::Resource {
                            object: obj.who(),
                            resource,
                            limit: limit as u64,
                            found: found as u64,
                        });
                    }
                }
                Ok(Code::Cuda(Arc::new(f)))
            }
            #[cfg(feature = "hip")]
            Backend::Hip(h) => Ok(Code::Hip(Arc::new(h.load(obj).map_err(driver)?))),
        }
    }
}

/// The device-side checks of an object: exact arch, wave size, format, LDS and registers.
pub(crate) fn check_capability(
    obj: &PackageObject,
    arch: &str,
    limits: &DeviceLimits,
    kind: DeviceKind,
    formats: &[ObjectFormat],
) -> Result<(), LoadError> {
    let e = &obj.entry;
    let object = obj.who();
    if e.arch != arch {
        let ObjectId { kernel, variant, arch: found } = object;
        return Err(LoadError::WrongArch { kernel, variant, expected: arch.to_string(), found });
    }
    if !limits.wave_sizes.contains(&e.wave_size) {
        return Err(LoadError::WrongWave {
            object,
            expected: limits.wave_sizes.clone(),
            found: e.wave_size,
        });
    }
    if !formats.contains(&e.format) {
        return Err(LoadError::WrongFormat {
            object,
            device: kind.to_string(),
            found: format!("{:?}", e.format).to_lowercase(),
        });
    }
    let lanes: u64 = e.workgroup_size.iter().map(|&d| d as u64).product();
    let lds = (e.resources.lds_bytes as u64).max(obj.ir().lds_bytes() as u64);
    let mut checks: Vec<(&'static str, u64, Option<u64>)> = vec![
        ("LDS bytes per workgroup", lds, Some(limits.lds_per_workgroup)),
        ("lanes per workgroup", lanes, Some(limits.max_workgroup_lanes as u64)),
    ];
    if let Some(v) = e.resources.vgprs {
        checks.push(("VGPRs per lane", v as u64, Some(limits.max_vgprs as u64)));
        checks.push((
            "registers per workgroup",
            v as u64 * lanes,
            limits.max_registers_per_workgroup,
        ));
    }
    if let Some(s) = e.resources.sgprs {
        checks.push(("SGPRs per wave", s as u64, limits.max_sgprs.map(u64::from)));
    }
    if let Some(a) = e.resources.agprs {
        checks.push(("AGPRs per lane", a as u64, limits.max_agprs.map(u64::from)));
    }
    for (resource, found, limit) in checks {
        if let Some(limit) = limit {
            if found > limit {
                return Err(LoadError::Resource { object, resource, limit, found });
            }
        }
    }
    Ok(())
}
