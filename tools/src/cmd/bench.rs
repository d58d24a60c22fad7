//! `kiln bench`: each family's bench cases ([`kiln_specs::Bench`]) on a GPU, every variant
//! timed as a captured graph and eagerly, against the floor of the bytes a case moves over the
//! device's copy bandwidth, measured in the same run ([`crate::measure::bandwidth`]) unless
//! `--bandwidth` gives it; then the launch cost of a trivial kernel.

use super::{check_known, entry_for, floor, len_of, load_package_only, open_device, open_package};
use crate::measure::launch_cost;
use anyhow::{anyhow, bail, Context, Result};
use kiln_ir::package::ObjectEntry;
use kiln_ir::{Access, ParamKind, ScalarType};
use kiln_runtime::{Args, DecodeGraph, Device, NodeArgs, Overrides, Scalar};
use kiln_specs::bench::BenchCase;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::PathBuf;

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
    /// Copy bandwidth of the device in GB/s (read plus written), for the floor; default: measured
    /// in this run with a device-to-device copy (needed on hip, which has no built-in copy).
    #[arg(long)]
    bandwidth: Option<f64>,
    /// Bytes of the measured copy (default: 1 GiB on a GPU, 4 MiB on the cpu device).
    #[arg(long)]
    bandwidth_bytes: Option<u64>,
    /// Graph replays per sample.
    #[arg(long, default_value_t = 20)]
    replays: usize,
    /// Only these variants (comma separated; default: every variant of each kernel). The row's
    /// headline is the router's choice when timed, else the first timed.
    #[arg(long, value_delimiter = ',')]
    variant: Vec<String>,
}

/// A bench case with its family's name.
struct Selected {
    kernel: &'static str,
    case: BenchCase,
}

/// The library's bench cases that `asked` selects (all when empty); a name that is neither a
/// case nor a family with cases is an error listing both.
fn select(asked: &[String]) -> Result<Vec<Selected>> {
    let lib = kiln_specs::library();
    let all: Vec<Selected> = lib
        .iter()
        .flat_map(|f| f.bench_cases().into_iter().map(|case| Selected { kernel: f.name, case }))
        .collect();
    for a in asked {
        if let Some(f) = lib.iter().find(|f| f.name == a) {
            if let kiln_specs::Bench::Without(why) = f.bench {
                bail!("--kernel {a}: the family has no bench cases ({why})");
            }
        }
    }
    let mut known: Vec<String> = all.iter().map(|s| s.case.name.to_string()).collect();
    known.extend(all.iter().map(|s| s.kernel.to_string()));
    known.sort();
    known.dedup();
    check_known("--kernel", asked, &known, "bench cases and kernels")?;
    Ok(all
        .into_iter()
        .filter(|s| asked.is_empty() || asked.iter().any(|k| k == s.case.name || k == s.kernel))
        .collect())
}

/// The case's arguments for the package's object: every scalar of the ABI from the case and
/// every input buffer among the case's inputs, or an error saying what differs (a package built
/// from another library).
fn check_case(c: &Selected, entry: &ObjectEntry) -> Result<Vec<(String, Scalar)>> {
    let given: Vec<&str> = c.case.scalars.iter().map(|s| s.0).collect();
    let inputs: Vec<&str> = c.case.inputs.iter().map(|s| s.0).collect();
    let mut scalars = vec![];
    for p in entry.abi.params.iter().filter(|p| !p.workspace) {
        match p.kind {
            ParamKind::Scalar(ty) => {
                let Some((_, cty, bits)) = c.case.scalars.iter().find(|s| s.0 == p.name) else {
                    bail!(
                        "bench case {} gives no scalar `{}`, which {} in the package takes (the \
                         case gives: {}); the package was built from another library",
                        c.case.name,
                        p.name,
                        c.kernel,
                        given.join(", ")
                    );
                };
                if *cty != ty {
                    bail!(
                        "bench case {}: scalar `{}` is {cty}, the package's {} takes {ty}",
                        c.case.name,
                        p.name,
                        c.kernel
                    );
                }
                scalars.push((p.name.clone(), Scalar::from_bits(ty, *bits)));
            }
            ParamKind::Buffer { access, .. } => {
                if !access.writes() && !inputs.contains(&p.name.as_str()) {
                    bail!(
                        "bench case {} gives no input `{}`, which {} in the package reads (the \
                         case gives: {}); the package was built from another library",
                        c.case.name,
                        p.name,
                        c.kernel,
                        inputs.join(", ")
                    );
                }
            }
        }
    }
    Ok(scalars)
}

fn random_bytes(ty: ScalarType, n: usize, rng: &mut kiln_specs::cases::Rng) -> Vec<u8> {
    match ty {
        ScalarType::F32 => (0..n).flat_map(|_| rng.normal(3.0).to_le_bytes()).collect(),
        ScalarType::F16 => {
            (0..n).flat_map(|_| half::f16::from_f32(rng.normal(1.0)).to_le_bytes()).collect()
        }
        ScalarType::BF16 => {
            (0..n).flat_map(|_| half::bf16::from_f32(rng.normal(1.0)).to_le_bytes()).collect()
        }
        ScalarType::I1
        | ScalarType::I8
        | ScalarType::U8
        | ScalarType::I16
        | ScalarType::U16
        | ScalarType::I32
        | ScalarType::U32
        | ScalarType::I64
        | ScalarType::U64
        | ScalarType::F64 => (0..n * ty.bytes() as usize).map(|_| rng.next_u64() as u8).collect(),
    }
}

/// A bench case's inputs on the device: `sets` copies of every input (random, fresh from the
/// generator; valid data where the case says), enough to rotate through more than the GPU's
/// caches, and the outputs, as graph buffers `<param><set>`; with the case's scalars as the
/// package's ABI takes them.
pub(crate) struct CaseSetup {
    kernel: &'static str,
    entry: ObjectEntry,
    graph: DecodeGraph,
    /// Input sets rotated through.
    pub sets: usize,
    /// The case's scalars by ABI name.
    pub scalars: Vec<(String, Scalar)>,
}

/// Allocates and fills a case's inputs for `kernel` as the package builds it for `arch`.
pub(crate) fn setup_case(
    dev: &Device,
    pkg: &kiln_runtime::Package,
    kernel: &'static str,
    case: &BenchCase,
    arch: &str,
    rng: &mut kiln_specs::cases::Rng,
) -> Result<CaseSetup> {
    let c = Selected { kernel, case: case.clone() };
    // Inputs rotate through enough sets to leave the GPU's caches cold between calls; the cpu
    // device has no such cache, and its times mean nothing, so it takes the fewest sets.
    let (rotate_bytes, min_sets): (u64, usize) = match dev.kind() {
        kiln_runtime::DeviceKind::Cpu => (0, 1),
        kiln_runtime::DeviceKind::Cuda | kiln_runtime::DeviceKind::Hip => (120 << 20, 8),
    };
    let entry = entry_for(pkg, kernel, arch)?.clone();
    let scalars = check_case(&c, &entry)?;
    let in_bytes: u64 = case.inputs.iter().map(|i| (i.2 * i.1.bytes() as usize) as u64).sum();
    let sets = (rotate_bytes.div_ceil(in_bytes.max(1)) as usize).clamp(min_sets, 4096);
    let mut g = DecodeGraph::new();
    let lens: BTreeMap<String, u64> =
        scalars.iter().map(|(n, s)| (n.clone(), s.as_shape().unwrap_or(0))).collect();
    for s in 0..sets {
        for (name, ty, n) in &case.inputs {
            let b = dev.alloc(*ty, *n)?;
            let bytes = match case.values.iter().find(|(v, _)| v == name) {
                Some((_, gen)) => {
                    let v = gen(rng);
                    if v.len() != *n * ty.bytes() as usize {
                        bail!(
                            "{}: input {name}: the generator gave {} bytes, expected {}",
                            case.name,
                            v.len(),
                            *n * ty.bytes() as usize
                        );
                    }
                    v
                }
                None => random_bytes(*ty, *n, rng),
            };
            b.write_bytes(&bytes)?;
            g.add_buffer(format!("{name}{s}"), b)?;
        }
        for p in entry.abi.params.iter().filter(|p| !p.workspace) {
            if let ParamKind::Buffer { elem, access: Access::Write, .. } = p.kind {
                let n = len_of(&p.kind, &lens, &entry).unwrap_or(1);
                g.add_buffer(format!("{}{s}", p.name), dev.alloc(elem, n as usize)?)?;
            }
        }
    }
    Ok(CaseSetup { kernel, entry, graph: g, sets, scalars })
}

/// Times the variant that `rt`'s routes take for the case (force one with
/// [`kiln_runtime::Runtime::with_overrides`]): `(graph replay us, eager us)` a call, medians.
pub(crate) fn time_variant(
    rt: &kiln_runtime::Runtime,
    s: &CaseSetup,
    replays: usize,
) -> Result<(f64, f64)> {
    let mut gv = s.graph.clone();
    for set in 0..s.sets {
        let mut na = NodeArgs::new();
        for p in s.entry.abi.params.iter().filter(|p| !p.workspace) {
            if let ParamKind::Buffer { .. } = p.kind {
                na = na.buffer(p.name.clone(), format!("{}{set}", p.name));
            }
        }
        for (n, sv) in &s.scalars {
            na = na.scalar(n.clone(), *sv);
        }
        gv.add_node(rt, s.kernel, na)?;
    }
    // The cpu device's times mean nothing (the interpreter): one sample of each is enough to
    // run the path.
    let dev = rt.device();
    let samples = match dev.kind() {
        kiln_runtime::DeviceKind::Cpu => 1,
        kiln_runtime::DeviceKind::Cuda | kiln_runtime::DeviceKind::Hip => 7,
    };
    // Eager: every node launched in order, timed with events.
    gv.run(rt)?;
    rt.synchronize()?;
    let mut eager = vec![];
    for _ in 0..samples.min(5) {
        let t0 = dev.record_event()?;
        gv.run(rt)?;
        let t1 = dev.record_event()?;
        eager.push(t0.elapsed_ms(&t1)? * 1e3 / s.sets as f64);
    }
    eager.sort_by(f64::total_cmp);
    let graph_us = launch_cost::graph_us_per_node(rt, &gv, replays, samples, None)?;
    Ok((graph_us, eager[eager.len() / 2]))
}

/// `kiln bench`.
pub fn bench(a: BenchArgs) -> Result<()> {
    let selected = select(&a.kernel)?;
    let pkg = open_package(&a.package)?;
    let dev = open_device(&a.device, None)?;
    // Only the selected families' objects: loading a whole PTX package makes the driver compile
    // every module first (tens of seconds on a machine whose JIT cache is cold), and the other
    // modules on the device are not what a decode step that uses these kernels has there.
    let mut wanted: Vec<&str> = selected.iter().map(|s| s.kernel).collect();
    wanted.sort_unstable();
    wanted.dedup();
    let probe = load_package_only(&dev, &pkg, &a.package, Overrides::none(), &wanted)?;
    let arch = probe.arch().to_string();
    for k in &a.kernel {
        if let Some(s) = selected.iter().find(|s| s.case.name == k || s.kernel == k) {
            if entry_for(&pkg, s.kernel, &arch).is_err() {
                let in_package: Vec<&str> = pkg
                    .kernels()
                    .into_iter()
                    .filter(|k| entry_for(&pkg, k, &arch).is_ok())
                    .collect();
                bail!(
                    "--kernel {k}: kernel {} is not in the package for {arch} (it has: {})",
                    s.kernel,
                    in_package.join(", ")
                );
            }
        }
    }
    let floor = floor(a.bandwidth, a.bandwidth_bytes, &dev)?;
    println!("{}", floor.line);
    let mut rng = kiln_specs::cases::Rng::new(0x6b696c6e);
    let mut rows = vec![];
    let mut cases_json = serde_json::Map::new();
    for c in &selected {
        let Some(routes) = pkg.routes(c.kernel) else {
            println!("{}: kernel {} not in the package", c.case.name, c.kernel);
            continue;
        };
        let setup = setup_case(&dev, &pkg, c.kernel, &c.case, &arch, &mut rng)?;
        let case_scalars = setup.scalars.clone();
        let mut variants: Vec<String> = vec![routes.baseline.clone()];
        // A variant with two admissions is listed twice in the routes: timed once.
        for v in &routes.variants {
            if !variants.contains(&v.variant) {
                variants.push(v.variant.clone());
            }
        }
        let mut per_variant = vec![];
        let routed = probe.explain(c.kernel, &{
            let mut args = Args::new();
            for (n, s) in &case_scalars {
                args = args.scalar(n.clone(), *s);
            }
            args
        })?;
        let chosen = routed.chosen()?.to_string();
        if !a.variant.is_empty() && !variants.iter().any(|v| a.variant.contains(v)) {
            bail!(
                "--variant {}: none is a variant of {} (it has: {})",
                a.variant.join(","),
                c.kernel,
                variants.join(", ")
            );
        }
        for v in &variants {
            if pkg.find(c.kernel, v, &arch).is_none()
                || !(a.variant.is_empty() || a.variant.contains(v))
            {
                continue;
            }
            let ov = Overrides::from_vars([(kiln_runtime::route::route_var(c.kernel), v.clone())]);
            let (graph_us, eager_us) = time_variant(&probe.with_overrides(ov), &setup, a.replays)?;
            per_variant.push((v.clone(), graph_us, eager_us));
        }
        let best = per_variant
            .iter()
            .find(|(v, _, _)| *v == chosen)
            .or(per_variant.first())
            .cloned()
            .ok_or_else(|| anyhow!("{}: no variant built for {arch}", c.case.name))?;
        let bytes = c.case.bytes;
        let floor_us = bytes as f64 / (floor.gbps * 1e3);
        let gbps = bytes as f64 / best.1 / 1e3;
        // A compute-bound case: TFLOP/s of the headline variant (the floor of its bytes says
        // little there).
        let tflops = c.case.flops.map(|f| f as f64 / best.1 / 1e6);
        rows.push(format!(
            "{:<24} {:<9} {:>9.2} {:>9.2} {:>8.2} {:>8.1}  {}{}",
            c.case.name,
            best.0,
            best.1,
            best.2,
            floor_us,
            gbps,
            per_variant.iter().map(|(v, g, _)| format!("{v}={g:.2}")).collect::<Vec<_>>().join(" "),
            tflops.map_or(String::new(), |t| format!("  ({t:.1} TFLOP/s)"))
        ));
        let variants_json: serde_json::Map<String, serde_json::Value> = per_variant
            .iter()
            .map(|(v, g, e)| (v.clone(), json!({"graph_us": g, "eager_us": e})))
            .collect();
        cases_json.insert(
            c.case.name.to_string(),
            json!({
                "kernel": c.kernel, "variant": best.0, "kiln_us": best.1, "eager_us": best.2,
                "bytes": bytes, "floor_us": floor_us, "gbps": gbps, "sets": setup.sets,
                "flops": c.case.flops, "tflops": tflops,
                "variants": variants_json,
            }),
        );
        println!("{}", rows.last().expect("just pushed"));
    }
    let lc = launch_cost::launch_cost(&dev, 200, 50)?;
    println!();
    println!("{}", floor.line);
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
            "bandwidth_gbps": floor.gbps,
            "bandwidth": floor.json,
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
    fn a_typo_in_kernel_is_refused_naming_the_known_cases() {
        let e = select(&["argmux_rows".into()]).err().expect("refused").to_string();
        assert!(e.contains("argmux_rows") && e.contains("argmax_t8"), "{e}");
        assert!(e.contains("argmax_rows") && e.contains("rmsnorm_f32"), "{e}");
        let e = select(&["copy_from_mapped_multi".into()]).err().expect("refused").to_string();
        assert!(e.contains("no bench cases"), "{e}");
        let s = select(&["argmax_rows".into(), "rmsnorm_t8_d4096".into()]).unwrap();
        let names: Vec<&str> = s.iter().map(|s| s.case.name).collect();
        assert_eq!(names, ["argmax_t1", "argmax_t8", "rmsnorm_t8_d4096"]);
        assert!(select(&[]).unwrap().len() >= 5);
    }
}
