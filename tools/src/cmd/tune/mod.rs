//! `kiln tune`: per-arch tuning of the families' knobs, gated on parity, with provenance.
//!
//! Two halves, because the GPU machine runs the runtime-only `kiln` (no LLVM):
//! 1. build ([`candidates`], full kiln): every candidate of the asked families (each knob
//!    combination that fits a bucket) compiled for the arch into a candidate package, beside the
//!    families' own variants, each checked against the budgets; the plan says what fell and why.
//! 2. measure (any kiln, on the device): each candidate is gated (bit for bit against the
//!    interpreter's run of the baseline, on the family's parity cases drawn fresh from a printed
//!    seed; on a GPU twice, with two poisons); a candidate that differs is never timed nor
//!    recorded, and the log says why. Survivors and the default routes' choice are timed per
//!    bucket with `kiln bench`'s protocol (graph replay, inputs rotated over more than the L2,
//!    median). The winner of each finished bucket goes into the tuning file with provenance.
//!
//! Every verdict and timing is appended to the candidate package's progress log as it comes,
//! so a run stopped by `--budget-s` (or killed) resumes with the same command.

#[cfg(feature = "llvm")]
mod candidates;
pub mod plan;

use super::bench::{setup_case, time_variant};
use super::parity::{device_against, interp_case, Outputs};
use super::{open_device, open_package};
use anyhow::{anyhow, bail, Context, Result};
use kiln_ir::package::Provenance;
use kiln_runtime::{Args, Device, DeviceKind, Overrides, Runtime};
use kiln_specs::tune::{TuneSpace, TuningEntry, TuningFile};
use kiln_specs::Parity;
use plan::{Event, Plan, Progress};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Arguments of `kiln tune`.
#[derive(clap::Args)]
pub struct TuneArgs {
    /// cpu, cuda or hip (cpu runs the interpreter: its times mean nothing, the gate does).
    #[arg(long, default_value = "cuda")]
    device: String,
    /// The arch to tune (default: the device's; required for the cpu device and --build-only).
    #[arg(long)]
    arch: Option<String>,
    /// Families to tune (comma separated).
    #[arg(long, value_delimiter = ',', required = true)]
    kernel: Vec<String>,
    /// Only these buckets (comma separated names; default: every bucket of each family).
    #[arg(long, value_delimiter = ',')]
    shapes: Vec<String>,
    /// Stop measuring after this many seconds; run the same command again to resume.
    #[arg(long)]
    budget_s: Option<u64>,
    /// The candidate package (default target/tune/<arch>): built there by the full kiln when it
    /// holds no plan for these families, read (and resumed) otherwise.
    #[arg(long)]
    candidates: Option<PathBuf>,
    /// Build the candidates and stop (the measuring half runs on the GPU machine).
    #[arg(long)]
    build_only: bool,
    /// The tuning file to write, merged with the entries it holds (default
    /// specs/tuning/<arch>.ron).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Seed of the gate's random inputs (default: fresh each run, printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Graph replays per timing sample.
    #[arg(long, default_value_t = 20)]
    replays: usize,
    /// Compile cache (default: $KILN_CACHE_DIR or target/kiln-cache).
    #[arg(long)]
    cache: Option<PathBuf>,
}

/// The knob spaces asked for, or an error naming the tunable families.
fn spaces_for(kernels: &[String]) -> Result<Vec<TuneSpace>> {
    kernels
        .iter()
        .map(|k| {
            kiln_specs::tune::space(k).ok_or_else(|| {
                let known: Vec<&str> =
                    kiln_specs::tune::spaces().iter().map(|s| s.family).collect();
                anyhow!("--kernel {k}: not a tunable family (tunable: {})", known.join(", "))
            })
        })
        .collect()
}

/// `kiln tune`.
pub fn tune(a: TuneArgs) -> Result<()> {
    let spaces = spaces_for(&a.kernel)?;
    for s in &a.shapes {
        if !spaces.iter().any(|sp| sp.bucket(s).is_some()) {
            let known: Vec<String> = spaces
                .iter()
                .flat_map(|sp| sp.buckets.iter().map(move |b| format!("{}/{}", sp.family, b.name)))
                .collect();
            bail!("--shapes {s}: no such bucket (buckets: {})", known.join(", "));
        }
    }
    let dev = if a.build_only { None } else { Some(open_device(&a.device, a.arch.clone())?) };
    let arch = match (&a.arch, &dev) {
        (Some(arch), _) => arch.clone(),
        (None, Some(d)) if d.kind() != DeviceKind::Cpu => {
            d.arch().ok_or_else(|| anyhow!("the device reports no arch; give --arch"))?
        }
        (None, Some(_) | None) => bail!("give --arch (the cpu device and --build-only need it)"),
    };
    let target = kiln_ir::Target::by_name(&arch)?;
    let dir = a.candidates.clone().unwrap_or_else(|| Path::new("target/tune").join(&arch));
    let plan = plan_for(&a, &spaces, target, &dir)?;
    for f in &plan.families {
        println!(
            "{}: {} candidates built for {arch}, {} refused at build time",
            f.family,
            f.candidates.len(),
            f.refused.len()
        );
        for (c, why) in &f.refused {
            println!("  refused {c}: {why}");
        }
    }
    let Some(dev) = dev else { return Ok(()) };
    let out =
        a.out.clone().unwrap_or_else(|| Path::new("specs/tuning").join(format!("{arch}.ron")));
    let mut file = match std::fs::read_to_string(&out) {
        Ok(text) => kiln_specs::tune::parse_tuning(&out.display().to_string(), &arch, &text)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            TuningFile { arch: arch.clone(), entries: vec![] }
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", out.display())),
    };
    let pkg = open_package(&dir)?;
    let rt = Runtime::load_with(&dev, &pkg, Overrides::none())?;
    if rt.arch() != arch {
        bail!("the candidates in {} are for {arch}; the device is {}", dir.display(), rt.arch());
    }
    let mut m = Measure {
        dev: &dev,
        rt: &rt,
        pkg: &pkg,
        progress: Progress::open(&dir)?,
        provenance: provenance(&dev, &plan.llvm),
        start: Instant::now(),
        budget_s: a.budget_s,
        replays: a.replays,
        stopped: false,
    };
    let seed = a.seed.unwrap_or_else(fresh_seed);
    println!(
        "tuning {arch} on {} (gate seed {seed}), candidates {}, tuning file {}",
        m.provenance.device,
        dir.display(),
        out.display()
    );
    let mut report = vec![];
    let mut early_winners = 0;
    for space in &spaces {
        let fp = plan
            .families
            .iter()
            .find(|f| f.family == space.family)
            .expect("plan_for covers every asked family");
        let passed = m.gate(space, &fp.candidates, seed)?;
        for b in space
            .buckets
            .iter()
            .filter(|b| a.shapes.is_empty() || a.shapes.iter().any(|s| s == b.name))
        {
            let fits: Vec<&String> = passed
                .iter()
                .filter(|c| space.parse_candidate(c).is_some_and(|k| (space.fits)(b, &k)))
                .collect();
            match m.bucket(space, b, &fits)? {
                Some((entry, early)) => {
                    early_winners += usize::from(early);
                    report.push(report_line(&entry, early));
                    upsert(&mut file, entry);
                    write_tuning(&out, &file)?;
                }
                None => report.push(format!(
                    "| {} | {} | not finished (budget) | | | |",
                    space.family, b.name
                )),
            }
        }
    }
    println!();
    println!("| family | bucket | default | tuned | gain | runner-up |");
    println!("|---|---|---|---|---|---|");
    for r in &report {
        println!("{r}");
    }
    if early_winners > 0 {
        println!("{}", EARLY_NOTE.replace("{n}", &early_winners.to_string()));
    }
    if m.stopped {
        println!(
            "budget of {} s reached: finished buckets are written to {}; run the same command \
             again to resume",
            a.budget_s.unwrap_or(0),
            out.display()
        );
    }
    Ok(())
}

/// The candidate package's plan: read when it covers the asked families for the arch, else
/// built (full kiln) or an error (runtime-only kiln).
fn plan_for(
    a: &TuneArgs,
    spaces: &[TuneSpace],
    target: &'static kiln_ir::Target,
    dir: &Path,
) -> Result<Plan> {
    let covers = |p: &Plan| {
        p.arch == target.name
            && spaces.iter().all(|s| p.families.iter().any(|f| f.family == s.family))
    };
    match Plan::read(dir) {
        Ok(p) if covers(&p) => return Ok(p),
        Ok(_) | Err(_) => {}
    }
    #[cfg(feature = "llvm")]
    {
        let cache = a.cache.clone().unwrap_or_else(kiln_codegen::package::default_cache_dir);
        candidates::build(spaces, &a.shapes, target, dir, &cache)
    }
    #[cfg(not(feature = "llvm"))]
    {
        let _ = &a.cache;
        bail!(
            "{} holds no candidates of {} for {}: build them with the full kiln (kiln tune \
             --arch {} --kernel {} --build-only --candidates {}) and bring the folder here",
            dir.display(),
            a.kernel.join(","),
            target.name,
            target.name,
            a.kernel.join(","),
            dir.display()
        )
    }
}

/// The measuring half's state.
struct Measure<'a> {
    dev: &'a Device,
    rt: &'a Runtime,
    pkg: &'a kiln_runtime::Package,
    progress: Progress,
    provenance: Provenance,
    start: Instant,
    budget_s: Option<u64>,
    replays: usize,
    stopped: bool,
}

impl Measure<'_> {
    fn over_budget(&mut self) -> bool {
        if let Some(b) = self.budget_s {
            if self.start.elapsed().as_secs() >= b {
                self.stopped = true;
            }
        }
        self.stopped
    }

    /// The candidates that give the baseline's bits on fresh random inputs (verdicts of an
    /// earlier run on this device are kept); every refusal is printed with its reason.
    fn gate(&mut self, space: &TuneSpace, candidates: &[String], seed: u64) -> Result<Vec<String>> {
        let family = kiln_specs::family(space.family).expect("a space names a family");
        let (cases, within) = match family.parity {
            Parity::Buffers(f) => (f, None),
            Parity::Within { cases, check } => (cases, Some(check)),
            Parity::CopyTable(_) => bail!("{}: a copy-table family cannot be gated", family.name),
        };
        let device = self.provenance.device.clone();
        let todo: Vec<&String> = candidates
            .iter()
            .filter(|c| self.progress.gate(&device, family.name, c).is_none())
            .collect();
        if !todo.is_empty() {
            let cases = cases(&mut kiln_specs::cases::rng_for(family.name, seed), false);
            let arch = self.rt.arch().to_string();
            let base = self
                .pkg
                .find(family.name, family.baseline().name, &arch)
                .ok_or_else(|| anyhow!("{}: no baseline object for {arch}", family.name))?;
            let reference: Vec<Outputs> =
                cases.iter().map(|c| interp_case(base.ir(), c, 0xA5)).collect::<Result<_>>()?;
            let bar = progress_bar(todo.len() as u64, &format!("gate {}", family.name));
            let on_cpu = self.dev.kind() == DeviceKind::Cpu;
            for c in todo {
                let obj = self
                    .pkg
                    .find(family.name, c, &arch)
                    .ok_or_else(|| anyhow!("{}/{c}: no object for {arch}", family.name))?;
                let mut refused = None;
                for (case, expected) in cases.iter().zip(&reference) {
                    let r = device_against(
                        self.rt,
                        self.dev,
                        family.name,
                        c,
                        &obj.entry,
                        case,
                        expected,
                        on_cpu,
                        within,
                    );
                    if let Err(why) = r {
                        refused = Some(format!("[{}] {why}", case.name));
                        break;
                    }
                }
                self.progress.record(Event::Gate {
                    device: device.clone(),
                    family: family.name.into(),
                    candidate: c.clone(),
                    refused,
                })?;
                bar.inc(1);
            }
            bar.finish_and_clear();
        }
        let mut passed = vec![];
        for c in candidates {
            match self.progress.gate(&device, family.name, c).expect("gated above") {
                None => passed.push(c.clone()),
                Some(why) => println!("gate: {}/{c} refused (never timed): {why}", family.name),
            }
        }
        println!(
            "gate: {} of {} candidates of {} give the baseline's bits",
            passed.len(),
            candidates.len(),
            family.name
        );
        Ok(passed)
    }

    /// Times the default routes' choice and every candidate on a bucket's call; the entry, and
    /// whether its winner loads before the grid-dependency wait ([`loads_early`]), or `None` when
    /// the budget ran out first.
    fn bucket(
        &mut self,
        space: &TuneSpace,
        b: &kiln_specs::tune::Bucket,
        candidates: &[&String],
    ) -> Result<Option<(TuningEntry, bool)>> {
        let family = kiln_specs::family(space.family).expect("a space names a family");
        let device = self.provenance.device.clone();
        let arch = self.rt.arch().to_string();
        let mut rng = kiln_specs::cases::Rng::new(0x74756e65);
        let setup = setup_case(self.dev, self.pkg, family.name, &b.case, &arch, &mut rng)?;
        let mut args = Args::new();
        for (n, s) in &setup.scalars {
            args = args.scalar(n.clone(), *s);
        }
        let default = self.rt.explain(family.name, &args)?.chosen()?.to_string();
        let mut variants: Vec<&str> = vec![default.as_str()];
        variants.extend(candidates.iter().map(|c| c.as_str()));
        let bar = progress_bar(variants.len() as u64, &format!("time {}/{}", family.name, b.name));
        let mut times = vec![];
        for v in variants {
            let us = match self.progress.time(&device, family.name, b.name, v) {
                Some(us) => us,
                None => {
                    if self.over_budget() {
                        bar.finish_and_clear();
                        return Ok(None);
                    }
                    let ov =
                        Overrides::from_vars([(kiln_runtime::route::route_var(family.name), v)]);
                    let (us, _) = time_variant(&self.rt.with_overrides(ov), &setup, self.replays)?;
                    self.progress.record(Event::Time {
                        device: device.clone(),
                        family: family.name.into(),
                        bucket: b.name.into(),
                        variant: v.to_string(),
                        us,
                    })?;
                    us
                }
            };
            times.push((v.to_string(), us));
            bar.inc(1);
        }
        bar.finish_and_clear();
        let default_us = times[0].1;
        let mut ranked: Vec<(String, f64)> = times[1..].to_vec();
        ranked.sort_by(|x, y| x.1.total_cmp(&y.1));
        let name = |v: &str| v.strip_prefix("cand_").unwrap_or(v).to_string();
        let Some(best) = ranked.first().cloned() else {
            let entry = TuningEntry {
                kernel: family.name.into(),
                bucket: b.name.into(),
                knobs: None,
                time_us: default_us,
                default: (default, default_us),
                runner_up: None,
                provenance: self.provenance.clone(),
            };
            return Ok(Some((entry, false)));
        };
        // A candidate replaces the default only when it is faster by more than the noise of a
        // median (1%); else the default stays and the best candidate is the runner-up.
        let wins = best.1 < default_us * 0.99;
        let values = space.parse_candidate(&best.0).expect("a candidate of the space");
        let knobs: Vec<(String, u32)> =
            space.knobs.iter().zip(values).map(|(k, v)| (k.name.to_string(), v)).collect();
        let (knobs, time_us, runner_up) = if wins {
            (Some(knobs), best.1, ranked.get(1).map(|r| (name(&r.0), r.1)))
        } else {
            (None, default_us, Some((name(&best.0), best.1)))
        };
        let early = wins && loads_early(self.pkg, family.name, &best.0, &arch);
        let entry = TuningEntry {
            kernel: family.name.into(),
            bucket: b.name.into(),
            knobs,
            time_us,
            default: (default, default_us),
            runner_up,
            provenance: self.provenance.clone(),
        };
        Ok(Some((entry, early)))
    }
}

/// Whether `variant`'s object for `arch` loads any buffer before its grid-dependency wait
/// (`Kernel::reads_before_grid_wait`): the tuner times it after a copy of itself, which it
/// overlaps, while a decode step runs it after another kernel.
fn loads_early(pkg: &kiln_runtime::Package, family: &str, variant: &str, arch: &str) -> bool {
    pkg.find(family, variant, arch).is_some_and(|o| !o.ir().reads_before_grid_wait().is_empty())
}

/// Printed under the report when winners load early (`{n}`: how many).
const EARLY_NOTE: &str = "note: {n} winner(s) marked \"loads early\" read weights before the \
grid-dependency wait; each was timed after a copy of itself, which it overlaps, while a decode \
step runs it after another kernel: check them in an engine's step (kiln generate --profile) \
before shipping the entries (docs/tuning.md, \"What a tuned time does not say\")";

/// One row of the report.
fn report_line(e: &TuningEntry, early: bool) -> String {
    let runner = e.runner_up.as_ref().map(|r| format!("{} {:.2} us", r.0, r.1)).unwrap_or_default();
    match &e.knobs {
        Some(k) => {
            let knobs: Vec<String> = k.iter().map(|(n, v)| format!("{n}={v}")).collect();
            format!(
                "| {} | {} | {} {:.2} us | {} {:.2} us{} | {:.1}% | {runner} |",
                e.kernel,
                e.bucket,
                e.default.0,
                e.default.1,
                knobs.join(" "),
                e.time_us,
                if early { " (loads early)" } else { "" },
                (e.default.1 / e.time_us - 1.0) * 100.0
            )
        }
        None => format!(
            "| {} | {} | {} {:.2} us | the default already wins | 0% | {runner} |",
            e.kernel, e.bucket, e.default.0, e.default.1
        ),
    }
}

/// Replaces the file's entry for the same (family, bucket), or appends.
fn upsert(file: &mut TuningFile, e: TuningEntry) {
    match file.entries.iter_mut().find(|o| o.kernel == e.kernel && o.bucket == e.bucket) {
        Some(o) => *o = e,
        None => file.entries.push(e),
    }
}

/// Writes the tuning file (through a temporary file: a kill never leaves half a file).
fn write_tuning(path: &Path, f: &TuningFile) -> Result<()> {
    let text = ron::ser::to_string_pretty(f, ron::ser::PrettyConfig::default())
        .expect("a tuning file serializes");
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    let tmp = path.with_extension("ron.tmp");
    std::fs::write(&tmp, text + "\n").with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}

fn progress_bar(n: u64, what: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(n);
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    bar.set_style(
        indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} {elapsed}")
            .expect("a valid template"),
    );
    bar.set_message(what.to_string());
    bar
}

fn fresh_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
}

/// Where the measurement is made: the device, its driver and clocks (from `nvidia-smi` on an
/// NVIDIA GPU; `unknown` where no tool says), the UTC date, kiln's version and the LLVM that
/// built the candidates.
fn provenance(dev: &Device, llvm: &str) -> Provenance {
    let (driver, clocks) = match dev.kind() {
        DeviceKind::Cuda => nvidia_smi().unwrap_or_else(|| ("unknown".into(), "unknown".into())),
        DeviceKind::Hip => ("unknown".into(), "unknown".into()),
        DeviceKind::Cpu => ("none (interpreter)".into(), "none".into()),
    };
    Provenance {
        device: dev.name(),
        driver,
        clocks,
        date: utc_now(),
        kiln: env!("CARGO_PKG_VERSION").to_string(),
        llvm: llvm.to_string(),
    }
}

fn nvidia_smi() -> Option<(String, String)> {
    let out = std::process::Command::new("nvidia-smi")
        .args([
            "--query-gpu=driver_version,clocks.sm,clocks.mem",
            "--format=csv,noheader",
            "-i",
            "0",
        ])
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let f: Vec<&str> = text.trim().split(',').map(str::trim).collect();
    match f.as_slice() {
        [driver, sm, mem] => Some((driver.to_string(), format!("sm {sm}, mem {mem}"))),
        _ => None,
    }
}

/// The UTC time now as `YYYY-MM-DDTHH:MM:SSZ`.
fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// argmax_rows with a planted knob: `wrong=0` is the split kernel (right), `wrong=1` writes
    /// index 0 for every row (wrong wherever a row's largest logit is elsewhere).
    #[cfg(feature = "llvm")]
    fn planted_space() -> TuneSpace {
        let mut s = kiln_specs::tune::space("argmax_rows").expect("argmax_rows is tunable");
        s.knobs = vec![kiln_specs::tune::Knob { name: "wrong", values: vec![0, 1], omitted: None }];
        s.buckets.truncate(1);
        s.build = |t, wave, k| match k[0] {
            0 => Ok(kiln_specs::argmax::split(t, wave)),
            _ => Ok(index_zero(wave)),
        };
        s.fits = |_, _| true;
        s
    }

    /// The argmax ABI, answering 0 for every row.
    #[cfg(feature = "llvm")]
    fn index_zero(wave: u32) -> kiln_ir::Kernel {
        use kiln_ir::{Access, Dim, KernelBuilder, ScalarType, ShapeExpr};
        let mut b = KernelBuilder::new("argmax_rows_planted_wrong", wave);
        b.workgroup_size([wave, 1, 1]);
        let logits = b.buffer("logits", ScalarType::F32, Access::Read);
        let out = b.buffer("out", ScalarType::I32, Access::Write);
        let rows = b.scalar_param("rows", ScalarType::U32);
        let n = b.scalar_param("n", ScalarType::U32);
        b.set_buffer_len(logits, ShapeExpr::scaled(&[rows, n], 1, 1));
        b.set_buffer_len(out, ShapeExpr::scaled(&[rows], 1, 1));
        b.grid([ShapeExpr::scaled(&[rows], 1, 1), ShapeExpr::constant(1), ShapeExpr::constant(1)]);
        let row = b.workgroup_id(Dim::X);
        let lane = b.lane();
        let zero = b.u32(0);
        let first = b.eq(lane, zero);
        b.if_then(first, |b| {
            let z = b.i32(0);
            b.store(out, row, z);
        });
        b.finish()
    }

    /// The gate refuses the planted wrong candidate (saying where it differs), passes the right
    /// one, and the verdicts are kept for a resumed run.
    #[cfg(feature = "llvm")]
    #[test]
    fn the_gate_refuses_a_planted_wrong_candidate() {
        let dir = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        let target = kiln_ir::Target::by_name("gfx1100").unwrap();
        let space = planted_space();
        let plan =
            candidates::build(std::slice::from_ref(&space), &[], target, dir.path(), cache.path())
                .unwrap();
        let fp = &plan.families[0];
        assert_eq!(fp.candidates, ["cand_wrong0", "cand_wrong1"], "{:?}", fp.refused);
        let dev = open_device("cpu", Some("gfx1100".into())).unwrap();
        let pkg = open_package(dir.path()).unwrap();
        let rt = Runtime::load_with(&dev, &pkg, Overrides::none()).unwrap();
        let mut m = Measure {
            dev: &dev,
            rt: &rt,
            pkg: &pkg,
            progress: Progress::open(dir.path()).unwrap(),
            provenance: provenance(&dev, &plan.llvm),
            start: Instant::now(),
            budget_s: None,
            replays: 1,
            stopped: false,
        };
        let passed = m.gate(&space, &fp.candidates, fresh_seed()).unwrap();
        assert_eq!(passed, ["cand_wrong0"]);
        let why = m.progress.gate(&m.provenance.device, "argmax_rows", "cand_wrong1");
        let why = why.expect("gated").expect("refused");
        assert!(why.contains("device vs interpreter") && why.contains("out["), "{why}");
        // A resumed run keeps the verdicts (nothing is gated again).
        drop(m);
        let progress = Progress::open(dir.path()).unwrap();
        assert_eq!(progress.events.len(), 2);
    }

    /// A winner that loads its weights before the grid-dependency wait (the dense GEMV's knob
    /// `e = 1`) is told apart from one that does not (`e = 0`), from the candidate package's
    /// IR, and marked in the report.
    #[cfg(feature = "llvm")]
    #[test]
    fn a_winner_that_loads_early_is_marked() {
        let dir = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        let target = kiln_ir::Target::by_name("sm_90").unwrap();
        let mut space = kiln_specs::tune::space("gemv_q8_0_rp").expect("tunable");
        for k in &mut space.knobs {
            k.values = match k.name {
                "p" | "r" => vec![1],
                "u" => vec![8],
                "w" => vec![2],
                _ => k.values.clone(),
            };
        }
        space.buckets.truncate(1);
        let plan =
            candidates::build(std::slice::from_ref(&space), &[], target, dir.path(), cache.path())
                .unwrap();
        let names = &plan.families[0].candidates;
        assert_eq!(names.len(), 3, "{names:?} refused {:?}", plan.families[0].refused);
        let pkg = open_package(dir.path()).unwrap();
        let early: Vec<bool> =
            names.iter().map(|v| loads_early(&pkg, "gemv_q8_0_rp", v, "sm_90")).collect();
        let e_of = |v: &str| space.parse_candidate(v).unwrap()[space.knobs.len() - 1];
        for (v, &e) in names.iter().zip(&early) {
            assert_eq!(e, e_of(v) >= 1, "{v}");
        }
        assert!(!loads_early(&pkg, "gemv_q8_0_rp", "no_such_variant", "sm_90"));
        let entry = TuningEntry {
            kernel: "gemv_q8_0_rp".into(),
            bucket: "t1_nlo".into(),
            knobs: Some(vec![("e".into(), 1)]),
            time_us: 4.5,
            default: ("p1".into(), 5.0),
            runner_up: None,
            provenance: Provenance {
                device: "d".into(),
                driver: String::new(),
                clocks: String::new(),
                date: String::new(),
                kiln: String::new(),
                llvm: String::new(),
            },
        };
        assert!(report_line(&entry, true).contains("4.50 us (loads early) |"));
        assert!(!report_line(&entry, false).contains("loads early"));
    }

    #[test]
    fn dates_are_civil() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_787), (2026, 11, 30));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }
}
