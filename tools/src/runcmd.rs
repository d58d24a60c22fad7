//! `kiln run`, `kiln parity` and `kiln bench`: the runtime side of the command line (no LLVM).

use anyhow::{anyhow, bail, Context, Result};
use kiln_ir::interp;
use kiln_ir::package::ObjectEntry;
use kiln_ir::{Access, EntityRef, Kernel, ParamKind, ScalarType};
use kiln_runtime::{
    Args, Buffer, CpuOptions, DecodeGraph, Device, NodeArgs, Overrides, Package, Runtime, Scalar,
};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod copy_parity;
mod npy;

/// Arguments of `kiln run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// Kernel family.
    kernel: String,
    /// Force a variant (default: the router's choice).
    #[arg(long)]
    variant: Option<String>,
    /// cpu, cuda or hip.
    #[arg(long, default_value = "cpu")]
    device: String,
    /// The arch the cpu device emulates (default: the package's first wave-32 arch).
    #[arg(long)]
    arch: Option<String>,
    /// Package directory.
    #[arg(long, default_value = "dist")]
    package: PathBuf,
    /// Buffer arguments, NAME=FILE.npy.
    #[arg(long = "arg")]
    args: Vec<String>,
    /// Scalar arguments, NAME=VALUE.
    #[arg(long = "shape")]
    shapes: Vec<String>,
    /// Output directory for the written buffers (NAME.npy).
    #[arg(long)]
    out: PathBuf,
}

/// Arguments of `kiln parity`.
#[derive(clap::Args)]
pub struct ParityArgs {
    /// cpu, cuda or hip.
    #[arg(long, default_value = "cpu")]
    device: String,
    /// The arch the cpu device emulates.
    #[arg(long)]
    arch: Option<String>,
    /// Package directory.
    #[arg(long, default_value = "dist")]
    package: PathBuf,
    /// Only these families (comma separated).
    #[arg(long, value_delimiter = ',')]
    kernel: Vec<String>,
    /// Seed of the random inputs (default: fresh each run, printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Also the real decode sizes (e.g. 8 x 248,320 logits).
    #[arg(long)]
    large: bool,
}

/// Arguments of `kiln bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// Only these cases or kernels (comma separated).
    #[arg(long, value_delimiter = ',')]
    kernel: Vec<String>,
    /// Write the results as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Package directory.
    #[arg(long, default_value = "dist")]
    package: PathBuf,
    /// cuda (default) or hip; cpu runs but its times mean nothing.
    #[arg(long, default_value = "cuda")]
    device: String,
    /// Copy bandwidth of the device in GB/s, for the floor (H200: ~4,200 measured).
    #[arg(long, default_value_t = 4200.0)]
    bandwidth: f64,
    /// Graph replays per sample.
    #[arg(long, default_value_t = 20)]
    replays: usize,
}

fn open_device(kind: &str, arch: Option<String>) -> Result<Device> {
    Ok(match kind {
        "cpu" => Device::cpu(CpuOptions { arch, ..CpuOptions::default() }),
        "cuda" => Device::cuda(0)?,
        "hip" => Device::hip(0)?,
        other => bail!("unknown device `{other}`: expected cpu, cuda or hip"),
    })
}

fn scalar_from_str(ty: ScalarType, s: &str) -> Result<Scalar> {
    let bad = || anyhow!("`{s}` is not a {ty}");
    let bits = if ty.is_float() {
        let v: f64 = s.parse().map_err(|_| bad())?;
        match ty {
            ScalarType::F64 => v.to_bits(),
            ScalarType::F32 => (v as f32).to_bits() as u64,
            ScalarType::F16 => half::f16::from_f64(v).to_bits() as u64,
            _ => half::bf16::from_f64(v).to_bits() as u64,
        }
    } else if ty.is_signed() {
        let v: i64 = s.parse().map_err(|_| bad())?;
        (v as u64) & mask(ty)
    } else {
        let v: u64 = s.parse().map_err(|_| bad())?;
        if v & !mask(ty) != 0 {
            return Err(bad());
        }
        v
    };
    Ok(Scalar::from_bits(ty, bits))
}

fn mask(ty: ScalarType) -> u64 {
    if ty.bits() >= 64 {
        u64::MAX
    } else {
        (1u64 << ty.bits()) - 1
    }
}

fn entry_for<'a>(pkg: &'a Package, kernel: &str, arch: &str) -> Result<&'a ObjectEntry> {
    pkg.manifest().objects.iter().find(|o| o.kernel == kernel && o.arch == arch).ok_or_else(|| {
        anyhow!(
            "kernel `{kernel}` has no object for {arch} in the package (kernels: {})",
            pkg.kernels().join(", ")
        )
    })
}

/// A buffer's length rule evaluated with scalar arguments given by name (`name_of` names a param).
fn rule_len<'a>(
    kind: &ParamKind,
    scalars: &BTreeMap<String, u64>,
    name_of: impl Fn(kiln_ir::Param) -> &'a str,
) -> Option<u64> {
    let ParamKind::Buffer { len: Some(e), .. } = kind else { return None };
    // An overflowing length is one no allocation meets: the launch refuses it.
    Some(e.eval(|p| scalars.get(name_of(p)).copied().unwrap_or(0)).unwrap_or(u64::MAX))
}

fn len_of(kind: &ParamKind, scalars: &BTreeMap<String, u64>, abi: &ObjectEntry) -> Option<u64> {
    rule_len(kind, scalars, |p| abi.abi.params[p.index()].name.as_str())
}

/// `kiln run`.
pub fn run(a: RunArgs) -> Result<()> {
    let pkg = Package::open(&a.package)?;
    let dev = open_device(&a.device, a.arch.clone())?;
    let rt = Runtime::load(&dev, &pkg)?;
    let entry = entry_for(&pkg, &a.kernel, rt.arch())?.clone();
    let given: BTreeMap<&str, &str> = a
        .args
        .iter()
        .chain(&a.shapes)
        .map(|s| s.split_once('=').ok_or_else(|| anyhow!("`{s}`: expected NAME=VALUE")))
        .collect::<Result<_>>()?;
    for name in given.keys() {
        if !entry.abi.params.iter().any(|p| p.name == *name && !p.workspace) {
            let names: Vec<&str> =
                entry.abi.params.iter().filter(|p| !p.workspace).map(|p| p.name.as_str()).collect();
            bail!("{} has no parameter `{name}` (parameters: {})", a.kernel, names.join(", "));
        }
    }
    let mut scalars = BTreeMap::new();
    let mut scalar_vals = vec![];
    for p in &entry.abi.params {
        if let ParamKind::Scalar(ty) = p.kind {
            let s = given
                .get(p.name.as_str())
                .ok_or_else(|| anyhow!("missing --shape {}=..", p.name))?;
            let v = scalar_from_str(ty, s).with_context(|| format!("--shape {}", p.name))?;
            scalars.insert(p.name.clone(), v.as_shape().unwrap_or(0));
            scalar_vals.push((p.name.clone(), v));
        }
    }
    let mut bufs: Vec<(String, Buffer, bool)> = vec![];
    for p in entry.abi.params.iter().filter(|p| !p.workspace) {
        let ParamKind::Buffer { elem, access, .. } = p.kind.clone() else { continue };
        let buf = if let Some(file) = given.get(p.name.as_str()) {
            let (ty, bytes) = npy::read(Path::new(file))?;
            if ty != elem {
                bail!("--arg {}={file}: expected elements of {elem}, found {ty}", p.name);
            }
            let b = dev.alloc(elem, bytes.len() / elem.bytes() as usize)?;
            b.write_bytes(&bytes)?;
            b
        } else if access == Access::Write {
            let n = len_of(&p.kind, &scalars, &entry).ok_or_else(|| {
                anyhow!(
                    "output `{}` has no length rule: pass --arg {}=FILE.npy to size it",
                    p.name,
                    p.name
                )
            })?;
            dev.alloc(elem, n as usize)?
        } else {
            bail!("missing --arg {}=FILE.npy (an input of {})", p.name, a.kernel);
        };
        bufs.push((p.name.clone(), buf, access.writes()));
    }
    let mut args = Args::new();
    for (n, b, _) in &bufs {
        args = args.buffer(n.clone(), b);
    }
    for (n, v) in &scalar_vals {
        args = args.scalar(n.clone(), *v);
    }
    let launched = match &a.variant {
        Some(v) => rt.launch_variant(&a.kernel, v, &args)?,
        None => rt.launch(&a.kernel, &args)?,
    };
    rt.synchronize()?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    for (n, b, writes) in &bufs {
        if *writes {
            let p = a.out.join(format!("{n}.npy"));
            npy::write_atomic(&p, b.dtype(), &b.read_bytes()?)?;
            println!("wrote {}", p.display());
        }
    }
    println!(
        "ran {} variant {} on {} ({}), grid {:?}",
        a.kernel,
        launched.variant,
        dev.name(),
        rt.arch(),
        launched.grid
    );
    Ok(())
}

/// Compares outputs: floats bit for bit except that every NaN equals every NaN (NaN payloads
/// differ between x86 and GPUs and are not part of the contract); everything else byte for byte.
/// Returns the first mismatching element.
fn first_mismatch(ty: ScalarType, a: &[u8], b: &[u8]) -> Option<usize> {
    let w = ty.bytes() as usize;
    if a.len() != b.len() {
        return Some(a.len().min(b.len()) / w);
    }
    for (i, (x, y)) in a.chunks(w).zip(b.chunks(w)).enumerate() {
        if x == y {
            continue;
        }
        let both_nan = is_nan(ty, x) && is_nan(ty, y);
        if !both_nan {
            return Some(i);
        }
    }
    None
}

/// True when `v` (little-endian) is a float NaN: all exponent bits set, mantissa not zero.
fn is_nan(ty: ScalarType, v: &[u8]) -> bool {
    let (exp_bits, man_bits) = match ty {
        ScalarType::F16 => (5, 10),
        ScalarType::BF16 => (8, 7),
        ScalarType::F32 => (8, 23),
        ScalarType::F64 => (11, 52),
        _ => return false,
    };
    let mut b = [0u8; 8];
    b[..v.len()].copy_from_slice(v);
    let bits = u64::from_le_bytes(b);
    let exp = (bits >> man_bits) & ((1 << exp_bits) - 1);
    exp == (1 << exp_bits) - 1 && bits & ((1 << man_bits) - 1) != 0
}

type Outputs = BTreeMap<String, (ScalarType, Vec<u8>)>;

/// Runs a kernel's IR in the interpreter on a case; returns the written buffers.
fn interp_case(k: &Kernel, case: &kiln_specs::cases::Case, poison: u8) -> Result<Outputs> {
    let scalars: BTreeMap<String, u64> =
        case.scalars.iter().map(|(n, _, b)| (n.clone(), *b)).collect();
    let mut args = vec![];
    let mut outs = vec![];
    for (p, d) in k.params.iter() {
        match &d.kind {
            ParamKind::Scalar(_) => {
                let v =
                    scalars.get(&d.name).ok_or_else(|| anyhow!("case lacks scalar {}", d.name))?;
                args.push(interp::Arg::Scalar(*v));
            }
            ParamKind::Buffer { elem, access, .. } => {
                if let Some((_, _, bytes)) = case.inputs.iter().find(|i| i.0 == d.name) {
                    args.push(interp::Arg::Buffer(bytes.clone()));
                } else {
                    let n = rule_len(&d.kind, &scalars, |q| k.params[q].name.as_str())
                        .ok_or_else(|| anyhow!("{}: no length rule", d.name))?;
                    let fill = if d.workspace { 0 } else { poison };
                    args.push(interp::Arg::Buffer(vec![fill; (n * elem.bytes() as u64) as usize]));
                    if access.writes() && !d.workspace {
                        outs.push((p.index(), d.name.clone(), *elem));
                    }
                }
            }
        }
    }
    interp::run(k, &mut args, &interp::RunOptions::default())
        .map_err(|e| anyhow!("interpreter: {e}"))?;
    let mut m = Outputs::new();
    for (i, name, ty) in outs {
        let interp::Arg::Buffer(b) = &args[i] else { unreachable!() };
        m.insert(name, (ty, b.clone()));
    }
    Ok(m)
}

/// Runs a variant on the device through the runtime; returns the written buffers.
fn device_case(
    rt: &Runtime,
    dev: &Device,
    kernel: &str,
    variant: &str,
    entry: &ObjectEntry,
    case: &kiln_specs::cases::Case,
    poison: u8,
) -> Result<Outputs> {
    let scalars: BTreeMap<String, u64> =
        case.scalars.iter().map(|(n, _, b)| (n.clone(), *b)).collect();
    let mut bufs: Vec<(String, Buffer, bool)> = vec![];
    for p in entry.abi.params.iter().filter(|p| !p.workspace) {
        let ParamKind::Buffer { elem, access, .. } = &p.kind else { continue };
        let b = if let Some((_, _, bytes)) = case.inputs.iter().find(|i| i.0 == p.name) {
            let b = dev.alloc(*elem, bytes.len() / elem.bytes() as usize)?;
            b.write_bytes(bytes)?;
            b
        } else {
            let n = len_of(&p.kind, &scalars, entry)
                .ok_or_else(|| anyhow!("{}: no length rule", p.name))?;
            let b = dev.alloc(*elem, n as usize)?;
            b.write_bytes(&vec![poison; b.bytes()])?;
            b
        };
        bufs.push((p.name.clone(), b, access.writes()));
    }
    let mut args = Args::new();
    for (n, b, _) in &bufs {
        args = args.buffer(n.clone(), b);
    }
    for (n, ty, bits) in &case.scalars {
        args = args.scalar(n.clone(), Scalar::from_bits(*ty, *bits));
    }
    rt.launch_variant(kernel, variant, &args)?;
    rt.synchronize()?;
    let mut m = Outputs::new();
    for (n, b, w) in bufs {
        if w {
            m.insert(n, (b.dtype(), b.read_bytes()?));
        }
    }
    Ok(m)
}

fn compare(what: &str, a: &Outputs, b: &Outputs) -> Result<(), String> {
    for (name, (ty, x)) in a {
        let Some((_, y)) = b.get(name) else {
            return Err(format!("{what}: output {name} missing"));
        };
        if let Some(i) = first_mismatch(*ty, x, y) {
            let w = ty.bytes() as usize;
            let show = |v: &[u8]| {
                v.get(i * w..(i + 1) * w).map(|s| format!("{s:02x?}")).unwrap_or_default()
            };
            return Err(format!("{what}: output {name}[{i}] differs: {} vs {}", show(x), show(y)));
        }
    }
    Ok(())
}

/// `kiln parity`.
pub fn parity(a: ParityArgs) -> Result<()> {
    let pkg = Package::open(&a.package)?;
    let dev = open_device(&a.device, a.arch.clone())?;
    let rt = Runtime::load_with(&dev, &pkg, Overrides::none())?;
    let arch = rt.arch().to_string();
    let seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    println!("parity on {} ({arch}), package {}, seed {seed}", dev.name(), a.package.display());
    let on_cpu = a.device == "cpu";
    let (mut passed, mut failed, mut skipped) = (0usize, 0usize, 0usize);
    for kernel in rt.kernels() {
        if !a.kernel.is_empty() && !a.kernel.iter().any(|k| k == kernel) {
            continue;
        }
        let Some(routes) = pkg.routes(kernel) else { continue };
        if kernel == copy_parity::KERNEL {
            for case in copy_parity::cases(seed, a.large) {
                for v in rt.variants(kernel) {
                    let obj = pkg.find(kernel, v, &arch).expect("listed variant exists");
                    match copy_parity::check(&rt, &dev, v, obj.ir(), &case) {
                        Ok(()) => {
                            passed += 1;
                            println!("ok   {kernel}/{v} [{}]", case.name);
                        }
                        Err(e) => {
                            failed += 1;
                            println!("FAIL {kernel}/{v} [{}]: {e}", case.name);
                        }
                    }
                }
            }
            continue;
        }
        let cases = kiln_specs::cases::cases(kernel, seed, a.large);
        if cases.is_empty() {
            println!("SKIP {kernel}: no generic parity cases (its own tests cover it)");
            skipped += 1;
            continue;
        }
        let variants = rt.variants(kernel).into_iter().map(String::from).collect::<Vec<_>>();
        let base_obj = pkg
            .find(kernel, &routes.baseline, &arch)
            .ok_or_else(|| anyhow!("{kernel}: no baseline object for {arch}"))?;
        for case in &cases {
            let reference = match interp_case(base_obj.ir(), case, 0xA5) {
                Ok(r) => r,
                Err(e) => {
                    println!("FAIL {kernel} baseline [{}]: {e}", case.name);
                    failed += 1;
                    continue;
                }
            };
            for v in &variants {
                let obj = pkg.find(kernel, v, &arch).expect("listed variant exists");
                let entry = &obj.entry;
                let check = || -> Result<(), String> {
                    let iv = interp_case(obj.ir(), case, 0xA5).map_err(|e| e.to_string())?;
                    compare("interpreter: variant vs baseline", &reference, &iv)?;
                    let d1 = device_case(&rt, &dev, kernel, v, entry, case, 0xA5)
                        .map_err(|e| e.to_string())?;
                    compare("device vs interpreter", &iv, &d1)?;
                    if !on_cpu {
                        // A second poison shows any element the device left unwritten.
                        let d2 = device_case(&rt, &dev, kernel, v, entry, case, 0x5A)
                            .map_err(|e| e.to_string())?;
                        compare("device, second poison (unwritten output?)", &iv, &d2)?;
                    }
                    Ok(())
                };
                match check() {
                    Ok(()) => {
                        passed += 1;
                        println!("ok   {kernel}/{v} [{}]", case.name);
                    }
                    Err(e) => {
                        failed += 1;
                        println!("FAIL {kernel}/{v} [{}]: {e}", case.name);
                    }
                }
            }
        }
    }
    // The summary is the last line (DESIGN.md section 8): scripts read it.
    if skipped > 0 {
        println!("({skipped} kernel(s) without generic cases skipped)");
    }
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        bail!("{failed} parity checks failed (seed {seed})");
    }
    Ok(())
}

struct BenchCase {
    name: &'static str,
    kernel: &'static str,
    scalars: Vec<(&'static str, Scalar)>,
    /// (name, type, elements)
    inputs: Vec<(&'static str, ScalarType, usize)>,
    bytes: u64,
}

fn bench_cases() -> Vec<BenchCase> {
    let v = 248_320usize;
    let u = |x: u32| Scalar::from(x);
    vec![
        BenchCase {
            name: "argmax_t1",
            kernel: "argmax_rows",
            scalars: vec![("rows", u(1)), ("n", u(v as u32))],
            inputs: vec![("logits", ScalarType::F32, v)],
            bytes: (v * 4 + 4) as u64,
        },
        BenchCase {
            name: "argmax_t8",
            kernel: "argmax_rows",
            scalars: vec![("rows", u(8)), ("n", u(v as u32))],
            inputs: vec![("logits", ScalarType::F32, 8 * v)],
            bytes: (8 * v * 4 + 32) as u64,
        },
        BenchCase {
            name: "row_top_prob_t1",
            kernel: "row_top_prob",
            scalars: vec![("rows", u(1)), ("n", u(v as u32))],
            inputs: vec![("logits", ScalarType::F32, v)],
            bytes: (v * 4 + 4) as u64,
        },
        BenchCase {
            name: "quantize_q8_0_t1_k4096",
            kernel: "quantize_q8_0_f32",
            scalars: vec![("n", u(4096))],
            inputs: vec![("x", ScalarType::F32, 4096)],
            bytes: 4096 * 4 + 128 * 34,
        },
        BenchCase {
            name: "rmsnorm_t8_d4096",
            kernel: "rmsnorm_f32",
            scalars: vec![("rows", u(8)), ("n", u(4096)), ("eps", Scalar::from(1e-6f32))],
            inputs: vec![("x", ScalarType::F32, 8 * 4096), ("weight", ScalarType::F32, 4096)],
            bytes: 8 * 4096 * 4 * 2 + 4096 * 4,
        },
    ]
}

fn random_bytes(ty: ScalarType, n: usize, rng: &mut kiln_specs::cases::Rng) -> Vec<u8> {
    match ty {
        ScalarType::F32 => (0..n).flat_map(|_| rng.normal(3.0).to_le_bytes()).collect(),
        ScalarType::F16 => {
            (0..n).flat_map(|_| half::f16::from_f32(rng.normal(1.0)).to_le_bytes()).collect()
        }
        _ => (0..n * ty.bytes() as usize).map(|_| rng.next_u64() as u8).collect(),
    }
}

/// `kiln bench`.
pub fn bench(a: BenchArgs) -> Result<()> {
    let pkg = Package::open(&a.package)?;
    let dev = open_device(&a.device, None)?;
    let probe = Runtime::load_with(&dev, &pkg, Overrides::none())?;
    let arch = probe.arch().to_string();
    let rotate_bytes: u64 = 120 << 20;
    let mut rng = kiln_specs::cases::Rng::new(0x6b696c6e);
    let mut rows = vec![];
    let mut cases_json = serde_json::Map::new();
    for c in bench_cases() {
        if !a.kernel.is_empty() && !a.kernel.iter().any(|k| k == c.name || k == c.kernel) {
            continue;
        }
        let Some(routes) = pkg.routes(c.kernel) else {
            println!("{}: kernel {} not in the package", c.name, c.kernel);
            continue;
        };
        let in_bytes: u64 = c.inputs.iter().map(|i| (i.2 * i.1.bytes() as usize) as u64).sum();
        let sets = (rotate_bytes.div_ceil(in_bytes) as usize).clamp(8, 4096);
        let mut g = DecodeGraph::new();
        let entry = entry_for(&pkg, c.kernel, &arch)?.clone();
        let scalars: BTreeMap<String, u64> =
            c.scalars.iter().map(|(n, s)| (n.to_string(), s.as_shape().unwrap_or(0))).collect();
        for s in 0..sets {
            for (name, ty, n) in &c.inputs {
                let b = dev.alloc(*ty, *n)?;
                b.write_bytes(&random_bytes(*ty, *n, &mut rng))?;
                g.add_buffer(format!("{name}{s}"), b)?;
            }
            for p in entry.abi.params.iter().filter(|p| !p.workspace) {
                if let ParamKind::Buffer { elem, access: Access::Write, .. } = p.kind {
                    let n = len_of(&p.kind, &scalars, &entry).unwrap_or(1);
                    g.add_buffer(format!("{}{s}", p.name), dev.alloc(elem, n as usize)?)?;
                }
            }
        }
        let mut variants: Vec<String> = vec![routes.baseline.clone()];
        variants.extend(routes.variants.iter().map(|v| v.variant.clone()));
        let mut per_variant = vec![];
        let routed = probe.explain(c.kernel, &{
            let mut args = Args::new();
            for (n, s) in &c.scalars {
                args = args.scalar(*n, *s);
            }
            args
        })?;
        let chosen = routed.chosen()?.to_string();
        for v in &variants {
            if pkg.find(c.kernel, v, &arch).is_none() {
                continue;
            }
            let ov = Overrides::from_vars([(kiln_runtime::route::route_var(c.kernel), v.clone())]);
            let rt = Runtime::load_with(&dev, &pkg, ov)?;
            let mut gv = g.clone();
            for s in 0..sets {
                let mut na = NodeArgs::new();
                for p in entry.abi.params.iter().filter(|p| !p.workspace) {
                    match p.kind {
                        ParamKind::Buffer { .. } => {
                            na = na.buffer(p.name.clone(), format!("{}{s}", p.name))
                        }
                        ParamKind::Scalar(_) => {
                            let (_, sv) = c
                                .scalars
                                .iter()
                                .find(|(n, _)| *n == p.name)
                                .expect("case has the scalar");
                            na = na.scalar(p.name.clone(), *sv);
                        }
                    }
                }
                gv.add_node(&rt, c.kernel, na)?;
            }
            // Eager: every node launched in order, timed with events.
            gv.run(&rt)?;
            rt.synchronize()?;
            let mut eager = vec![];
            for _ in 0..5 {
                let t0 = dev.record_event()?;
                gv.run(&rt)?;
                let t1 = dev.record_event()?;
                eager.push(t0.elapsed_ms(&t1)? * 1e3 / sets as f64);
            }
            eager.sort_by(f64::total_cmp);
            let graph_us = kiln_runtime::bench::graph_us_per_node(&rt, &gv, a.replays, 7, None)?;
            per_variant.push((v.clone(), graph_us, eager[eager.len() / 2]));
        }
        let best = per_variant
            .iter()
            .find(|(v, _, _)| *v == chosen)
            .or(per_variant.first())
            .cloned()
            .ok_or_else(|| anyhow!("{}: no variant built for {arch}", c.name))?;
        let floor_us = c.bytes as f64 / (a.bandwidth * 1e3);
        let gbps = c.bytes as f64 / best.1 / 1e3;
        rows.push(format!(
            "{:<24} {:<9} {:>9.2} {:>9.2} {:>8.2} {:>8.1}  {}",
            c.name,
            best.0,
            best.1,
            best.2,
            floor_us,
            gbps,
            per_variant.iter().map(|(v, g, _)| format!("{v}={g:.2}")).collect::<Vec<_>>().join(" ")
        ));
        let variants_json: serde_json::Map<String, serde_json::Value> = per_variant
            .iter()
            .map(|(v, g, e)| (v.clone(), json!({"graph_us": g, "eager_us": e})))
            .collect();
        cases_json.insert(
            c.name.to_string(),
            json!({
                "kernel": c.kernel, "variant": best.0, "kiln_us": best.1, "eager_us": best.2,
                "bytes": c.bytes, "floor_us": floor_us, "gbps": gbps, "sets": sets,
                "variants": variants_json,
            }),
        );
        println!("{}", rows.last().expect("just pushed"));
    }
    let lc = kiln_runtime::bench::launch_cost(&dev, 200, 50)?;
    println!();
    println!(
        "{:<24} {:<9} {:>9} {:>9} {:>8} {:>8}  per variant (graph us)",
        "case", "variant", "graph us", "eager us", "floor", "GB/s"
    );
    for r in &rows {
        println!("{r}");
    }
    println!(
        "launch cost per node: eager {:.2} us, graph replay {:.2} us, replay with scalar update {:.2} us",
        lc.eager_us_per_node, lc.graph_us_per_node, lc.graph_update_us_per_node
    );
    if let Some(p) = a.json {
        let doc = json!({
            "device": dev.name(),
            "arch": arch,
            "bandwidth_gbps": a.bandwidth,
            "cases": cases_json,
            "launch_cost": {
                "eager_us_per_node": lc.eager_us_per_node,
                "graph_us_per_node": lc.graph_us_per_node,
                "graph_update_us_per_node": lc.graph_update_us_per_node,
                "nodes": lc.nodes,
            },
        });
        let text = serde_json::to_string_pretty(&doc).expect("a JSON value serializes");
        std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_is_recognized_in_every_float_width() {
        assert!(is_nan(ScalarType::F32, &f32::NAN.to_le_bytes()));
        assert!(is_nan(ScalarType::F32, &0xffc0_0001u32.to_le_bytes()));
        assert!(!is_nan(ScalarType::F32, &f32::INFINITY.to_le_bytes()));
        assert!(is_nan(ScalarType::F64, &f64::NAN.to_le_bytes()));
        assert!(!is_nan(ScalarType::F64, &f64::NEG_INFINITY.to_le_bytes()));
        assert!(is_nan(ScalarType::F16, &0x7e00u16.to_le_bytes()));
        assert!(!is_nan(ScalarType::F16, &0x7c00u16.to_le_bytes()));
        assert!(is_nan(ScalarType::BF16, &0xffc1u16.to_le_bytes()));
        assert!(!is_nan(ScalarType::BF16, &0x7f80u16.to_le_bytes()));
        assert!(!is_nan(ScalarType::U32, &u32::MAX.to_le_bytes()));
    }

    #[test]
    fn mismatches_ignore_nan_payloads_only() {
        let a: Vec<u8> = [1.0f32, f32::NAN, 3.0].iter().flat_map(|x| x.to_le_bytes()).collect();
        let mut b = a.clone();
        b[4..8].copy_from_slice(&0xffc0_0000u32.to_le_bytes()); // another NaN
        assert_eq!(first_mismatch(ScalarType::F32, &a, &b), None);
        b[8..12].copy_from_slice(&(-3.0f32).to_le_bytes());
        assert_eq!(first_mismatch(ScalarType::F32, &a, &b), Some(2));
        assert_eq!(first_mismatch(ScalarType::U32, &a, &a[..8]), Some(2));
    }
}
