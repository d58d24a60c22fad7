//! `kiln parity`: every variant of every kernel in a package against the interpreter and its
//! baseline, on the cases its family lists ([`kiln_specs::Parity`]). The family says which
//! harness its cases need; a kernel with no family or no cases fails (a skipped kernel is not a
//! pass).

mod copy_table;

use super::{
    check_known, len_of, load_package, load_package_only, open_device, open_package, rule_len,
};
use anyhow::{anyhow, bail, Result};
use kiln_ir::interp;
use kiln_ir::package::ObjectEntry;
use kiln_ir::{EntityRef, Kernel, ParamKind, ScalarType};
use kiln_runtime::{Args, Buffer, Device, Overrides, Package, Runtime, Scalar};
use kiln_specs::cases::Case;
use kiln_specs::{Parity, WithinFn};
use std::collections::BTreeMap;
use std::path::PathBuf;

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
        ScalarType::I1
        | ScalarType::I8
        | ScalarType::U8
        | ScalarType::I16
        | ScalarType::U16
        | ScalarType::I32
        | ScalarType::U32
        | ScalarType::I64
        | ScalarType::U64 => return false,
    };
    let mut b = [0u8; 8];
    b[..v.len()].copy_from_slice(v);
    let bits = u64::from_le_bytes(b);
    let exp = (bits >> man_bits) & ((1 << exp_bits) - 1);
    exp == (1 << exp_bits) - 1 && bits & ((1 << man_bits) - 1) != 0
}

pub(crate) type Outputs = BTreeMap<String, (ScalarType, Vec<u8>)>;

/// Runs a kernel's IR in the interpreter on a case; returns the written buffers.
pub(crate) fn interp_case(k: &Kernel, case: &Case, poison: u8) -> Result<Outputs> {
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
                    // A read-write buffer (a cache an append updates) is compared after the run.
                    if access.writes() && !d.workspace {
                        outs.push((p.index(), d.name.clone(), *elem));
                    }
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
    case: &Case,
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

/// Every output of `a` against `b` through a family's bounded comparison; what it measured,
/// joined.
fn compare_within(
    what: &str,
    a: &Outputs,
    b: &Outputs,
    case: &Case,
    f: WithinFn,
) -> Result<String, String> {
    let mut measured = vec![];
    for (name, (_, x)) in a {
        let Some((_, y)) = b.get(name) else {
            return Err(format!("{what}: output {name} missing"));
        };
        measured.push(f(case, name, x, y).map_err(|e| format!("{what}: {e}"))?);
    }
    Ok(measured.join("; "))
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
    let pkg = open_package(&a.package)?;
    let dev = open_device(&a.device, a.arch.clone())?;
    // The package's kernels, not only this arch's: a family not built for the arch is reported
    // as not run, never passed over in silence.
    let kernels: Vec<String> = pkg.kernels().into_iter().map(String::from).collect();
    check_known("--kernel", &a.kernel, &kernels, "the package has")?;
    // With --kernel, only those families' objects (a whole PTX package is compiled by the driver
    // at load: tens of seconds on a machine whose JIT cache is cold).
    let rt = if a.kernel.is_empty() {
        load_package(&dev, &pkg, &a.package, Overrides::none())?
    } else {
        let only: Vec<&str> = a.kernel.iter().map(String::as_str).collect();
        load_package_only(&dev, &pkg, &a.package, Overrides::none(), &only)?
    };
    let arch = rt.arch().to_string();
    let seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    println!("parity on {} ({arch}), package {}, seed {seed}", dev.name(), a.package.display());
    let mut tally = Tally::default();
    let target = kiln_ir::Target::by_name(&arch)?;
    let mut not_built = vec![];
    for kernel in &kernels {
        if !a.kernel.is_empty() && !a.kernel.contains(kernel) {
            continue;
        }
        let Some(family) = kiln_specs::family(kernel) else {
            tally.fail(
                kernel,
                "-",
                "-",
                &format!(
                    "not a family of this kiln's library, so it has no parity cases (the \
                     library has: {})",
                    kiln_specs::family_names()
                ),
            );
            continue;
        };
        if !family.builds_for(target) {
            // A family not built for this arch (an op check whose op it lacks, or a family with
            // an arch list): no object here, and nothing to compare.
            not_built.push(kernel.as_str());
            continue;
        }
        let started = std::time::Instant::now();
        let before = (tally.passed, tally.failed, tally.same);
        match family.parity {
            Parity::Buffers(cases) => {
                let cases = cases(&mut kiln_specs::cases::rng_for(kernel, seed), a.large);
                let on_cpu = a.device == "cpu";
                buffer_cases(&rt, &dev, &pkg, kernel, &cases, on_cpu, None, &mut tally)?
            }
            Parity::Within { cases, check } => {
                let cases = cases(&mut kiln_specs::cases::rng_for(kernel, seed), a.large);
                let on_cpu = a.device == "cpu";
                buffer_cases(&rt, &dev, &pkg, kernel, &cases, on_cpu, Some(check), &mut tally)?
            }
            Parity::CopyTable(cases) => {
                for case in cases(seed, a.large) {
                    for v in rt.variants(kernel) {
                        let obj = pkg
                            .find(kernel, v, &arch)
                            .ok_or_else(|| anyhow!("{kernel}/{v}: no object for {arch}"))?;
                        let r = copy_table::check(&rt, &dev, kernel, v, obj.ir(), &case);
                        tally.record(kernel, v, &case.name, r);
                    }
                }
            }
        }
        println!(
            "time {kernel}: {} passed, {} failed, {} not re-run in {:.1} s",
            tally.passed - before.0,
            tally.failed - before.1,
            tally.same - before.2,
            started.elapsed().as_secs_f64()
        );
    }
    if !not_built.is_empty() {
        println!(
            "not run: {} kernel(s) not built for {arch} (an op its target table lacks, or a family's arch list): {}",
            not_built.len(),
            not_built.join(", ")
        );
    }
    if tally.same > 0 {
        println!(
            "not re-run: {} (variant, case) pair(s) whose IR is, but for the kernel's name, a \
             variant's that passed the same case (the interpreter gives the same bytes); not \
             counted as passed",
            tally.same
        );
    }
    // The summary is the last line (DESIGN.md section 8): scripts read it.
    println!("{} passed, {} failed", tally.passed, tally.failed);
    if tally.failed > 0 {
        bail!("{} parity checks failed (seed {seed})", tally.failed);
    }
    Ok(())
}

/// Passed and failed checks, printed as they come.
#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
    /// Variants not re-run on a case, their IR being a checked variant's but for the name.
    same: usize,
}

impl Tally {
    fn record(&mut self, kernel: &str, variant: &str, case: &str, r: Result<(), String>) {
        match r {
            Ok(()) => {
                self.passed += 1;
                println!("ok   {kernel}/{variant} [{case}]");
            }
            Err(e) => self.fail(kernel, variant, case, &e),
        }
    }

    fn fail(&mut self, kernel: &str, variant: &str, case: &str, e: &str) {
        self.failed += 1;
        println!("FAIL {kernel}/{variant} [{case}]: {e}");
    }
}

/// The device's run of one variant on a case against `expected` (the interpreter's outputs):
/// bit for bit, or within the family's bound (what it measured is returned); on a GPU twice,
/// with different poison, so an unwritten output element shows.
pub(crate) fn device_against(
    rt: &Runtime,
    dev: &Device,
    kernel: &str,
    variant: &str,
    entry: &ObjectEntry,
    case: &Case,
    expected: &Outputs,
    on_cpu: bool,
    within: Option<WithinFn>,
) -> Result<String, String> {
    let against = |what: &str, d: &Outputs| -> Result<String, String> {
        match within {
            None => compare(what, expected, d).map(|()| String::new()),
            Some(f) => compare_within(what, expected, d, case, f),
        }
    };
    let d1 = device_case(rt, dev, kernel, variant, entry, case, 0xA5).map_err(|e| e.to_string())?;
    let measured = against("device vs interpreter", &d1)?;
    if !on_cpu {
        let d2 =
            device_case(rt, dev, kernel, variant, entry, case, 0x5A).map_err(|e| e.to_string())?;
        against("device, second poison (unwritten output?)", &d2)?;
    }
    Ok(measured)
}

/// Every variant of `kernel` on `cases`: the interpreter on the variant against the interpreter
/// on the baseline, then the device against the interpreter (twice with different poison on a
/// GPU, so an unwritten output element shows). On the cpu device, whose run is the interpreter's,
/// the device's outputs are held to the baseline's directly.
fn buffer_cases(
    rt: &Runtime,
    dev: &Device,
    pkg: &Package,
    kernel: &str,
    cases: &[Case],
    on_cpu: bool,
    within: Option<WithinFn>,
    tally: &mut Tally,
) -> Result<()> {
    let arch = rt.arch();
    if cases.is_empty() {
        tally.fail(kernel, "-", "-", "its family lists no parity cases");
        return Ok(());
    }
    let routes = pkg.routes(kernel).ok_or_else(|| anyhow!("{kernel}: no routes in the package"))?;
    let variants = rt.variants(kernel).into_iter().map(String::from).collect::<Vec<_>>();
    let base_obj = pkg
        .find(kernel, &routes.baseline, arch)
        .ok_or_else(|| anyhow!("{kernel}: no baseline object for {arch}"))?;
    // On the cpu device a run is the interpreter's, which is deterministic: a variant whose IR is
    // another's but for the kernel's name (a variant built as its baseline's code on an arch it
    // does not fit) gives that variant's bytes on the same case, so it is run once.
    let mut objs = vec![];
    for v in &variants {
        let obj = pkg
            .find(kernel, v, arch)
            .ok_or_else(|| anyhow!("{kernel}/{v}: no object for {arch}"))?;
        let body = on_cpu.then(|| ir_body_hash(obj.ir()));
        objs.push((v.as_str(), obj, body));
    }
    for case in cases {
        let mut passed: BTreeMap<&str, &str> = BTreeMap::new();
        let reference = match interp_case(base_obj.ir(), case, 0xA5) {
            Ok(r) => r,
            Err(e) => {
                tally.fail(kernel, "baseline", &case.name, &e.to_string());
                continue;
            }
        };
        for (v, obj, body) in &objs {
            if let Some(first) = body.as_ref().and_then(|h| passed.get(h.as_str())) {
                tally.same += 1;
                println!("same {kernel}/{v} [{}]: the IR of {first}, which passed it", case.name);
                continue;
            }
            let check = || -> Result<String, String> {
                if on_cpu {
                    // The cpu device runs the variant's IR in the interpreter (through the
                    // runtime's checks and memory map): its outputs are the interpreter's, so
                    // they are held to the baseline's bit for bit, and the interpreter runs
                    // once a variant, not twice.
                    let d = device_case(rt, dev, kernel, v, &obj.entry, case, 0xA5)
                        .map_err(|e| e.to_string())?;
                    return compare(
                        "cpu device (the interpreter): variant vs baseline",
                        &reference,
                        &d,
                    )
                    .map(|()| String::new());
                }
                let iv = interp_case(obj.ir(), case, 0xA5).map_err(|e| e.to_string())?;
                compare("interpreter: variant vs baseline", &reference, &iv)?;
                device_against(rt, dev, kernel, v, &obj.entry, case, &iv, on_cpu, within)
            };
            let r = check();
            if let Ok(m) = &r {
                if !m.is_empty() {
                    println!("     {kernel}/{v} [{}]: {m}", case.name);
                }
            }
            if let (Ok(_), Some(h)) = (&r, body) {
                passed.insert(h.as_str(), v);
            }
            tally.record(kernel, v, &case.name, r.map(|_| ()));
        }
    }
    Ok(())
}

/// The hash of a kernel's IR with its name left out: equal for two variants that are the same
/// code under two names.
fn ir_body_hash(k: &Kernel) -> String {
    let mut k = k.clone();
    k.name.clear();
    k.content_hash()
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
