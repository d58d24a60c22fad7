//! `kiln`: the command line (DESIGN.md section 8). Each command lives in its own file under
//! `cmd/`; this file parses the arguments and dispatches.
//!
//! Built with the default `llvm` feature it compiles (`build`, `inspect --llvm`); built with
//! `--no-default-features` it is the small runtime-only binary that goes to GPU machines.

use clap::{Parser, Subcommand};
use kiln::cmd;

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
    #[cfg(feature = "llvm")]
    Build(cmd::build::BuildArgs),
    /// Build the kernel library (needs the full `kiln`; this is the runtime-only build).
    #[cfg(not(feature = "llvm"))]
    Build {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        rest: Vec<String>,
    },
    /// Show a package's IR, LLVM IR, ISA or resources.
    Inspect(cmd::inspect::InspectArgs),
    /// One call of a kernel on your own data (.npy in, .npy out).
    Run(cmd::run::RunArgs),
    /// Every variant vs the interpreter and its baseline.
    Parity(cmd::parity::ParityArgs),
    /// On a GPU: median us, GB/s, against the bandwidth floor.
    Bench(cmd::bench::BenchArgs),
    /// Per-arch tuning of the families' knobs: candidates gated on parity, timed, the winner per
    /// shape bucket written to specs/tuning/<arch>.ron with provenance.
    Tune(cmd::tune::TuneArgs),
    /// The example engine: greedy generation from a GGUF model, text and tokens/s.
    Generate(cmd::generate::GenerateArgs),
    /// A GGUF model of a real shape (smollm2-135m, llama3-8b) with random weights, for timing.
    RandomModel(cmd::random_model::RandomModelArgs),
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
        #[cfg(feature = "llvm")]
        Cmd::Build(a) => cmd::build::build(a),
        #[cfg(not(feature = "llvm"))]
        Cmd::Build { .. } => Err(anyhow::anyhow!(
            "this kiln is the runtime-only build (no LLVM); build packages with the full `kiln`"
        )),
        Cmd::Inspect(a) => cmd::inspect::inspect(a),
        Cmd::Run(a) => cmd::run::run(a),
        Cmd::Parity(a) => cmd::parity::parity(a),
        Cmd::Bench(a) => cmd::bench::bench(a),
        Cmd::Tune(a) => cmd::tune::tune(a),
        Cmd::Generate(a) => cmd::generate::generate_cmd(a),
        Cmd::RandomModel(a) => cmd::random_model::random_model(a),
    };
    if let Err(e) = r {
        eprintln!("error: {}", error_text(&e));
        std::process::exit(1);
    }
}

/// The error and its causes joined by `: `, leaving out a cause whose text the message already
/// holds (library errors put their cause in their own message; the chain would repeat it).
fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let c = cause.to_string();
        if !text.contains(&c) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&c);
        }
    }
    text
}
