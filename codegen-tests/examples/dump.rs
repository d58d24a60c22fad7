//! Prints the assembly or LLVM IR of a test kernel: `dump KERNEL VARIANT ARCH [WAVE] [asm|llvm]`.

use kiln_codegen::{compile, Options};
use kiln_ir::Target;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [kernel, variant, arch, rest @ ..] = args.as_slice() else {
        return Err("usage: dump KERNEL VARIANT ARCH [WAVE] [asm|llvm]".into());
    };
    let t = Target::by_name(arch)?;
    let wave = rest.first().and_then(|w| w.parse().ok()).unwrap_or(t.default_wave());
    let llvm = rest.iter().any(|a| a == "llvm");
    let k = kiln_codegen_tests::kernels::by_name(kernel, variant, wave)
        .or_else(|| kiln_codegen_tests::kernels::library(kernel, variant, t, wave))
        .ok_or("unknown kernel")?;
    let o = compile(&k, t, &Options { emit_asm: true, emit_llvm: true, ..Options::default() })?;
    println!("{}", if llvm { o.llvm_ir } else { o.asm }.unwrap_or_default());
    eprintln!("{:?}", o.resources);
    Ok(())
}
