//! `kiln random-model`: a GGUF model of a real shape with random weights (`kiln_engine::random`),
//! for timing the engine and llama.cpp on the same file where the real model is not at hand.
//! The file is written beside its final name and renamed into place when whole, so an
//! interrupted run leaves no half file under that name.

use anyhow::{bail, Context, Result};
use kiln_engine::gguf::{GgmlType, Gguf};
use kiln_engine::random::{write_random, write_vocab, Shape, SHAPES};
use std::io::BufWriter;
use std::path::PathBuf;

/// Arguments of `kiln random-model`.
#[derive(clap::Args)]
pub struct RandomModelArgs {
    /// The shape (smollm2-135m, llama3-8b).
    #[arg(long, required_unless_present = "vocab_only")]
    shape: Option<String>,
    /// The matrices' type: q8_0, q4_0 or q4_1 (the embedding and an untied LM head are Q8_0).
    #[arg(long = "type", default_value = "q8_0")]
    ty: String,
    /// A GGUF whose tokenizer is copied (a model, or a file of metadata only).
    #[arg(long)]
    vocab_from: PathBuf,
    /// The seed of the weights.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write only the vocabulary of --vocab-from (no tensors; --shape and --type are not used):
    /// a small file to carry to a machine and pass there as --vocab-from.
    #[arg(long)]
    vocab_only: bool,
    /// Where to write it.
    #[arg(short = 'o', long)]
    out: PathBuf,
}

/// `kiln random-model`.
pub fn random_model(a: RandomModelArgs) -> Result<()> {
    let ty = match a.ty.to_ascii_lowercase().as_str() {
        "q8_0" => GgmlType::Q8_0,
        "q4_0" => GgmlType::Q4_0,
        "q4_1" => GgmlType::Q4_1,
        other => bail!("--type {other}: expected q8_0, q4_0 or q4_1"),
    };
    let vocab = Gguf::open(&a.vocab_from)?;
    let shape = match a.vocab_only {
        true => None,
        false => Some(Shape::named(a.shape.as_deref().unwrap_or_default())?),
    };
    let tmp = a.out.with_extension("gguf.partial");
    let file =
        std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let mut w = BufWriter::with_capacity(1 << 22, file);
    let r = match &shape {
        None => write_vocab(&mut w, &vocab),
        Some(shape) => {
            let bar = indicatif::ProgressBar::new(shape.tensors(ty).len() as u64);
            if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
                bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
            }
            let r = write_random(&mut w, shape, ty, &vocab, a.seed, &mut |t| {
                bar.set_message(t.name.clone());
                bar.inc(1);
            });
            bar.finish_and_clear();
            r
        }
    };
    drop(w);
    if let Err(e) = r {
        let _ = std::fs::remove_file(&tmp);
        return Err(e.into());
    }
    std::fs::rename(&tmp, &a.out).with_context(|| format!("renaming into {}", a.out.display()))?;
    match shape {
        None => eprintln!("{}: the vocabulary of {}", a.out.display(), a.vocab_from.display()),
        Some(shape) => eprintln!(
            "{}: {} with {} matrices, {:.1} MB of weights (shapes: {})",
            a.out.display(),
            shape.name,
            a.ty,
            shape.weight_bytes(ty) as f64 / 1e6,
            SHAPES.map(|s| s.name).join(", ")
        ),
    }
    Ok(())
}
