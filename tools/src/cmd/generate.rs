//! `kiln generate`: the example engine (`kiln-engine`) on a GGUF model: the prompt in steps of
//! up to 8 tokens, then greedy decode, one captured decode graph replayed a step; prints the
//! text as it comes and tokens/s for the prompt and for decode.

use super::{load_package, load_package_only, open_device, open_package, package_catalog};
use anyhow::{Context, Result};
use kiln_engine::config::{Append, Norms};
use kiln_engine::generate::generate;
use kiln_engine::model::{step_kernels, Decoder, L2Plan, StepGraph, TokenRead, Weights};
use kiln_engine::oracle::{compare, Fixture};
use kiln_engine::ModelFile;
use kiln_runtime::{DeviceKind, L2Applied, Overrides};
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
    /// After generating: time a decode step's replay on the device, each node alone (in a graph
    /// of 10 copies of it), and each kernel inside the step (the step replayed without its
    /// nodes), against the bandwidth floor of the weights.
    #[arg(long)]
    profile: bool,
    /// With --profile: the copy bandwidth for the floor, GB/s (default: measured in this run by
    /// a device-to-device copy, as `kiln bench` does; needed on hip).
    #[arg(long)]
    bandwidth: Option<f64>,
    /// Where the layers' RMSNorms run: `folded` into the GEMVs that read them, `residual` in the
    /// tails of the residual GEMVs that write their input (slower on the H200: for comparing),
    /// `split` between the residual GEMV that writes their input (its squares and quants) and
    /// the GEMV that reads them (the scale), `apart` as nodes of their own, or `auto` (folded
    /// where the package has the `_norm` kernels for the arch and the hidden size fits them,
    /// else apart).
    #[arg(
        long,
        default_value = "auto",
        value_parser = ["auto", "folded", "residual", "split", "apart"]
    )]
    norms: String,
    /// Where the layers' K/V append runs: `fused` into the Q/K/V GEMV (the `_qkv_cache`
    /// kernels), `apart` as a `kv_append_q8_0` node, or `auto` (fused where the package has the
    /// kernels).
    #[arg(long, default_value = "auto", value_parser = ["auto", "fused", "apart"])]
    append: String,
    /// How the host reads each decode step's token: `in-place` (the graph's last node copies it
    /// into host-mapped memory, `copy_at_i32`), `copy` (a device-to-host copy queued after each
    /// step), or `auto` (in place where the package has the kernel).
    #[arg(long, default_value = "auto", value_parser = ["auto", "in-place", "copy"])]
    read_back: String,
    /// How the step asks the L2 to treat its memory: `stream` the weights (evicted first, so
    /// they do not evict the KV cache and the activations the next step reads again), `keep`
    /// the KV caches (persisting in the set-aside L2), `off`, or `auto` (`keep` where the
    /// device holds all of the caches, else `off`). Only the cuda device applies it; the
    /// tokens are the same under every choice.
    #[arg(long, default_value = "auto", value_parser = ["auto", "off", "stream", "keep"])]
    l2: String,
    /// Which of the package's kernels to load: `used` (those the step calls, where the norms
    /// and the K/V append go decided from the package's manifest) or `all`. Where the
    /// driver places the code moves the step (on the H200 the SmolLM2-shaped Q8_0 step was 4%
    /// faster with only its own modules loaded).
    #[arg(long, default_value = "used", value_parser = ["used", "all"])]
    kernels: String,
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
    // Where the norms and the K/V append go, and how the token is read back, from what the
    // package holds for the device's arch (its manifest: nothing is loaded to decide); then
    // `used` loads only the step's kernels, `all` the whole package.
    let catalog = package_catalog(&dev, &pkg, &a.package)?;
    let norms = match a.norms.as_str() {
        "folded" => Norms::Folded,
        "residual" => Norms::InResidual,
        "split" => Norms::Split,
        "apart" => Norms::Apart,
        _ => m.config.norms_for(&catalog),
    };
    let append = match a.append.as_str() {
        "fused" => Append::InQkv,
        "apart" => Append::Apart,
        _ => m.config.append_for(&catalog, norms),
    };
    let read = match a.read_back.as_str() {
        "in-place" => TokenRead::InPlace,
        "copy" => TokenRead::Copy,
        _ => TokenRead::for_package(&catalog),
    };
    let rt = match a.kernels.as_str() {
        "used" => {
            let used = step_kernels(&m.config, norms, append, read);
            let used: Vec<&str> = used.iter().map(String::as_str).collect();
            load_package_only(&dev, &pkg, &a.package, Overrides::from_env(), &used)?
        }
        _ => load_package(&dev, &pkg, &a.package, Overrides::from_env())?,
    };
    let weights = Weights::upload_placed(&rt, &m.gguf, &m.config, norms, append)
        .with_context(|| format!("loading {} on {}", a.model.display(), dev.name()))?;
    let ctx = a.ctx.unwrap_or((prompt_ids.len() + a.n).max(longest).div_ceil(64) * 64);
    if ctx > m.config.ctx_train {
        // As llama.cpp does: allowed (the kernels take any context), but RoPE past the training
        // context is outside what the model learned.
        eprintln!(
            "warning: a context of {ctx} positions is past the model's training context ({}); \
             the text past it may degrade",
            m.config.ctx_train
        );
    }
    let mut step = StepGraph::build_with(&rt, &m.config, &weights, ctx, read)?;
    // The floor's copy bandwidth is measured before the step's L2 window: with its persisting
    // part set aside the copy measured far less on an H100 (1345-1365 GB/s with 28 MB set aside
    // at ~2013 positions, about 3000 with 6 MB: bench/results/residual-2026-12-05.md), while the
    // 8B step's LM head GEMV, which only reads, read 3.17 TB/s with 17.8 MB set aside.
    let floor = match a.profile {
        true => Some(super::floor(a.bandwidth, None, rt.device())?),
        false => None,
    };
    let plan = match a.l2.as_str() {
        "stream" => L2Plan::StreamWeights,
        "keep" => L2Plan::KeepCache,
        "off" => L2Plan::Off,
        _ => L2Plan::Auto,
    };
    let (applied, others) = step.set_l2(&rt, &weights, plan)?;
    if applied != L2Applied::Ignored {
        eprintln!("L2 (`--l2 {}`): {applied:?}", plan.name());
    }
    if !others.is_empty() {
        eprintln!("  the window also covers {} other buffers: {}", others.len(), others.join(" "));
    }
    let mut dec = Decoder::new(&rt, &m.config, &step)?;
    let c = &m.config;
    eprintln!(
        "{}: {} layers, hidden {}, {} heads / {} KV, vocab {}; {:.1} MB of weights on {} ({}), \
         {} nodes a step (norms {:?}, K/V append {:?}, tokens read {read:?}), context {ctx}; \
         ready in {:.2} s",
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
        weights.norms,
        weights.append,
        t0.elapsed().as_secs_f64()
    );
    if let Some(fx) = fixture {
        let t = Instant::now();
        let agreement = compare(&mut dec, &fx, a.chunk, a.positions, &mut |p, ag| {
            let digest = ag.digests.last().map_or("", |d| &d[..16]);
            eprintln!("prompt {p}: {ag}; logits {digest} ({:.1} s)", t.elapsed().as_secs_f64());
        })?;
        println!("{}: {agreement}", fx.model);
        // Equal digests from two runs (two devices, or the cpu device emulating this arch): the
        // same logits bit for bit at every position compared.
        println!("logits digests (BLAKE3 per prompt): {}", agreement.digests.join(" "));
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
    let profile = match &floor {
        Some(floor) => Some(profile(&rt, &mut dec, &mut step, weights.bytes, &g, floor)?),
        None => None,
    };
    if let Some(path) = &a.json {
        let v = serde_json::json!({
            "profile": profile,
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

/// `--profile`: a decode step's replay time, each node's own, the sum and the floor; printed,
/// and returned for the JSON.
fn profile(
    rt: &kiln_runtime::Runtime,
    dec: &mut Decoder<'_>,
    step: &mut StepGraph,
    weight_bytes: usize,
    g: &kiln_engine::generate::Generation,
    bw: &super::Floor,
) -> Result<serde_json::Value> {
    let bandwidth = bw.gbps;
    let med = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    // The interpreter is slow and its times say little: once each there.
    let (reps, warmup, iters) =
        if rt.device().kind() == DeviceKind::Cpu { (1, 0, 1) } else { (10, 3, 20) };
    let replay = med(dec.time_steps(1, warmup * 5, iters * 10)?);
    // As decode replays it: `pos` rewritten every step, then also the token read back.
    let moving = med(dec.time_decode_steps(warmup * 5, iters * 10, false)?);
    let decoding = med(dec.time_decode_steps(warmup * 5, iters * 10, true)?);
    // Speculative verify: a step of T tokens (causal among themselves) against one.
    let mut verify = vec![];
    for t in [2, 4, 8] {
        if dec.pos + t <= step.ctx_max {
            verify.push((t, med(dec.time_steps(t, warmup * 5, iters * 10)?)));
        }
    }
    step.set_step(dec.pos, 1);
    let nodes = step.graph.profile_nodes(rt, reps, warmup, iters)?;
    let sum: f64 = nodes.iter().map(|n| n.us).sum();
    let wall = g.decode_time.as_secs_f64() * 1e6 / g.tokens.len().saturating_sub(1).max(1) as f64;
    let floor = weight_bytes as f64 / (bandwidth * 1e3);
    // By kernel and variant, in order of first appearance.
    let mut rows: Vec<(String, String, usize, f64)> = vec![];
    for n in &nodes {
        match rows.iter_mut().find(|r| r.0 == n.kernel && r.1 == n.variant) {
            Some(r) => {
                r.2 += 1;
                r.3 += n.us;
            }
            None => rows.push((n.kernel.clone(), n.variant.clone(), 1, n.us)),
        }
    }
    eprintln!(
        "profile of a decode step at position {} ({} nodes):\n  wall time a token {wall:.1} us; \
         the step's graph replay on the device {replay:.1} us (median of {}); the nodes each \
         alone (in a graph of {reps} copies) sum to {sum:.1} us; the weights' bandwidth floor \
         {floor:.1} us ({:.1} MB at {bandwidth:.0} GB/s: {})",
        dec.pos,
        nodes.len(),
        iters * 10,
        weight_bytes as f64 / 1e6,
        bw.json["source"].as_str().unwrap_or("?")
    );
    eprintln!(
        "  the step as decode replays it: {moving:.1} us with `pos` moving (its nodes rewritten \
         each step), {decoding:.1} us with the token also read back"
    );
    for (t, us) in &verify {
        eprintln!(
            "  a step of {t} tokens (speculative verify) {us:.1} us: {:.2}x a step of one, {:.1} us a token",
            us / replay,
            us / *t as f64
        );
    }
    let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(0).max(6);
    eprintln!(
        "  {:<w$} {:<14} {:>5} {:>9} {:>9} {:>6}",
        "kernel", "variant", "nodes", "us each", "us", "share"
    );
    for (k, v, c, us) in &rows {
        eprintln!(
            "  {k:<w$} {v:<14} {c:>5} {:>9.2} {us:>9.1} {:>5.1}%",
            us / *c as f64,
            100.0 * us / sum
        );
    }
    // A node alone runs on warm caches beside its own copies; in the step its neighbours,
    // launch gaps and overlaps count too. The step replayed without each kernel's nodes says
    // what they cost there.
    let rounds = reps.min(3);
    let lo = step.graph.leave_out(rt, rounds, warmup, iters)?;
    eprintln!(
        "  in the step (the step replayed without each kernel's nodes; whole {:.1} us, medians of {}):",
        lo.whole_us,
        rounds * iters
    );
    eprintln!(
        "  {:<w$} {:>5} {:>12} {:>12} {:>12} {:>12}",
        "kernel", "nodes", "without us", "in step us", "a node", "alone a node"
    );
    for k in &lo.kernels {
        let alone: f64 = rows.iter().filter(|r| r.0 == k.kernel).map(|r| r.3).sum();
        let in_step = lo.in_step_us(k);
        eprintln!(
            "  {:<w$} {:>5} {:>12.1} {in_step:>12.1} {:>12.2} {:>12.2}",
            k.kernel,
            k.nodes,
            k.without_us,
            in_step / k.nodes as f64,
            alone / k.nodes as f64
        );
    }
    Ok(serde_json::json!({
        "position": dec.pos,
        "wall_us_per_token": wall,
        "replay_us": replay,
        "replay_pos_moving_us": moving,
        "replay_decoding_us": decoding,
        "verify_steps_us": verify.iter().map(|(t, us)| serde_json::json!({"tokens": t, "us": us})).collect::<Vec<_>>(),
        "nodes_sum_us": sum,
        "floor_us": floor,
        "bandwidth_gbs": bandwidth,
        "bandwidth": bw.json,
        "weight_bytes": weight_bytes,
        "kernels": rows.iter().map(|(k, v, c, us)| serde_json::json!({
            "kernel": k, "variant": v, "nodes": c, "us": us})).collect::<Vec<_>>(),
        "in_step": {
            "whole_us": lo.whole_us,
            "kernels": lo.kernels.iter().map(|k| serde_json::json!({
                "kernel": k.kernel, "nodes": k.nodes, "without_us": k.without_us,
                "in_step_us": lo.in_step_us(k)})).collect::<Vec<_>>(),
        },
    }))
}
