use kiln_codegen::{compile, Options};
use kiln_ir::TARGETS;

#[test]
fn smoke() {
    let opts = Options { emit_asm: true, emit_llvm: true, ..Default::default() };
    for t in TARGETS {
        let w = t.default_wave();
        let mut ks = kiln_codegen_tests::kernels::examples(w);
        ks.push(kiln_codegen_tests::kernels::op_zoo(w));
        for k in ks {
            match compile(&k, t, &opts) {
                Ok(o) => println!("{} {} {:?}", t.name, k.name, o.resources),
                Err(e) => println!("ERR {e}"),
            }
        }
    }
}
