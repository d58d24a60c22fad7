//! Compile time of the example kernels for every arch (release build, this machine):
//! `cargo run --release -p kiln-codegen-tests --example compile_times`. Prints ms per
//! kernel x arch (wall clock), the average and the total, and the CPU time (this process plus
//! ld.lld / ptxas children), which stays meaningful when other builds share the machine; the goal
//! is an average under 50 ms.

use kiln_codegen::{compile, find_ptxas, Options};
use kiln_codegen_tests::kernels;
use kiln_ir::TARGETS;
use std::time::Instant;

/// CPU seconds used so far by this process and its waited-for children (ld.lld, ptxas).
fn cpu_seconds() -> f64 {
    let secs = |who| {
        // SAFETY: getrusage fills the zeroed struct it is given.
        let mut r: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(who, &mut r) };
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        tv(r.ru_utime) + tv(r.ru_stime)
    };
    secs(libc::RUSAGE_SELF) + secs(libc::RUSAGE_CHILDREN)
}

fn main() {
    let opts = Options::default();
    // Warm up: LLVM target initialization and the tool look-ups happen once per process.
    let _ = compile(
        &kiln_ir::examples::wave_sum(32),
        kiln_ir::Target::by_name("gfx1100").unwrap(),
        &opts,
    );
    let _ = find_ptxas();
    let names: Vec<String> = kernels::examples(32).iter().map(|k| k.name.clone()).collect();
    print!("{:<8}", "arch");
    for n in &names {
        print!(" {n:>14}");
    }
    println!();
    let (mut total, mut n) = (0.0f64, 0u32);
    let cpu0 = cpu_seconds();
    for t in TARGETS {
        print!("{:<8}", t.name);
        for k in kernels::examples(t.default_wave()) {
            let start = Instant::now();
            compile(&k, t, &opts).unwrap_or_else(|e| panic!("{e}"));
            let ms = start.elapsed().as_secs_f64() * 1e3;
            total += ms;
            n += 1;
            print!(" {ms:>14.1}");
        }
        println!();
    }
    let cpu = (cpu_seconds() - cpu0) * 1e3;
    println!(
        "{n} kernel x arch compiles: wall total {total:.0} ms, average {:.1} ms; CPU total {cpu:.0} ms, average {:.1} ms (ptxas {})",
        total / n as f64,
        cpu / n as f64,
        if find_ptxas().is_some() { "included" } else { "absent" }
    );
}
