//! The weights on the device: every tensor the step reads, in one buffer group, the layer
//! matrices repacked by the library's `repack_*` kernels once at load.

use super::{u32_of, ModelError};
use crate::config::{Append, Config, MatType, Norms};
use crate::gguf::{Gguf, TensorInfo};
use kiln_ir::ScalarType;
use kiln_runtime::{Args, Buffer, Runtime};
use std::collections::BTreeMap;

/// The weights on the device, by graph buffer name.
pub struct Weights {
    pub(super) buffers: BTreeMap<String, Buffer>,
    /// Bytes uploaded from the file.
    pub bytes: usize,
    /// Where the step's norms run (the kernels were checked for this placement).
    pub norms: Norms,
    /// Where the step's K/V append runs (checked likewise).
    pub append: Append,
}

impl Weights {
    /// Uploads every tensor the graph reads; repacks the layer matrices with `repack_<fmt>`. The
    /// norms go where [`Config::norms_for`] says the package lets them.
    pub fn upload(rt: &Runtime, g: &Gguf, cfg: &Config) -> Result<Weights, ModelError> {
        Weights::upload_with(rt, g, cfg, cfg.norms_for(rt))
    }

    /// [`Weights::upload`] for a step with its norms placed by `norms` (refused, naming the
    /// kernels, when the package lacks what that placement calls); the K/V append where
    /// [`Config::append_for`] says.
    pub fn upload_with(
        rt: &Runtime,
        g: &Gguf,
        cfg: &Config,
        norms: Norms,
    ) -> Result<Weights, ModelError> {
        Weights::upload_placed(rt, g, cfg, norms, cfg.append_for(rt, norms))
    }

    /// [`Weights::upload_with`] with the K/V append placed by `append` (refused likewise).
    pub fn upload_placed(
        rt: &Runtime,
        g: &Gguf,
        cfg: &Config,
        norms: Norms,
        append: Append,
    ) -> Result<Weights, ModelError> {
        if norms == Norms::Split && !(append == Append::InQkv && cfg.split_fits()) {
            return Err(ModelError::Split);
        }
        let needed = cfg.kernels_with(norms, append);
        let have = rt.kernels();
        let missing: Vec<String> =
            needed.iter().filter(|k| !have.contains(&k.as_str())).cloned().collect();
        if !missing.is_empty() {
            return Err(ModelError::MissingKernels { missing, needed });
        }
        let dev = rt.device();
        let mut w = Weights { buffers: BTreeMap::new(), bytes: 0, norms, append };
        let info = |name: &str| -> &TensorInfo {
            g.tensor(name).expect("the config checked every tensor")
        };
        // The matrices to repack, in the order their buffers are laid out.
        let mut mats: Vec<(String, MatType)> = vec![];
        match cfg.output {
            Some(m) => mats.push(("output".into(), m)),
            // Tied: the LM head reads a repacked copy of the embedding (`gemv_q8_0_rp`: its
            // quants in 16-byte words, against 2-byte loads of ggml's 34-byte blocks), at the
            // cost of a second copy in memory.
            None => mats.push(("token_embd".into(), MatType::Q8_0)),
        }
        for (i, l) in cfg.layers.iter().enumerate() {
            for (name, m) in [
                ("attn_q", l.q),
                ("attn_k", l.k),
                ("attn_v", l.v),
                ("attn_output", l.o),
                ("ffn_gate", l.gate_up),
                ("ffn_up", l.gate_up),
                ("ffn_down", l.down),
            ] {
                mats.push((format!("blk.{i}.{name}"), m));
            }
        }
        // Every buffer the step reads, in one group ([`Device::alloc_group`]): the weights are
        // one address range holding nothing else, which one L2 window covers
        // ([`super::StepGraph::l2_window`]). Tensors as the file has them (the norms' f32 values, the
        // embedding's blocks as bytes), then each matrix's repacked quants and scales.
        use crate::gguf::GgmlType;
        let mut raws = vec![
            ("token_embd".to_string(), "token_embd.weight".to_string()),
            ("output_norm".into(), "output_norm.weight".into()),
        ];
        for i in 0..cfg.layers.len() {
            for n in ["attn_norm", "ffn_norm"] {
                raws.push((format!("blk.{i}.{n}"), format!("blk.{i}.{n}.weight")));
            }
        }
        let mut specs = vec![];
        for (_, t) in &raws {
            let t = info(t);
            specs.push(match t.ty {
                // Norm weights: the kernels take f32 buffers.
                GgmlType::F32 => (ScalarType::F32, g.data(t).len() / 4),
                // Blocks as bytes, for the kernels that read ggml's layout.
                GgmlType::Q8_0
                | GgmlType::Q4_0
                | GgmlType::Q4_1
                | GgmlType::F16
                | GgmlType::Bf16 => (ScalarType::U8, g.data(t).len()),
            });
        }
        for (name, m) in &mats {
            let t = info(&format!("{name}.weight"));
            let blocks = t.dims[0] as usize * t.dims[1] as usize / 32;
            specs.push((ScalarType::U8, blocks * m.quant_bytes()));
            specs.push((m.scale_type(), blocks));
        }
        let mut group = dev.alloc_group(&specs)?.into_iter();
        for (as_name, t) in &raws {
            let t = info(t);
            let data = g.data(t);
            let b = group.next().expect("a buffer a spec");
            match t.ty {
                GgmlType::F32 => {
                    let v: Vec<f32> = data
                        .chunks_exact(4)
                        .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
                        .collect();
                    b.write(&v)?
                }
                _ => b.write_bytes(data)?,
            }
            w.bytes += data.len();
            w.buffers.insert(as_name.clone(), b);
        }
        // The ggml-layout sources of the repacks live until the synchronize below: a device
        // buffer is freed when dropped (`cuMemFree`), and the repack that reads it may still
        // be queued.
        let mut staging = vec![];
        for (name, m) in &mats {
            let t = info(&format!("{name}.weight"));
            let (k, n) = (t.dims[0] as usize, t.dims[1] as usize);
            // The tied embedding's blocks are on the device already (and counted).
            let src = match cfg.output {
                None if name == "token_embd" => w.buffers["token_embd"].clone(),
                _ => {
                    let data = g.data(t);
                    w.bytes += data.len();
                    let b = dev.upload(data)?;
                    staging.push(b.clone());
                    b
                }
            };
            let (wq, ws) = (group.next().expect("quants"), group.next().expect("scales"));
            let args = Args::new()
                .buffer("w", &src)
                .buffer("wq", &wq)
                .buffer("ws", &ws)
                .scalar("n", u32_of(n))
                .scalar("k", u32_of(k));
            rt.launch(&format!("repack_{}", m.name()), &args)?;
            w.buffers.insert(format!("{name}.q"), wq);
            w.buffers.insert(format!("{name}.s"), ws);
        }
        rt.synchronize()?;
        drop(staging);
        Ok(w)
    }
}
