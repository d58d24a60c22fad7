//! `kiln generate`: the example engine (`kiln-engine`) on a GGUF model: the prompt in steps of
//! up to 8 tokens, then greedy decode, one captured decode graph replayed a step; prints the
//! text as it comes and tokens/s for the prompt and for decode.

use super::{load_package, open_device, open_package};
use anyhow::{Context, Result};
use kiln_engine::generate::generate;
use kiln_engine::model::{Decoder, StepGraph, Weights};
use kiln_engine::oracle::{compare, Fixture};
use kiln_engine::ModelFile;
use kiln_runtime::Overrides;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `kiln generate`.
#[derive(clap::Args)]
#[command(after_help = "\
The package must hold the kernels the model calls (the error lists them and the `kiln build
--kernel` line that makes them); the default library build has them all. On the cpu device
(the interpreter) a token of SmolLM2-135M takes tens of seconds: ask for a few.")]
pub struct GenerateArgs {
    /// The GGUF model (llama architecture; Q8_0 embedding; Q8_0 / Q4_0 / Q4_1 matrices).
    #[arg(long)]
    model: PathBuf,
    /// The prompt (raw text: add a chat template yourself).
    #[arg(long, required_unless_present_any = ["oracle", "prompt_file"], conflicts_with = "prompt_file")]
    prompt: Option<String>,
    /// The prompt from a file, less one trailing newline (as the oracle reads prompts).
    #[arg(long)]
    prompt_file: Option<PathBuf>,
    /// Also write the ids, the text and the timings as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Instead of generating: compare the logits with llama.cpp's fixture (teacher-forced,
    /// `tools/engine/tests/data/oracle-*.json`) and print the agreement.
    #[arg(long)]
    oracle: Option<PathBuf>,
    /// With --oracle: positions a prompt (default all).
    #[arg(long)]
    positions: Option<usize>,
    /// With --oracle: tokens a step (1..=8).
    #[arg(long, default_value_t = 8)]
    chunk: usize,
    /// Tokens to generate (stops early at end of sequence).
    #[arg(short = 'n', default_value_t = 128)]
    n: usize,
    /// cpu, cuda or hip.
    #[arg(long, default_value = "cpu")]
    device: String,
    /// The arch the cpu device emulates (default: the package's first wave-32 arch).
    #[arg(long)]
    arch: Option<String>,
    /// Package directory.
    #[arg(long, default_value = "dist")]
    package: PathBuf,
    /// KV cache capacity (positions); default the prompt plus `n`, rounded up to 64.
    #[arg(long)]
    ctx: Option<usize>,
}

/// `kiln generate`.
pub fn generate_cmd(a: GenerateArgs) -> Result<()> {
    let t0 = Instant::now();
    let m = ModelFile::open(&a.model)?;
    let fixture = match &a.oracle {
        Some(p) => Some(Fixture::parse(
            &std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?,
        )?),
        None => None,
    };
    let prompt = match (&a.prompt, &a.prompt_file) {
        (Some(p), _) => p.clone(),
        (None, Some(f)) => {
            let t =
                std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
            t.strip_suffix('\n').map(str::to_string).unwrap_or(t)
        }
        (None, None) => String::new(),
    };
    let prompt_ids = m.tokenizer.encode(&prompt).context("tokenizing the prompt")?;
    let longest =
        fixture.as_ref().map_or(0, |f| f.prompts.iter().map(|p| p.ids.len()).max().unwrap_or(0));
    let pkg = open_package(&a.package)?;
    let dev = open_device(&a.device, a.arch.clone())?;
    let rt = load_package(&dev, &pkg, &a.package, Overrides::from_env())?;
    let weights = Weights::upload(&rt, &m.gguf, &m.config)
        .with_context(|| format!("loading {} on {}", a.model.display(), dev.name()))?;
    let ctx = a.ctx.unwrap_or((prompt_ids.len() + a.n).max(longest).div_ceil(64) * 64);
    let step = StepGraph::build(&rt, &m.config, &weights, ctx)?;
    let mut dec = Decoder::new(&rt, &m.config, &step)?;
    let c = &m.config;
    eprintln!(
        "{}: {} layers, hidden {}, {} heads / {} KV, vocab {}; {:.1} MB of weights on {} ({}), \
         {} nodes a step, context {ctx}; ready in {:.2} s",
        a.model.display(),
        c.n_layers,
        c.hidden,
        c.n_heads,
        c.n_kv_heads,
        c.vocab,
        weights.bytes as f64 / 1e6,
        dev.name(),
        rt.arch(),
        dec.nodes(),
        t0.elapsed().as_secs_f64()
    );
    if let Some(fx) = fixture {
        let t = Instant::now();
        let agreement = compare(&mut dec, &fx, a.chunk, a.positions, &mut |p, ag| {
            eprintln!("prompt {p}: {ag} ({:.1} s)", t.elapsed().as_secs_f64());
        })?;
        println!("{}: {agreement}", fx.model);
        for (p, i, k, l) in &agreement.mismatches {
            println!("  top-1 differs at prompt {p} position {i}: kiln {k}, llama.cpp {l}");
        }
        return Ok(());
    }
    print!("{prompt}");
    std::io::stdout().flush()?;
    let g = generate(&mut dec, &m.tokenizer, &prompt, a.n, &mut |s| {
        print!("{s}");
        let _ = std::io::stdout().flush();
    })?;
    println!();
    if let Some(path) = &a.json {
        let v = serde_json::json!({
            "model": a.model.display().to_string(),
            "device": dev.name(),
            "prompt_ids": g.prompt,
            "ids": g.tokens,
            "text": m.tokenizer.decode(&g.tokens)?,
            "prompt_s": g.prompt_time.as_secs_f64(),
            "decode_s": g.decode_time.as_secs_f64(),
            "prompt_tokens_per_s": g.prompt_rate(),
            "decode_tokens_per_s": g.decode_rate(),
        });
        std::fs::write(path, serde_json::to_string_pretty(&v)? + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
    }
    eprintln!(
        "prompt: {} tokens in {:.3} s ({:.2} tokens/s); decode: {} tokens in {:.3} s ({:.2} \
         tokens/s){}",
        g.prompt.len(),
        g.prompt_time.as_secs_f64(),
        g.prompt_rate(),
        g.tokens.len().saturating_sub(1),
        g.decode_time.as_secs_f64(),
        g.decode_rate(),
        if g.stopped_at_eos { "; stopped at end of sequence" } else { "" }
    );
    Ok(())
}
