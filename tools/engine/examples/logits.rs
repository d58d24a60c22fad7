//! Writes the engine's logits for some ids, teacher-forced, as raw little-endian f32
//! (`positions x vocab`), to compare with another implementation:
//! `cargo run -p kiln-engine --example logits -- MODEL.gguf PACKAGE OUT.f32 CHUNK ID...`
use kiln_engine::model::{Decoder, StepGraph, Weights};
use kiln_engine::ModelFile;
use kiln_runtime::{CpuOptions, Device, Package, Runtime};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().collect();
    let m = ModelFile::open(&a[1])?;
    let rt = Runtime::load(&Device::cpu(CpuOptions::default()), &Package::open(&a[2])?)?;
    let chunk: usize = a[4].parse()?;
    let ids: Vec<u32> = a[5..].iter().map(|s| s.parse()).collect::<Result<_, _>>()?;
    let w = Weights::upload(&rt, &m.gguf, &m.config)?;
    let step = StepGraph::build(&rt, &m.config, &w, ids.len().div_ceil(64) * 64)?;
    let mut dec = Decoder::new(&rt, &m.config, &step)?;
    let mut out = vec![];
    for c in ids.chunks(chunk) {
        for v in dec.step(c, true)?.logits.expect("asked") {
            out.extend(v.to_le_bytes());
        }
    }
    std::fs::write(&a[3], out)?;
    // The last step's intermediate buffers (KILN_DUMP=dir): q, k, v, qr, att, h, x as
    // f32, and layer 0's KV cache (Q8_0 blocks, `[kv_head][ctx][head_dim]`).
    if let Ok(dir) = std::env::var("KILN_DUMP") {
        for name in ["q", "k", "v", "qr", "att", "h", "x"] {
            let v: Vec<f32> = step.graph.buffer(name).expect("a buffer").read()?;
            let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            std::fs::write(format!("{dir}/{name}.f32"), b)?;
        }
        for name in ["kc.0", "vc.0"] {
            let b = step.graph.buffer(name).expect("a buffer").read_bytes()?;
            std::fs::write(format!("{dir}/{name}.q8_0"), b)?;
        }
    }
    Ok(())
}
