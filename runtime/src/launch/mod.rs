//! The runtime proper: a package loaded on a device, and launches by name.
//!
//! A launch routes the call, checks every argument against the chosen object's ABI (names,
//! buffer element types, scalar types, no written buffer aliasing another, buffer lengths
//! against their shape rules), derives the grid from the object's rule, adds the runtime-owned workspace buffers, and only then issues
//! the kernel. A refused launch issues nothing.

mod alias;
mod args;
mod bind;
mod catalog;
mod error;
mod shape;

pub(crate) use alias::{check_aliasing, BufferUse};
pub use args::{ArgValue, Args, Launched};
pub use catalog::{Catalog, KernelCatalog};
pub use error::LaunchError;

use crate::device::{Buffer, Code, Device, DeviceKind, PreparedLaunch};
use crate::package::{LoadError, Package, PackageObject};
use crate::route::{Overrides, RouteDecision, RouteQuery, Router};
use crate::RuntimeError;
use bind::bind;
use cranelift_entity::EntityRef;
use kiln_ir::package::ObjectEntry;
use kiln_ir::{ParamKind, Target};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// A code object loaded on the device, with its workspace buffers.
pub(crate) struct LoadedKernel {
    /// `kernel/variant`.
    pub label: Arc<str>,
    pub variant: Arc<str>,
    pub object: PackageObject,
    pub code: Code,
    pub(crate) workspaces: Mutex<BTreeMap<usize, Buffer>>,
    /// The buffer parameters the object reads before its grid-dependency wait.
    pub early: Arc<[usize]>,
    /// The buffer parameters it may write.
    pub writes: Arc<[usize]>,
}

impl LoadedKernel {
    fn new(obj: &PackageObject, code: Code) -> LoadedKernel {
        let ir = obj.ir();
        let early: Vec<usize> = ir.reads_before_grid_wait().iter().map(|p| p.index()).collect();
        let writes: Vec<usize> = ir
            .params
            .values()
            .enumerate()
            .filter(|(_, p)| matches!(p.kind, ParamKind::Buffer { access, .. } if access.writes()))
            .map(|(i, _)| i)
            .collect();
        LoadedKernel {
            label: format!("{}/{}", obj.entry.kernel, obj.entry.variant).into(),
            variant: obj.entry.variant.as_str().into(),
            object: obj.clone(),
            code,
            workspaces: Mutex::new(BTreeMap::new()),
            early: early.into(),
            writes: writes.into(),
        }
    }
}

#[derive(Clone)]
struct KernelSlot {
    router: Router,
    variants: BTreeMap<String, Arc<LoadedKernel>>,
}

/// A call routed and checked once ([`Runtime::prepare_call`]), ready to be issued.
pub struct PreparedCall<'a> {
    rt: &'a Runtime,
    launch: PreparedLaunch,
}

impl PreparedCall<'_> {
    /// Launches the call on the device's stream as prepared (arguments unchecked again).
    pub fn issue(&self) -> Result<(), RuntimeError> {
        Ok(self.rt.device.launch(&self.launch)?)
    }
}

/// A package loaded on a device: routes and launches kernels by name.
pub struct Runtime {
    device: Device,
    arch: String,
    kernels: BTreeMap<String, KernelSlot>,
    overrides: Overrides,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Runtime({:?} as {}, {} kernels)", self.device, self.arch, self.kernels.len())
    }
}

impl Runtime {
    /// Loads every object of the package built for the device's arch, with the route overrides
    /// of the environment (`KILN_ROUTE_*`). Any object of that arch the device refuses fails the
    /// load (see [`LoadError`]); objects of other archs are left alone.
    pub fn load(device: &Device, package: &Package) -> Result<Runtime, RuntimeError> {
        Runtime::load_with(device, package, Overrides::from_env())
    }

    /// [`Runtime::load`] with explicit overrides.
    pub fn load_with(
        device: &Device,
        package: &Package,
        overrides: Overrides,
    ) -> Result<Runtime, RuntimeError> {
        Runtime::load_filtered(device, package, overrides, &|_| true)
    }

    /// [`Runtime::load_with`] loading only the objects of `kernels` (names the package lacks
    /// are left out, as a kernel built for other archs only is): the other kernels are not
    /// in the runtime ([`Runtime::kernels`]). An engine that knows which kernels its graph
    /// calls loads only those: on the H200 the whole library's modules beside a decode step's
    /// made the SmolLM2-shaped Q8_0 step 22 us (4%) slower than its own modules alone
    /// (`bench/results/l2-h200-2026-12-04.md`): where the driver puts the code moves the step.
    pub fn load_only(
        device: &Device,
        package: &Package,
        overrides: Overrides,
        kernels: &[&str],
    ) -> Result<Runtime, RuntimeError> {
        Runtime::load_filtered(device, package, overrides, &|k| kernels.contains(&k))
    }

    fn load_filtered(
        device: &Device,
        package: &Package,
        overrides: Overrides,
        keep: &dyn Fn(&str) -> bool,
    ) -> Result<Runtime, RuntimeError> {
        let arch = resolve_arch(device, package)?;
        let mut kernels: BTreeMap<String, KernelSlot> = BTreeMap::new();
        for k in package.kernels().into_iter().filter(|k| keep(k)) {
            let router =
                Router::new(package.routes(k).expect("a kernel of the package has routes"));
            kernels.insert(k.to_string(), KernelSlot { router, variants: BTreeMap::new() });
        }
        catalog::check_objects_for(package, &arch)?;
        let ours = |o: &&PackageObject| o.entry.arch == arch;
        for obj in package.objects().iter().filter(ours).filter(|o| keep(&o.entry.kernel)) {
            let code = device.load_object(obj, &arch)?;
            let lk = LoadedKernel::new(obj, code);
            let slot = kernels.get_mut(&obj.entry.kernel).expect("every kernel has a slot");
            slot.variants.insert(obj.entry.variant.clone(), Arc::new(lk));
        }
        let names: Vec<&str> = kernels.keys().map(String::as_str).collect();
        overrides.warn_unmatched(&names);
        Ok(Runtime { device: device.clone(), arch, kernels, overrides })
    }

    /// The device.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The arch the objects were loaded for (the cpu device's emulated arch).
    pub fn arch(&self) -> &str {
        &self.arch
    }

    /// The arch's entry in the target table, when it has one.
    pub fn target(&self) -> Option<&'static Target> {
        Target::by_name(&self.arch).ok()
    }

    /// The route overrides in force.
    pub fn overrides(&self) -> &Overrides {
        &self.overrides
    }

    /// The same loaded objects under other route overrides: nothing is loaded again (the code
    /// objects and their workspaces are shared), so a measurement can force one variant after
    /// another without reloading the package each time.
    pub fn with_overrides(&self, overrides: Overrides) -> Runtime {
        let names: Vec<&str> = self.kernels.keys().map(String::as_str).collect();
        overrides.warn_unmatched(&names);
        Runtime {
            device: self.device.clone(),
            arch: self.arch.clone(),
            kernels: self.kernels.clone(),
            overrides,
        }
    }

    /// The kernels this runtime can launch: those of the package with an object for its arch (a
    /// family built only for some archs is absent on the others).
    pub fn kernels(&self) -> Vec<&str> {
        self.kernels
            .iter()
            .filter(|(_, s)| !s.variants.is_empty())
            .map(|(k, _)| k.as_str())
            .collect()
    }

    /// The variants of `kernel` built for this arch.
    pub fn variants(&self, kernel: &str) -> Vec<&str> {
        self.kernels
            .get(kernel)
            .map(|s| s.variants.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }

    /// The manifest entry of `kernel`/`variant` for this arch.
    pub fn object(&self, kernel: &str, variant: &str) -> Option<&ObjectEntry> {
        Some(&self.kernels.get(kernel)?.variants.get(variant)?.object.entry)
    }

    /// The router of `kernel`.
    pub fn router(&self, kernel: &str) -> Option<&Router> {
        self.kernels.get(kernel).map(|s| &s.router)
    }

    fn slot(&self, kernel: &str) -> Result<&KernelSlot, RuntimeError> {
        self.kernels.get(kernel).ok_or_else(|| {
            LaunchError::UnknownKernel {
                kernel: kernel.to_string(),
                available: self.kernels.keys().cloned().collect(),
            }
            .into()
        })
    }

    /// How a call with these arguments would be routed, with a reason for every variant.
    pub fn explain(&self, kernel: &str, args: &Args<'_>) -> Result<RouteDecision, RuntimeError> {
        let slot = self.slot(kernel)?;
        let scalars = |n: &str| args.scalar_value(n);
        let built = |v: &str| slot.variants.contains_key(v);
        Ok(slot.router.decide(&RouteQuery {
            arch: &self.arch,
            scalars: &scalars,
            built: &built,
            overrides: &self.overrides,
        }))
    }

    /// Routes, checks and launches `kernel` on the device's stream.
    pub fn launch(&self, kernel: &str, args: &Args<'_>) -> Result<Launched, RuntimeError> {
        let p = self.prepare(kernel, None, args)?;
        self.device.launch(&p)?;
        Ok(Launched { variant: p.variant.to_string(), grid: p.grid })
    }

    /// Launches one variant, bypassing the router (for parity checks of every variant).
    pub fn launch_variant(
        &self,
        kernel: &str,
        variant: &str,
        args: &Args<'_>,
    ) -> Result<Launched, RuntimeError> {
        let p = self.prepare(kernel, Some(variant), args)?;
        self.device.launch(&p)?;
        Ok(Launched { variant: p.variant.to_string(), grid: p.grid })
    }

    /// Routes and checks a call once; [`PreparedCall::issue`] then launches it again and again
    /// without the runtime's checks (what a measurement of the device layer's own launch cost
    /// needs).
    pub fn prepare_call(
        &self,
        kernel: &str,
        args: &Args<'_>,
    ) -> Result<PreparedCall<'_>, RuntimeError> {
        Ok(PreparedCall { rt: self, launch: self.prepare(kernel, None, args)? })
    }

    /// Waits for the device.
    pub fn synchronize(&self) -> Result<(), RuntimeError> {
        Ok(self.device.synchronize()?)
    }

    /// Routes and checks a call; allocates workspaces; issues nothing.
    pub(crate) fn prepare(
        &self,
        kernel: &str,
        variant: Option<&str>,
        args: &Args<'_>,
    ) -> Result<PreparedLaunch, RuntimeError> {
        let slot = self.slot(kernel)?;
        let scalars = |n: &str| args.scalar_value(n);
        let built = |v: &str| slot.variants.contains_key(v);
        let variant = match variant {
            Some(v) => v,
            None => slot.router.choose(&RouteQuery {
                arch: &self.arch,
                scalars: &scalars,
                built: &built,
                overrides: &self.overrides,
            })?,
        };
        let lk = slot.variants.get(variant).ok_or_else(|| LaunchError::UnknownVariant {
            kernel: kernel.to_string(),
            variant: variant.to_string(),
            arch: self.arch.clone(),
            available: slot.variants.keys().cloned().collect(),
        })?;
        bind(&self.device, lk, args)
    }

    /// True when a variant of `kernel` built for this arch has a workspace parameter.
    pub(crate) fn has_workspace(&self, kernel: &str) -> bool {
        self.kernels.get(kernel).is_some_and(|s| {
            s.variants.values().any(|lk| lk.object.entry.abi.params.iter().any(|p| p.workspace))
        })
    }

    /// The union of what the variants built for this arch do to each buffer parameter, for
    /// hazards: `(reads, writes)` by parameter name.
    pub(crate) fn access(
        &self,
        kernel: &str,
    ) -> Result<BTreeMap<String, (bool, bool)>, RuntimeError> {
        let slot = self.slot(kernel)?;
        if slot.variants.is_empty() {
            return Err(crate::route::RouteError::NoObject {
                kernel: kernel.to_string(),
                arch: self.arch.clone(),
                explanation: "  no variant is built for this arch".into(),
            }
            .into());
        }
        let mut out: BTreeMap<String, (bool, bool)> = BTreeMap::new();
        for lk in slot.variants.values() {
            for p in &lk.object.entry.abi.params {
                if let ParamKind::Buffer { access, .. } = p.kind {
                    let e = out.entry(p.name.clone()).or_default();
                    e.0 |= access.reads();
                    e.1 |= access.writes();
                }
            }
        }
        Ok(out)
    }
}

fn resolve_arch(device: &Device, package: &Package) -> Result<String, LoadError> {
    if let Some(a) = device.arch() {
        if device.kind() == DeviceKind::Cpu {
            Target::by_name(&a)
                .map_err(|source| LoadError::UnknownArch { arch: a.clone(), source })?;
        }
        return Ok(a);
    }
    // The cpu device without an arch: the first wave-32 arch of the package, else its first.
    let archs = package.archs();
    let wave32 =
        archs.iter().find(|a| Target::by_name(a).map(|t| t.default_wave() == 32).unwrap_or(false));
    match wave32.or(archs.first()) {
        Some(a) => Ok(a.to_string()),
        None => Err(LoadError::NoObjectsForArch { arch: "any arch".into(), available: vec![] }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{self, testgen, PackageDir};
    use crate::{CpuOptions, Overrides};
    use kiln_ir::package::{Admission, KernelRoutes, VariantRoute};
    use kiln_ir::{ScalarType, ShapeExpr};
    use rand::Rng;

    fn runtime(
        dev: &Device,
        kernels: &[testing::TestKernel],
    ) -> Option<(tempfile::TempDir, Runtime)> {
        let (dir, pkg) = testing::package_for(dev, kernels)?;
        Some((dir, Runtime::load_with(dev, &pkg, Overrides::none()).unwrap()))
    }

    /// A one-kernel package (as gfx1100) loaded on the cpu device; the directory lives as long
    /// as the first value.
    fn cpu_runtime(k: &kiln_ir::Kernel) -> (tempfile::TempDir, Device, Runtime) {
        let mut p = PackageDir::new();
        p.add_fake(k, "baseline", "gfx1100");
        let dir = p.write();
        let pkg = Package::open(dir.path()).unwrap();
        let dev = Device::cpu(CpuOptions::default());
        let rt = Runtime::load_with(&dev, &pkg, Overrides::none()).unwrap();
        (dir, dev, rt)
    }

    fn random_f32(n: usize) -> Vec<f32> {
        let mut r = rand::thread_rng();
        (0..n).map(|_| r.gen_range(-100.0f32..100.0)).collect()
    }

    fn launches_with_grid_from_the_rule(dev: &Device) {
        let Some((_d, rt)) = runtime(dev, &[testing::scale()]) else { return };
        let mut r = rand::thread_rng();
        for _ in 0..3 {
            let n: u32 = r.gen_range(1..2000);
            let s: f32 = r.gen_range(-4.0..4.0);
            let xs = random_f32(n as usize);
            let x = dev.upload(&xs).unwrap();
            let out = dev.alloc(ScalarType::F32, n as usize).unwrap();
            let args =
                Args::new().buffer("x", &x).buffer("out", &out).scalar("n", n).scalar("s", s);
            let l = rt.launch("scale", &args).unwrap();
            assert_eq!(l, Launched { variant: "baseline".into(), grid: [n.div_ceil(32), 1, 1] });
            let got = out.read::<f32>().unwrap();
            let want: Vec<f32> = xs.iter().map(|v| v * s).collect();
            assert_eq!(
                got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                want.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
        }
    }

    fn refused_launches_issue_nothing(dev: &Device) {
        let Some((_d, rt)) = runtime(dev, &[testing::scale()]) else { return };
        let n = 100u32;
        let x = dev.upload(&random_f32(n as usize)).unwrap();
        let sentinel = random_f32(n as usize);
        let out = dev.upload(&sentinel).unwrap();
        let short = dev.alloc(ScalarType::F32, n as usize - 1).unwrap();
        let halves = dev.alloc(ScalarType::F16, n as usize).unwrap();
        let good =
            || Args::new().buffer("x", &x).buffer("out", &out).scalar("n", n).scalar("s", 2.0f32);
        let cases: Vec<(Args<'_>, &str)> = vec![
            (
                Args::new()
                    .buffer("x", &halves)
                    .buffer("out", &out)
                    .scalar("n", n)
                    .scalar("s", 2.0f32),
                "scale/baseline: argument `x`: expected a f32 buffer, found a f16 buffer",
            ),
            (
                Args::new()
                    .buffer("x", &short)
                    .buffer("out", &out)
                    .scalar("n", n)
                    .scalar("s", 2.0f32),
                "scale/baseline: buffer `x` has 99 elements, needs at least 100 (n with n=100)",
            ),
            (
                Args::new().buffer("x", &x).buffer("out", &out).scalar("n", n),
                "scale/baseline: missing argument `s` (expected a f32 scalar)",
            ),
            (
                good().scalar("extra", 1u32),
                "scale/baseline: no parameter `extra`; parameters: x: f32",
            ),
            (
                Args::new()
                    .buffer("x", &x)
                    .buffer("out", &out)
                    .scalar("n", n as i32)
                    .scalar("s", 2.0f32),
                "scale/baseline: argument `n`: expected a u32 scalar, found a i32 scalar (100i32)",
            ),
            (
                Args::new()
                    .buffer("x", &x)
                    .scalar("out", 1.0f32)
                    .scalar("n", n)
                    .scalar("s", 2.0f32),
                "argument `out`: expected a f32 buffer, found a scalar (1f32)",
            ),
            (good().scalar("n", n), "scale/baseline: argument `n` given twice"),
            (
                Args::new()
                    .buffer("x", &x)
                    .buffer("out", &out)
                    .scalar("n", 0u32)
                    .scalar("s", 2.0f32),
                "scale/baseline: grid [0, 1, 1] (ceil(n/32), 1, 1) cannot launch",
            ),
        ];
        for (args, want) in cases {
            let e = rt.launch("scale", &args).unwrap_err();
            assert!(matches!(e, RuntimeError::Launch(_)), "{e}");
            assert!(e.to_string().contains(want), "got: {e}\nwant: {want}");
        }
        // A buffer of another device.
        let other = Device::cpu(CpuOptions::default());
        let foreign = other.upload(&random_f32(n as usize)).unwrap();
        let e = rt
            .launch(
                "scale",
                &Args::new()
                    .buffer("x", &foreign)
                    .buffer("out", &out)
                    .scalar("n", n)
                    .scalar("s", 2.0f32),
            )
            .unwrap_err();
        assert!(e.to_string().contains("buffer `x` lives on Device(cpu"), "{e}");
        let e = rt.launch("nope", &good()).unwrap_err();
        assert_eq!(e.to_string(), "no kernel `nope` in the package; kernels: scale");
        rt.synchronize().unwrap();
        assert_eq!(out.read::<f32>().unwrap(), sentinel, "a refused launch wrote the output");
    }

    fn workspaces_are_runtime_owned_and_zeroed(dev: &Device) {
        let Some((_d, rt)) = runtime(dev, &[testing::ws_count()]) else { return };
        let out = dev.alloc(ScalarType::U32, 1).unwrap();
        for _ in 0..3 {
            let n: u32 = rand::random();
            rt.launch("ws_count", &Args::new().buffer("out", &out).scalar("n", n)).unwrap();
            assert_eq!(out.read::<u32>().unwrap(), vec![n]);
        }
        let ws = dev.alloc(ScalarType::U32, 1).unwrap();
        let e = rt
            .launch(
                "ws_count",
                &Args::new().buffer("out", &out).scalar("n", 1u32).buffer("ws", &ws),
            )
            .unwrap_err();
        assert!(
            e.to_string().contains("`ws` is a workspace buffer: the runtime allocates it"),
            "{e}"
        );
    }

    /// A buffer bound to a read and a written parameter is refused before launch on every
    /// device, naming the kernel and both parameters; nothing runs.
    fn aliased_buffers_are_refused(dev: &Device) {
        let Some((_d, rt)) = runtime(dev, &[testing::scale()]) else { return };
        let xs = random_f32(64);
        let x = dev.upload(&xs).unwrap();
        let args =
            Args::new().buffer("x", &x).buffer("out", &x).scalar("n", 64u32).scalar("s", 2.0f32);
        let e = rt.launch("scale", &args).unwrap_err();
        assert!(matches!(e, RuntimeError::Launch(LaunchError::Aliased { .. })), "{e}");
        assert!(
            e.to_string().contains(
                "scale/baseline: `x` and `out` are bound to overlapping memory and `out` is written"
            ),
            "{e}"
        );
        rt.synchronize().unwrap();
        assert_eq!(x.read::<f32>().unwrap(), xs, "a refused launch ran");
    }

    testgen!(
        aliased_buffers_are_refused,
        launches_with_grid_from_the_rule,
        refused_launches_issue_nothing,
        workspaces_are_runtime_owned_and_zeroed
    );

    /// Variants and routes on the cpu device: `fast` is built for gfx1100 only and admitted for
    /// n <= 100; the baseline exists for gfx906 only.
    fn routed() -> (tempfile::TempDir, Package) {
        let k = testing::scale().ir;
        let mut p = PackageDir::new();
        p.add_fake(&k, "fast", "gfx1100");
        p.add_fake(&k, "baseline", "gfx906");
        p.routes.push(KernelRoutes {
            kernel: "scale".into(),
            baseline: "baseline".into(),
            variants: vec![VariantRoute {
                variant: "fast".into(),
                admit: Admission { archs: vec![], shapes: vec![("n".into(), 1, 100)] },
            }],
            tuning: vec![],
        });
        let dir = p.write();
        let pkg = Package::open(dir.path()).unwrap();
        (dir, pkg)
    }

    #[test]
    fn missing_object_without_admitted_fallback_is_a_hard_error() {
        let (_d, pkg) = routed();
        let dev = Device::cpu(CpuOptions::arch("gfx1100"));
        let rt = Runtime::load_with(&dev, &pkg, Overrides::none()).unwrap();
        let xs = random_f32(300);
        let x = dev.upload(&xs).unwrap();
        let out = dev.alloc(ScalarType::F32, 300).unwrap();
        let args = |n: u32| {
            Args::new().buffer("x", &x).buffer("out", &out).scalar("n", n).scalar("s", 3.0f32)
        };

        assert_eq!(rt.launch("scale", &args(50)).unwrap().variant, "fast");
        let e = rt.launch("scale", &args(300)).unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, RuntimeError::Route(crate::RouteError::NoObject { .. })), "{text}");
        assert!(text.contains("scale on gfx1100: no variant admitted and no baseline"), "{text}");
        assert!(text.contains("fast: not taken: n=300 outside 1..=100"), "{text}");
        assert!(text.contains("baseline: not built for gfx1100"), "{text}");
        assert_eq!(out.read::<f32>().unwrap()[50..], vec![0.0; 250][..], "nothing ran for n=300");

        let d = rt.explain("scale", &args(300)).unwrap();
        assert!(d.chosen().is_err());

        // Forcing a variant that is not built for the arch is an error too.
        let mut o = Overrides::none();
        o.set("scale", "baseline");
        let rt = Runtime::load_with(&dev, &pkg, o).unwrap();
        let e = rt.launch("scale", &args(50)).unwrap_err();
        assert!(
            e.to_string().contains(
                "KILN_ROUTE_SCALE=baseline: scale has no variant `baseline` built for gfx1100"
            ),
            "{e}"
        );

        // The cpu device picks the first wave-32 arch present: gfx1100 here.
        let rt = Runtime::load_with(&Device::cpu(CpuOptions::default()), &pkg, Overrides::none())
            .unwrap();
        assert_eq!(rt.arch(), "gfx1100");
    }

    #[test]
    fn forced_route_and_explain() {
        let (_d, pkg) = routed();
        let dev = Device::cpu(CpuOptions::arch("gfx1100"));
        let mut o = Overrides::none();
        o.set("scale", "fast");
        let rt = Runtime::load_with(&dev, &pkg, o).unwrap();
        let x = dev.upload(&random_f32(300)).unwrap();
        let out = dev.alloc(ScalarType::F32, 300).unwrap();
        let args =
            Args::new().buffer("x", &x).buffer("out", &out).scalar("n", 300u32).scalar("s", 3.0f32);
        let d = rt.explain("scale", &args).unwrap();
        assert_eq!(d.chosen(), Ok("fast"));
        assert!(d.explain().contains("fast: forced by KILN_ROUTE_SCALE=fast"), "{d}");
        assert_eq!(rt.launch("scale", &args).unwrap().variant, "fast");
        assert_eq!(rt.launch_variant("scale", "fast", &args).unwrap().grid, [10, 1, 1]);
        let e = rt.launch_variant("scale", "baseline", &args).unwrap_err();
        assert!(
            e.to_string().contains("no variant `baseline` built for gfx1100; built: fast"),
            "{e}"
        );
    }

    /// The cpu device emulating gfx906 runs wave-64 kernels with 64-lane waves.
    #[test]
    fn the_cpu_device_emulates_wave_64() {
        let mut b = kiln_ir::KernelBuilder::new("lanes", 64);
        b.workgroup_size([128, 1, 1]);
        let out = b.buffer_with_len(
            "out",
            ScalarType::U32,
            kiln_ir::Access::Write,
            ShapeExpr::constant(128),
        );
        let (lane, wave, lid) = (b.lane(), b.wave(), b.local_id());
        let k = b.u32(1000);
        let w = b.mul(wave, k);
        let v = b.add(w, lane);
        b.store(out, lid, v);
        let ir = b.finish();
        let mut p = PackageDir::new();
        p.add_fake(&ir, "baseline", "gfx906");
        p.add_fake(&testing::scale().ir, "baseline", "gfx1100");
        let dir = p.write();
        let pkg = Package::open(dir.path()).unwrap();

        // By default the cpu device takes the first wave-32 arch: gfx1100, where `lanes` is not built.
        let rt = Runtime::load_with(&Device::cpu(CpuOptions::default()), &pkg, Overrides::none())
            .unwrap();
        assert_eq!(rt.arch(), "gfx1100");
        assert!(rt.variants("lanes").is_empty());

        let dev = Device::cpu(CpuOptions::arch("gfx906"));
        let rt = Runtime::load_with(&dev, &pkg, Overrides::none()).unwrap();
        let buf = dev.alloc(ScalarType::U32, 128).unwrap();
        rt.launch("lanes", &Args::new().buffer("out", &buf)).unwrap();
        let want: Vec<u32> = (0..128).map(|i| (i / 64) * 1000 + i % 64).collect();
        assert_eq!(buf.read::<u32>().unwrap(), want);
    }

    /// A scalar that breaks the ABI's rule (`n` a multiple of 32) is refused before launch, on
    /// the runtime's own path (not only by the interpreter), naming the parameter and the rule.
    #[test]
    fn a_scalar_breaking_an_abi_rule_is_refused_before_launch() {
        use kiln_ir::ScalarRule;
        let mut b = kiln_ir::KernelBuilder::new("copy32", 32);
        let n = b.scalar_param("n", ScalarType::U32);
        b.scalar_rule(n, ScalarRule::MultipleOf(32));
        let len = ShapeExpr::scaled(&[n], 1, 1);
        let x = b.buffer_with_len("x", ScalarType::F32, kiln_ir::Access::Read, len.clone());
        let out = b.buffer_with_len("out", ScalarType::F32, kiln_ir::Access::Write, len);
        let lane = b.lane();
        let v = b.load(x, lane, ScalarType::F32);
        b.store(out, lane, v);
        let mut p = PackageDir::new();
        p.add_fake(&b.finish(), "baseline", "gfx1100");
        let dir = p.write();
        let pkg = Package::open(dir.path()).unwrap();
        assert_eq!(pkg.objects()[0].entry.abi.params[0].rules, vec![ScalarRule::MultipleOf(32)]);
        let dev = Device::cpu(CpuOptions::default());
        let rt = Runtime::load_with(&dev, &pkg, Overrides::none()).unwrap();
        let n_bad = 33 + 32 * (rand::random::<u32>() % 8);
        for (count, ok) in [(32u32, true), (n_bad, false), (64, true)] {
            let xs = random_f32(count as usize);
            let x = dev.upload(&xs).unwrap();
            let out = dev.alloc(ScalarType::F32, count as usize).unwrap();
            let args = Args::new().buffer("x", &x).buffer("out", &out).scalar("n", count);
            match rt.launch("copy32", &args) {
                Ok(_) => assert!(ok, "n={count} was launched"),
                Err(e) => {
                    assert!(!ok, "n={count}: {e}");
                    assert!(
                        matches!(&e, RuntimeError::Launch(LaunchError::ScalarRule { param, .. }) if param == "n"),
                        "{e}"
                    );
                    assert!(e.to_string().contains("a multiple of 32"), "{e}");
                }
            }
        }
    }

    /// Read-only parameters may share a buffer: `out = x + y` with `x` and `y` one buffer.
    #[test]
    fn read_only_parameters_may_share_a_buffer() {
        let mut b = kiln_ir::KernelBuilder::new("add2", 32);
        let x =
            b.buffer_with_len("x", ScalarType::F32, kiln_ir::Access::Read, ShapeExpr::constant(32));
        let y =
            b.buffer_with_len("y", ScalarType::F32, kiln_ir::Access::Read, ShapeExpr::constant(32));
        let out = b.buffer_with_len(
            "out",
            ScalarType::F32,
            kiln_ir::Access::Write,
            ShapeExpr::constant(32),
        );
        let lane = b.lane();
        let xv = b.load(x, lane, ScalarType::F32);
        let yv = b.load(y, lane, ScalarType::F32);
        let r = b.add(xv, yv);
        b.store(out, lane, r);
        let (_dir, dev, rt) = cpu_runtime(&b.finish());
        let xs = random_f32(32);
        let shared = dev.upload(&xs).unwrap();
        let out = dev.alloc(ScalarType::F32, 32).unwrap();
        let args = Args::new().buffer("x", &shared).buffer("y", &shared).buffer("out", &out);
        rt.launch("add2", &args).unwrap();
        assert_eq!(out.read::<f32>().unwrap(), xs.iter().map(|v| v + v).collect::<Vec<_>>());
        // The written parameter may not share it.
        let args = Args::new().buffer("x", &shared).buffer("y", &out).buffer("out", &shared);
        let e = rt.launch("add2", &args).unwrap_err();
        assert!(e.to_string().contains("`x` and `out` are bound to overlapping memory"), "{e}");
    }

    /// A launch knows which of its buffer parameters the object reads before its grid-dependency
    /// wait (from the IR the package holds, not from a manifest field) and which it writes, so a
    /// GPU device can overlap it only where no grid still in flight writes what it reads early
    /// (`device::inflight`); the cpu device runs it as written, and its values are the same.
    #[test]
    fn a_launch_carries_its_early_reads_and_writes() {
        let mut b = kiln_ir::KernelBuilder::new("early", 32);
        let out = b.buffer("out", ScalarType::F32, kiln_ir::Access::Write);
        let w = b.buffer("w", ScalarType::F32, kiln_ir::Access::Read);
        let x = b.buffer("x", ScalarType::F32, kiln_ir::Access::Read);
        for p in [out, w, x] {
            b.set_buffer_len(p, ShapeExpr::constant(32));
        }
        let lane = b.lane();
        let wv = b.load(w, lane, ScalarType::F32);
        b.grid_dependency_wait();
        let xv = b.load(x, lane, ScalarType::F32);
        let r = b.mul(wv, xv);
        b.store(out, lane, r);
        let (_dir, dev, rt) = cpu_runtime(&b.finish());
        let (ws, xs) = (random_f32(32), random_f32(32));
        let (wb, xb) = (dev.upload(&ws).unwrap(), dev.upload(&xs).unwrap());
        let ob = dev.alloc(ScalarType::F32, 32).unwrap();
        let args = Args::new().buffer("out", &ob).buffer("w", &wb).buffer("x", &xb);
        let call = rt.prepare_call("early", &args).unwrap();
        assert_eq!(&*call.launch.early, &[1]);
        assert_eq!(&*call.launch.writes, &[0]);
        call.issue().unwrap();
        let want: Vec<f32> = ws.iter().zip(&xs).map(|(a, b)| a * b).collect();
        assert_eq!(ob.read::<f32>().unwrap(), want);
    }

    /// A package that marks a scalar as a workspace is refused at launch with an error naming
    /// the parameter (it used to reach a panic, `scalars[i].expect`). Bound directly: a loader
    /// may refuse such a package earlier, and this checks the launch path on its own.
    #[test]
    fn a_workspace_scalar_is_an_error_not_a_panic() {
        // The loader refuses such a package (its IR fails the verifier), so the manifest entry
        // is altered after a valid package is opened.
        let ir = testing::ws_count().ir;
        let mut p = PackageDir::new();
        p.add_fake(&ir, "baseline", "gfx1100");
        let dir = p.write();
        let pkg = Package::open(dir.path()).unwrap();
        let mut obj = pkg.objects()[0].clone();
        let n = obj.entry.abi.params.iter().position(|p| p.name == "n").unwrap();
        obj.entry.abi.params[n].workspace = true;
        let dev = Device::cpu(CpuOptions::default());
        let lk = Arc::new(LoadedKernel::new(&obj, Code::Cpu(obj.ir().clone())));
        let out = dev.alloc(ScalarType::U32, 1).unwrap();
        for args in
            [Args::new().buffer("out", &out), Args::new().buffer("out", &out).scalar("n", 1u32)]
        {
            let e = bind(&dev, &lk, &args).err().expect("a workspace scalar was bound");
            assert!(matches!(e, RuntimeError::Launch(LaunchError::WorkspaceScalar { .. })), "{e}");
            assert!(
                e.to_string()
                    .contains("ws_count/baseline: scalar parameter `n` is marked as a workspace"),
                "{e}"
            );
        }
    }
}
