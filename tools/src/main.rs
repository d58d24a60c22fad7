//! `kiln`: the command line (DESIGN.md section 8).
//!
//! Built with the default `llvm` feature it compiles (`build`, `inspect --llvm/--asm`); built with
//! `--no-default-features` it is the small runtime-only binary that goes to GPU machines.

use anyhow::{bail, Result};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

mod report;
mod runcmd;

#[derive(Parser)]
#[command(
    name = "kiln",
    version,
    about = "kiln: kernels written once, built ahead of time for AMD and NVIDIA GPUs"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Supported archs: wave size, LDS, VGPR file, features.
    Targets,
    /// Build the kernel library ahead of time into a package and print the resource report.
    Build {
        /// Archs to build (comma separated); default: the build matrix's archs.
        #[arg(long, value_delimiter = ',')]
        arch: Vec<String>,
        /// Every supported arch.
        #[arg(long, conflicts_with = "arch")]
        all_archs: bool,
        /// Kernel families to build (comma separated); default: all.
        #[arg(long, value_delimiter = ',')]
        kernel: Vec<String>,
        /// Output package directory.
        #[arg(short = 'o', long, default_value = "dist")]
        out: PathBuf,
        /// Cache directory (default: $KILN_CACHE_DIR or target/kiln-cache).
        #[arg(long)]
        cache: Option<PathBuf>,
        /// Also write per kernel x arch compile times (ms) to this file.
        #[arg(long)]
        times: Option<PathBuf>,
        /// A build matrix (archs, kernels, budgets) instead of the shipped specs/build.ron.
        #[arg(long)]
        matrix: Option<PathBuf>,
        /// Fail when a budget could not be checked because its resource was not measured
        /// (NVIDIA registers without ptxas); CI builds with it.
        #[arg(long)]
        strict: bool,
    },
    /// Show a package's IR, LLVM IR, ISA or resources.
    Inspect {
        /// Package directory.
        dir: PathBuf,
        #[arg(long)]
        arch: Option<String>,
        #[arg(long)]
        kernel: Option<String>,
        #[arg(long)]
        variant: Option<String>,
        /// Print the kernel IR.
        #[arg(long)]
        ir: bool,
        /// Print the LLVM IR (recompiled from the package's IR).
        #[arg(long)]
        llvm: bool,
        /// Print the ISA (AMD disassembly / PTX).
        #[arg(long)]
        asm: bool,
        /// Resource table, all archs of a kernel side by side (the default).
        #[arg(long)]
        resources: bool,
    },
    /// One call of a kernel on your own data (.npy in, .npy out).
    Run(runcmd::RunArgs),
    /// Every variant vs the interpreter and its baseline.
    Parity(runcmd::ParityArgs),
    /// On a GPU: median us, GB/s, against the bandwidth floor.
    Bench(runcmd::BenchArgs),
}

fn main() {
    // A closed pipe (`kiln inspect --asm | head`) ends kiln quietly, as it does other Unix tools;
    // Rust ignores SIGPIPE by default, and `print!` would panic on the failed write instead.
    #[cfg(unix)]
    // SAFETY: restores the default disposition of one signal before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Targets => {
            print!("{}", kiln_ir::target::target_table());
            Ok(())
        }
        Cmd::Build { arch, all_archs, kernel, out, cache, times, matrix, strict } => {
            build(arch, all_archs, kernel, out, cache, times, matrix, strict)
        }
        Cmd::Inspect { dir, arch, kernel, variant, ir, llvm, asm, resources } => {
            report::inspect(&dir, arch, kernel, variant, ir, llvm, asm, resources)
        }
        Cmd::Run(a) => runcmd::run(a),
        Cmd::Parity(a) => runcmd::parity(a),
        Cmd::Bench(a) => runcmd::bench(a),
    };
    if let Err(e) = r {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

#[cfg(feature = "llvm")]
/// Resolves arch names against the target table (an unknown one is an error naming the list).
fn targets_for(
    arch: &[String],
    all: bool,
    matrix: &kiln_specs::BuildMatrix,
) -> Result<Vec<&'static kiln_ir::Target>> {
    let names: Vec<String> = if all {
        kiln_ir::TARGETS.iter().map(|t| t.name.to_string()).collect()
    } else if arch.is_empty() {
        matrix.archs.clone()
    } else {
        arch.to_vec()
    };
    names.iter().map(|n| kiln_ir::Target::by_name(n).map_err(Into::into)).collect()
}

#[cfg(not(feature = "llvm"))]
fn build(
    _: Vec<String>,
    _: bool,
    _: Vec<String>,
    _: PathBuf,
    _: Option<PathBuf>,
    _: Option<PathBuf>,
    _: Option<PathBuf>,
    _: bool,
) -> Result<()> {
    bail!("this kiln is the runtime-only build (no LLVM); build packages with the full `kiln`")
}

#[cfg(feature = "llvm")]
fn build(
    arch: Vec<String>,
    all_archs: bool,
    kernel: Vec<String>,
    out: PathBuf,
    cache: Option<PathBuf>,
    times: Option<PathBuf>,
    matrix: Option<PathBuf>,
    strict: bool,
) -> Result<()> {
    use anyhow::Context;
    use kiln_codegen::package::{build_package, default_cache_dir, Job};
    use kiln_ir::package::{KernelRoutes, VariantRoute};

    let matrix = match &matrix {
        Some(p) => {
            let text =
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            kiln_specs::parse_build_matrix(&p.display().to_string(), &text)?
        }
        None => kiln_specs::build_matrix(),
    };
    let targets = targets_for(&arch, all_archs, &matrix)?;
    let lib = kiln_specs::library();
    for k in &kernel {
        if !lib.iter().any(|f| f.name == k) {
            let names: Vec<&str> = lib.iter().map(|f| f.name).collect();
            bail!("unknown kernel `{k}`; the library has: {}", names.join(", "));
        }
    }
    let families: Vec<_> = lib
        .iter()
        .filter(|f| kernel.is_empty() || kernel.iter().any(|k| k == f.name))
        .filter(|f| matrix.kernels.is_empty() || matrix.kernels.iter().any(|k| k == f.name))
        .collect();
    let mut jobs = vec![];
    for f in &families {
        for v in &f.variants {
            for &t in &targets {
                let ir = (v.build)(t, t.default_wave());
                kiln_ir::verify(&ir, Some(t))
                    .with_context(|| format!("{}/{} for {}", f.name, v.name, t.name))?;
                jobs.push(Job { kernel: f.name.into(), variant: v.name.into(), target: t, ir });
            }
        }
    }
    let routes = families
        .iter()
        .map(|f| KernelRoutes {
            kernel: f.name.into(),
            baseline: f.baseline().name.into(),
            variants: f.variants[1..]
                .iter()
                .map(|v| VariantRoute { variant: v.name.into(), admit: v.admit.clone() })
                .collect(),
        })
        .collect();
    let cache = cache.unwrap_or_else(default_cache_dir);
    eprintln!(
        "kiln build: {} jobs ({} families x variants x {} archs) -> {}",
        jobs.len(),
        families.len(),
        targets.len(),
        out.display()
    );
    let rep = build_package(
        &jobs,
        routes,
        &matrix.budgets,
        strict,
        &out,
        &cache,
        &kiln_codegen::Options::default(),
        std::io::IsTerminal::is_terminal(&std::io::stderr()),
    )?;
    print!("{}", report::resource_report(&rep.manifest));
    if rep.refused_cache_entries > 0 {
        eprintln!(
            "note: {} cache entr(ies) did not match their seal (edited or corrupted) and were \
             compiled again",
            rep.refused_cache_entries
        );
    }
    if !rep.unchecked.is_empty() {
        eprintln!(
            "warning: {} budget check(s) not made, the resource was not measured (--strict \
             fails the build):",
            rep.unchecked.len()
        );
        for u in &rep.unchecked {
            eprintln!("  {u}");
        }
    }
    let compile_ms: f64 = rep.compile_times.iter().map(|t| t.3.as_secs_f64() * 1e3).sum();
    println!(
        "{} objects: {} compiled ({:.1} ms per kernel x arch on average, summed over threads), {} from cache; {:.2} s wall; package {}",
        rep.manifest.objects.len(),
        rep.compiled,
        if rep.compiled > 0 { compile_ms / rep.compiled as f64 } else { 0.0 },
        rep.cached,
        rep.elapsed.as_secs_f64(),
        out.display()
    );
    if let Some(p) = times {
        let mut s = String::from("kernel,variant,arch,compile_ms\n");
        for (k, v, a, t) in &rep.compile_times {
            s += &format!("{k},{v},{a},{:.2}\n", t.as_secs_f64() * 1e3);
        }
        std::fs::write(&p, s).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}
