//! What a runtime would hold, asked of a package without loading it: the kernels with objects
//! for a device's arch, their variants and manifest entries ([`Catalog`]). An engine decides
//! from it which kernels its graph calls (where the norms go, whether the K/V append is fused)
//! and then loads only those ([`Runtime::load_only`]): on cuda a load JIT-compiles every
//! module, so deciding from a loaded runtime would load the package twice. [`KernelCatalog`]
//! is the questions both answer alike.

use super::{resolve_arch, Runtime};
use crate::device::Device;
use crate::package::{LoadError, Package};
use crate::RuntimeError;
use kiln_ir::package::ObjectEntry;
use std::collections::BTreeSet;

/// The kernels a device can launch from a package, by name, variant and manifest entry.
pub trait KernelCatalog {
    /// The arch the objects are (or would be) loaded for.
    fn catalog_arch(&self) -> &str;
    /// The kernels with an object for the arch, sorted.
    fn kernel_names(&self) -> Vec<&str>;
    /// The variants of `kernel` built for the arch, sorted.
    fn variant_names(&self, kernel: &str) -> Vec<&str>;
    /// The manifest entry of `kernel`/`variant` for the arch.
    fn entry(&self, kernel: &str, variant: &str) -> Option<&ObjectEntry>;
}

/// A package's objects for the arch a device would load, read from its manifest alone.
#[derive(Clone, Debug)]
pub struct Catalog<'p> {
    package: &'p Package,
    arch: String,
}

impl<'p> Catalog<'p> {
    /// The catalog of what [`Runtime::load`] would load on `device`: the same arch (the cpu
    /// device's emulated one, or the package's first wave-32 arch), and the same refusal when
    /// the package has no object for it.
    pub fn new(device: &Device, package: &'p Package) -> Result<Catalog<'p>, RuntimeError> {
        let arch = resolve_arch(device, package)?;
        check_objects_for(package, &arch)?;
        Ok(Catalog { package, arch })
    }
}

/// [`LoadError::NoObjectsForArch`] unless `package` has an object for `arch`.
pub(super) fn check_objects_for(package: &Package, arch: &str) -> Result<(), LoadError> {
    if package.objects().iter().any(|o| o.entry.arch == arch) {
        return Ok(());
    }
    let available = package
        .objects()
        .iter()
        .map(|o| format!("{}/{} for {}", o.entry.kernel, o.entry.variant, o.entry.arch))
        .collect();
    Err(LoadError::NoObjectsForArch { arch: arch.to_string(), available })
}

impl KernelCatalog for Catalog<'_> {
    fn catalog_arch(&self) -> &str {
        &self.arch
    }

    fn kernel_names(&self) -> Vec<&str> {
        let ours = self.package.objects().iter().filter(|o| o.entry.arch == self.arch);
        let set: BTreeSet<&str> = ours.map(|o| o.entry.kernel.as_str()).collect();
        set.into_iter().collect()
    }

    fn variant_names(&self, kernel: &str) -> Vec<&str> {
        let ours = self.package.objects().iter().map(|o| &o.entry);
        let set: BTreeSet<&str> = ours
            .filter(|e| e.arch == self.arch && e.kernel == kernel)
            .map(|e| e.variant.as_str())
            .collect();
        set.into_iter().collect()
    }

    fn entry(&self, kernel: &str, variant: &str) -> Option<&ObjectEntry> {
        self.package.find(kernel, variant, &self.arch).map(|o| &o.entry)
    }
}

impl KernelCatalog for Runtime {
    fn catalog_arch(&self) -> &str {
        self.arch()
    }

    fn kernel_names(&self) -> Vec<&str> {
        self.kernels()
    }

    fn variant_names(&self, kernel: &str) -> Vec<&str> {
        self.variants(kernel)
    }

    fn entry(&self, kernel: &str, variant: &str) -> Option<&ObjectEntry> {
        self.object(kernel, variant)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{self, PackageDir};
    use crate::{CpuOptions, Overrides};

    /// The catalog of a package answers what the runtime loaded from it answers, kernel for
    /// kernel, variant for variant and entry for entry, on each arch of a two-arch package (one
    /// kernel built for one arch only, one variant on one arch only); a device whose arch has no
    /// object is refused alike.
    #[test]
    fn a_catalog_answers_as_the_loaded_runtime() {
        let (scale, mix) = (testing::scale().ir, testing::mix().ir);
        let mut p = PackageDir::new();
        p.add_fake(&scale, "baseline", "gfx1100");
        p.add_fake(&scale, "fast", "gfx1100");
        p.add_fake(&mix, "baseline", "gfx1100");
        p.add_fake(&scale, "baseline", "gfx1201");
        let dir = p.write();
        let pkg = Package::open(dir.path()).unwrap();
        let cpu = |arch: &str| {
            Device::cpu(CpuOptions { arch: Some(arch.to_string()), ..CpuOptions::default() })
        };
        let mut kernels = vec![];
        for arch in ["gfx1100", "gfx1201"] {
            let dev = cpu(arch);
            let rt = Runtime::load_with(&dev, &pkg, Overrides::default()).unwrap();
            let cat = Catalog::new(&dev, &pkg).unwrap();
            assert_eq!(cat.catalog_arch(), rt.catalog_arch());
            assert_eq!(cat.kernel_names(), rt.kernel_names(), "{arch}");
            for k in cat.kernel_names() {
                assert_eq!(cat.variant_names(k), rt.variant_names(k), "{arch} {k}");
                for v in cat.variant_names(k) {
                    assert_eq!(cat.entry(k, v), rt.entry(k, v), "{arch} {k}/{v}");
                    assert!(cat.entry(k, v).is_some());
                }
            }
            assert_eq!(cat.variant_names("no_such_kernel"), Vec::<&str>::new());
            assert!(cat.entry("scale", "no_such_variant").is_none());
            kernels.push(cat.kernel_names().join(","));
        }
        assert_eq!(kernels, ["mix,scale", "scale"]);
        let other = cpu("gfx1030");
        let a = Catalog::new(&other, &pkg).unwrap_err().to_string();
        let b = Runtime::load(&other, &pkg).err().unwrap().to_string();
        assert_eq!(a, b);
        assert!(a.contains("gfx1030"), "{a}");
    }
}
