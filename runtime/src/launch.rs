//! The runtime proper: a package loaded on a device, and launches by name.
//!
//! A launch routes the call, checks every argument against the chosen object's ABI (names,
//! buffer element types, buffer lengths against their shape rules, scalar types), derives the
//! grid from the object's rule, adds the runtime-owned workspace buffers, and only then issues
//! the kernel. A refused launch issues nothing.

use crate::device::{Buffer, Code, Device, DeviceKind, KernelArg, PreparedLaunch};
use crate::package::{describe_params, LoadError, Package, PackageObject};
use crate::route::{Overrides, RouteDecision, RouteQuery, Router};
use crate::value::Scalar;
use crate::RuntimeError;
use cranelift_entity::EntityRef;
use kiln_ir::package::{Abi, ObjectEntry};
use kiln_ir::{ParamKind, ShapeExpr, Target};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Why a launch was refused. Nothing was issued.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// No kernel of that name in the package.
    #[error("no kernel `{kernel}` in the package; kernels: {}", available.join(", "))]
    UnknownKernel {
        /// The name asked for.
        kernel: String,
        /// The package's kernels.
        available: Vec<String>,
    },
    /// No such variant built for the arch.
    #[error("{kernel}: no variant `{variant}` built for {arch}; built: {}", available.join(", "))]
    UnknownVariant {
        /// Kernel.
        kernel: String,
        /// The variant asked for.
        variant: String,
        /// Arch.
        arch: String,
        /// Variants built for the arch.
        available: Vec<String>,
    },
    /// An argument the ABI has no parameter for.
    #[error("{kernel}: no parameter `{name}`; parameters: {params}")]
    UnknownArg {
        /// `kernel/variant`.
        kernel: String,
        /// The argument's name.
        name: String,
        /// The ABI.
        params: String,
    },
    /// The same argument twice.
    #[error("{kernel}: argument `{name}` given twice")]
    DuplicateArg {
        /// `kernel/variant`.
        kernel: String,
        /// The name.
        name: String,
    },
    /// A parameter without an argument.
    #[error("{kernel}: missing argument `{param}` (expected {expected})")]
    MissingArg {
        /// `kernel/variant`.
        kernel: String,
        /// The parameter.
        param: String,
        /// What it takes.
        expected: String,
    },
    /// An argument for a workspace parameter.
    #[error("{kernel}: `{param}` is a workspace buffer: the runtime allocates it, do not pass it")]
    WorkspaceGiven {
        /// `kernel/variant`.
        kernel: String,
        /// The parameter.
        param: String,
    },
    /// A buffer where a scalar belongs or the other way round, or a wrong type.
    #[error("{kernel}: argument `{param}`: expected {expected}, found {found}")]
    WrongType {
        /// `kernel/variant`.
        kernel: String,
        /// The parameter.
        param: String,
        /// What the ABI says.
        expected: String,
        /// What was passed.
        found: String,
    },
    /// A buffer shorter than its length rule.
    #[error(
        "{kernel}: buffer `{param}` has {found} elements, needs at least {needed} ({rule} with {values})"
    )]
    TooShort {
        /// `kernel/variant`.
        kernel: String,
        /// The parameter.
        param: String,
        /// The length rule as text.
        rule: String,
        /// The scalars it used.
        values: String,
        /// Elements needed.
        needed: u64,
        /// Elements the buffer has.
        found: usize,
    },
    /// A buffer of another device.
    #[error("{kernel}: buffer `{param}` lives on {found}, the kernel runs on {expected}")]
    ForeignBuffer {
        /// `kernel/variant`.
        kernel: String,
        /// The parameter.
        param: String,
        /// This runtime's device.
        expected: String,
        /// The buffer's device.
        found: String,
    },
    /// A shape rule that cannot be evaluated (a factor that is not a non-negative scalar).
    #[error("{kernel}: {what} rule {rule}: {detail}")]
    BadShape {
        /// `kernel/variant`.
        kernel: String,
        /// Which rule (`grid`, `length of x`, ...).
        what: String,
        /// The rule as text.
        rule: String,
        /// What is wrong.
        detail: String,
    },
    /// A grid with a zero or too large dimension.
    #[error("{kernel}: grid {grid:?} ({rule}) cannot launch: each dimension must be 1..=2^32-1")]
    BadGrid {
        /// `kernel/variant`.
        kernel: String,
        /// The grid as evaluated.
        grid: [u64; 3],
        /// The grid rule as text.
        rule: String,
    },
}

/// One named argument.
#[derive(Clone, Debug)]
pub enum ArgValue<'a> {
    /// A device buffer.
    Buffer(&'a Buffer),
    /// A typed scalar.
    Scalar(Scalar),
}

/// Named arguments of a launch.
#[derive(Clone, Debug, Default)]
pub struct Args<'a> {
    items: Vec<(Cow<'a, str>, ArgValue<'a>)>,
}

impl<'a> Args<'a> {
    /// No arguments.
    pub fn new() -> Args<'a> {
        Args::default()
    }

    /// Adds a buffer argument.
    pub fn buffer(mut self, name: impl Into<Cow<'a, str>>, b: &'a Buffer) -> Args<'a> {
        self.items.push((name.into(), ArgValue::Buffer(b)));
        self
    }

    /// Adds a scalar argument (its Rust type is its ABI type: `5u32` is a `u32`).
    pub fn scalar(mut self, name: impl Into<Cow<'a, str>>, v: impl Into<Scalar>) -> Args<'a> {
        self.items.push((name.into(), ArgValue::Scalar(v.into())));
        self
    }

    /// The argument named `name`.
    pub fn get(&self, name: &str) -> Option<&ArgValue<'a>> {
        self.items.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// The scalar argument named `name`.
    pub fn scalar_value(&self, name: &str) -> Option<Scalar> {
        match self.get(name)? {
            ArgValue::Scalar(s) => Some(*s),
            ArgValue::Buffer(_) => None,
        }
    }

    /// Every argument, in the order given.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ArgValue<'a>)> {
        self.items.iter().map(|(n, v)| (n.as_ref(), v))
    }
}

/// What a launch ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launched {
    /// The variant the router chose.
    pub variant: String,
    /// The grid, in workgroups.
    pub grid: [u32; 3],
}

/// A code object loaded on the device, with its workspace buffers.
pub(crate) struct LoadedKernel {
    /// `kernel/variant`.
    pub label: Arc<str>,
    pub variant: Arc<str>,
    pub object: PackageObject,
    pub code: Code,
    pub param_names: Arc<[String]>,
    workspaces: Mutex<BTreeMap<usize, Buffer>>,
}

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
        let arch = resolve_arch(device, package)?;
        let mut kernels: BTreeMap<String, KernelSlot> = BTreeMap::new();
        for k in package.kernels() {
            let router =
                Router::new(package.routes(k).expect("a kernel of the package has routes"));
            kernels.insert(k.to_string(), KernelSlot { router, variants: BTreeMap::new() });
        }
        let mut any = false;
        for obj in package.objects().iter().filter(|o| o.entry.arch == arch) {
            any = true;
            let code = device.load_object(obj, &arch)?;
            let names: Vec<String> = obj.entry.abi.params.iter().map(|p| p.name.clone()).collect();
            let lk = LoadedKernel {
                label: format!("{}/{}", obj.entry.kernel, obj.entry.variant).into(),
                variant: obj.entry.variant.as_str().into(),
                object: obj.clone(),
                code,
                param_names: names.into(),
                workspaces: Mutex::new(BTreeMap::new()),
            };
            let slot = kernels.get_mut(&obj.entry.kernel).expect("every kernel has a slot");
            slot.variants.insert(obj.entry.variant.clone(), Arc::new(lk));
        }
        if !any {
            let available = package
                .objects()
                .iter()
                .map(|o| format!("{}/{} for {}", o.entry.kernel, o.entry.variant, o.entry.arch))
                .collect();
            return Err(LoadError::NoObjectsForArch { arch, available }.into());
        }
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

    /// Every kernel of the package.
    pub fn kernels(&self) -> Vec<&str> {
        self.kernels.keys().map(String::as_str).collect()
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

/// `ceil(rows*cols/32)+1`, with the ABI's parameter names.
pub(crate) fn shape_text(e: &ShapeExpr, abi: &Abi) -> String {
    let mut s: Vec<String> = e
        .factors
        .iter()
        .map(|p| abi.params.get(p.index()).map(|p| p.name.clone()).unwrap_or(format!("{p}")))
        .collect();
    if e.num != 1 || s.is_empty() {
        s.push(e.num.to_string());
    }
    let mut t = s.join("*");
    if e.den > 1 {
        t = format!("ceil({t}/{})", e.den);
    }
    if e.add != 0 {
        t = format!("{t}+{}", e.add);
    }
    t
}

/// Evaluates a shape rule with the call's scalars. `what` names the rule in an error (built only
/// then: this runs on every launch).
fn eval_shape(
    e: &ShapeExpr,
    abi: &Abi,
    scalars: &[Option<Scalar>],
    who: &str,
    what: &dyn Fn() -> String,
) -> Result<u64, LaunchError> {
    let bad = |detail: String| LaunchError::BadShape {
        kernel: who.to_string(),
        what: what(),
        rule: shape_text(e, abi),
        detail,
    };
    let mut product: u64 = 1;
    for f in &e.factors {
        let i = f.index();
        let p = abi.params.get(i).ok_or_else(|| bad(format!("parameter #{i} does not exist")))?;
        let v = scalars
            .get(i)
            .copied()
            .flatten()
            .ok_or_else(|| bad(format!("`{}` is not a scalar parameter", p.name)))?;
        let n = v
            .as_shape()
            .ok_or_else(|| bad(format!("{}={v} is not a non-negative integer", p.name)))?;
        product = product.checked_mul(n).ok_or_else(|| bad("overflows u64".into()))?;
    }
    let scaled = product.checked_mul(e.num).ok_or_else(|| bad("overflows u64".into()))?;
    scaled.div_ceil(e.den.max(1)).checked_add(e.add).ok_or_else(|| bad("overflows u64".into()))
}

/// `n=100, k=4`: the scalars a shape rule reads, for messages.
fn shape_values(e: &ShapeExpr, abi: &Abi, scalars: &[Option<Scalar>]) -> String {
    let v: Vec<String> = e
        .factors
        .iter()
        .filter_map(|f| {
            Some(format!(
                "{}={}",
                abi.params.get(f.index())?.name,
                scalars.get(f.index())?.as_ref()?
            ))
        })
        .collect();
    if v.is_empty() {
        "no scalars".into()
    } else {
        v.join(", ")
    }
}

/// Checks the arguments against the object's ABI and builds the launch.
fn bind(
    device: &Device,
    lk: &Arc<LoadedKernel>,
    args: &Args<'_>,
) -> Result<PreparedLaunch, RuntimeError> {
    let e = &lk.object.entry;
    let who: &str = &lk.label;
    let abi = &e.abi;

    // Names first: duplicates and unknown names.
    for (i, (name, _)) in args.items.iter().enumerate() {
        if args.items[..i].iter().any(|(n, _)| n == name) {
            return Err(LaunchError::DuplicateArg {
                kernel: who.to_string(),
                name: name.to_string(),
            }
            .into());
        }
        if !abi.params.iter().any(|p| &p.name == name) {
            return Err(LaunchError::UnknownArg {
                kernel: who.to_string(),
                name: name.to_string(),
                params: describe_params(abi),
            }
            .into());
        }
    }

    // Types, parameter by parameter; scalars are collected for the shape rules.
    let mut scalars: Vec<Option<Scalar>> = vec![None; abi.params.len()];
    let mut buffers: Vec<Option<&Buffer>> = vec![None; abi.params.len()];
    for (i, p) in abi.params.iter().enumerate() {
        let given = args.get(&p.name);
        if p.workspace {
            if given.is_some() {
                return Err(LaunchError::WorkspaceGiven {
                    kernel: who.to_string(),
                    param: p.name.clone(),
                }
                .into());
            }
            continue;
        }
        // Messages are built only for an error: this runs on every launch.
        let expected = || match &p.kind {
            ParamKind::Buffer { elem, .. } => format!("a {elem} buffer"),
            ParamKind::Scalar(t) => format!("a {t} scalar"),
        };
        let Some(given) = given else {
            return Err(LaunchError::MissingArg {
                kernel: who.to_string(),
                param: p.name.clone(),
                expected: expected(),
            }
            .into());
        };
        let wrong = |found: String| LaunchError::WrongType {
            kernel: who.to_string(),
            param: p.name.clone(),
            expected: expected(),
            found,
        };
        match (&p.kind, given) {
            (ParamKind::Buffer { elem, .. }, ArgValue::Buffer(b)) => {
                if b.device().id() != device.id() {
                    return Err(LaunchError::ForeignBuffer {
                        kernel: who.to_string(),
                        param: p.name.clone(),
                        expected: format!("{device:?}"),
                        found: format!("{:?}", b.device()),
                    }
                    .into());
                }
                if b.dtype() != *elem {
                    return Err(wrong(format!("a {} buffer", b.dtype())).into());
                }
                buffers[i] = Some(b);
            }
            (ParamKind::Scalar(t), ArgValue::Scalar(s)) => {
                if s.ty() != *t {
                    return Err(wrong(format!("a {} scalar ({s:?})", s.ty())).into());
                }
                scalars[i] = Some(*s);
            }
            (_, ArgValue::Buffer(b)) => {
                return Err(wrong(format!("a {} buffer", b.dtype())).into());
            }
            (_, ArgValue::Scalar(s)) => return Err(wrong(format!("a scalar ({s:?})")).into()),
        }
    }

    // Lengths against the shape rules.
    for (i, p) in abi.params.iter().enumerate() {
        if let (ParamKind::Buffer { len: Some(rule), .. }, Some(b)) = (&p.kind, buffers[i]) {
            let what = || format!("length of `{}`", p.name);
            let needed = eval_shape(rule, abi, &scalars, who, &what)?;
            if (b.len() as u64) < needed {
                return Err(LaunchError::TooShort {
                    kernel: who.to_string(),
                    param: p.name.clone(),
                    rule: shape_text(rule, abi),
                    values: shape_values(rule, abi, &scalars),
                    needed,
                    found: b.len(),
                }
                .into());
            }
        }
    }

    // Grid.
    let mut grid64 = [0u64; 3];
    for (d, rule) in e.grid.iter().enumerate() {
        grid64[d] = eval_shape(rule, abi, &scalars, who, &|| "grid".to_string())?;
    }
    let rule_text = || e.grid.iter().map(|r| shape_text(r, abi)).collect::<Vec<_>>().join(", ");
    if grid64.iter().any(|&g| g == 0 || g > u32::MAX as u64) {
        return Err(LaunchError::BadGrid {
            kernel: who.to_string(),
            grid: grid64,
            rule: rule_text(),
        }
        .into());
    }
    let grid = grid64.map(|g| g as u32);

    // Workspaces: one per loaded kernel, zero-filled, grown (fresh and zeroed) when a call
    // needs more than it has.
    let mut out = Vec::with_capacity(abi.params.len());
    let mut ws = lk.workspaces.lock().unwrap_or_else(|p| p.into_inner());
    for (i, p) in abi.params.iter().enumerate() {
        out.push(match (&p.kind, p.workspace) {
            (ParamKind::Buffer { elem, len, .. }, true) => {
                let needed = match len {
                    Some(rule) => {
                        let what = || format!("length of workspace `{}`", p.name);
                        eval_shape(rule, abi, &scalars, who, &what)?
                    }
                    None => 1,
                };
                let fits = ws.get(&i).is_some_and(|b| b.len() as u64 >= needed);
                if !fits {
                    ws.insert(i, device.alloc(*elem, needed.max(1) as usize)?);
                }
                KernelArg::Buffer(ws[&i].memory().clone())
            }
            (ParamKind::Buffer { .. }, false) => {
                KernelArg::Buffer(buffers[i].expect("checked above").memory().clone())
            }
            (ParamKind::Scalar(_), _) => KernelArg::Scalar(scalars[i].expect("checked above")),
        });
    }
    Ok(PreparedLaunch {
        label: lk.label.clone(),
        variant: lk.variant.clone(),
        param_names: lk.param_names.clone(),
        code: lk.code.clone(),
        grid,
        block: e.workgroup_size,
        args: out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{self, testgen, PackageDir};
    use crate::{CpuOptions, DeviceError, Overrides};
    use kiln_ir::package::{Admission, KernelRoutes, VariantRoute};
    use kiln_ir::ScalarType;
    use rand::Rng;

    fn runtime(
        dev: &Device,
        kernels: &[testing::TestKernel],
    ) -> Option<(tempfile::TempDir, Runtime)> {
        let (dir, pkg) = testing::package_for(dev, kernels)?;
        Some((dir, Runtime::load_with(dev, &pkg, Overrides::none()).unwrap()))
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

    testgen!(
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

    #[test]
    fn the_cpu_device_refuses_aliased_buffers() {
        let dev = Device::cpu(CpuOptions::default());
        let Some((_d, rt)) = runtime(&dev, &[testing::scale()]) else { return };
        let x = dev.upload(&random_f32(64)).unwrap();
        let e = rt
            .launch(
                "scale",
                &Args::new()
                    .buffer("x", &x)
                    .buffer("out", &x)
                    .scalar("n", 64u32)
                    .scalar("s", 1.0f32),
            )
            .unwrap_err();
        assert!(matches!(e, RuntimeError::Device(DeviceError::Aliased { .. })), "{e}");
        assert!(e.to_string().contains("cannot pass one buffer as both `x` and `out`"), "{e}");
    }
}
