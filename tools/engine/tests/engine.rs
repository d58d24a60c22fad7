//! The engine on a tiny llama with random Q8_0 weights (written here as GGUF), on the cpu
//! device: the config's refusals, a prompt in chunks against token by token (bit for bit: every
//! kernel keeps one order whatever the tokens a step), and the step's refusals.
//! The graph tests need a package (`KILN_ENGINE_PACKAGE` or the workspace's `dist/`, with the
//! kernels `Config::kernels` lists).

mod common;
use common::*;
use kiln_engine::config::ConfigError;
use kiln_engine::config::{Append, Norms};
use kiln_engine::model::{Decoder, L2Plan, ModelError, StepGraph, TokenRead, Weights, QUEUE_DEPTH};
use kiln_engine::{ModelFile, OpenError};
use kiln_runtime::{Catalog, CpuOptions, Device, L2Access, L2Applied, Package, Runtime};
use rand::{Rng, SeedableRng};

fn open(kvs: &[Kv], ts: &[T]) -> Result<ModelFile, OpenError> {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("tiny.gguf");
    std::fs::write(&p, write_gguf(kvs, ts)).unwrap();
    ModelFile::open(&p)
}

fn config_err(kvs: &[Kv], ts: &[T]) -> ConfigError {
    match open(kvs, ts) {
        Err(OpenError::Config { source, .. }) => source,
        Err(e) => panic!("expected a config refusal, got {e}"),
        Ok(_) => panic!("expected a config refusal, got a model"),
    }
}

#[test]
fn config_reads_the_tiny_model_and_refuses_what_the_kernels_cannot_run() {
    let m = Tiny::small();
    let (kvs, ts) = tiny_llama(&m, 1);
    let c = open(&kvs, &ts).unwrap().config;
    assert_eq!((c.n_layers, c.hidden, c.head_dim, c.n_kv_heads, c.vocab), (2, 128, 64, 1, 96));
    assert!(c.kernels(Norms::Folded).contains(&"attention_decode_rope_q8_0_d64_q8_1s".to_string()));

    let mut k2 = kvs.clone();
    k2[0] = kv_str("general.architecture", "qwen2");
    assert!(matches!(config_err(&k2, &ts), ConfigError::Architecture(a) if a == "qwen2"));

    let mut k2 = kvs.clone();
    k2.retain(|k| k.0 != "llama.attention.layer_norm_rms_epsilon");
    let e = config_err(&k2, &ts);
    assert!(e.to_string().contains("layer_norm_rms_epsilon") && e.to_string().contains("missing"));

    // attn_q as F32: named, with what the GEMV takes.
    let mut t2 = tiny_llama(&m, 1).1;
    let q = t2.iter_mut().find(|t| t.name == "blk.1.attn_q.weight").unwrap();
    q.ty = 0;
    q.data = vec![0; 128 * 128 * 4];
    let e = config_err(&kvs, &t2).to_string();
    assert!(e.contains("blk.1.attn_q.weight") && e.contains("F32") && e.contains("Q4_1"), "{e}");

    // A missing tensor, a wrong shape.
    let mut t2 = tiny_llama(&m, 1).1;
    t2.retain(|t| t.name != "blk.0.ffn_up.weight");
    assert!(
        matches!(config_err(&kvs, &t2), ConfigError::MissingTensor(n) if n == "blk.0.ffn_up.weight")
    );
    let mut t2 = tiny_llama(&m, 1).1;
    let k = t2.iter_mut().find(|t| t.name == "blk.0.attn_k.weight").unwrap();
    k.dims = vec![128, 32];
    k.data.truncate(128 * 32 / 32 * 34);
    assert!(matches!(config_err(&kvs, &t2), ConfigError::Shape { .. }));

    // Head dimension 32 (hidden 128 over 4 heads): no attention kernel for it.
    let mut k2 = kvs.clone();
    k2.iter_mut().find(|k| k.0 == "llama.attention.head_count").unwrap().2 =
        4u32.to_le_bytes().to_vec();
    let e = config_err(&k2, &ts).to_string();
    assert!(e.contains("head dimension 32"), "{e}");

    // An embedding in Q4_0 (get_rows takes Q8_0).
    let mut t2 = tiny_llama(&m, 1).1;
    let emb = t2.iter_mut().find(|t| t.name == "token_embd.weight").unwrap();
    emb.ty = 2;
    emb.data = vec![0; 128 * 96 / 32 * 18];
    let e = config_err(&kvs, &t2).to_string();
    assert!(e.contains("token_embd.weight") && e.contains("Q4_0"), "{e}");

    // Rope scaling is refused rather than ignored.
    let mut k2 = kvs.clone();
    k2.push(kv_str("llama.rope.scaling.type", "yarn"));
    assert!(config_err(&k2, &ts).to_string().contains("yarn"));
}

fn runtime() -> Runtime {
    let pkg = Package::open(package_dir()).unwrap();
    Runtime::load(&Device::cpu(CpuOptions::default()), &pkg).unwrap()
}

/// Logits of `ids` from position 0 in steps of `chunk`.
fn logits(dec: &mut Decoder<'_>, ids: &[u32], chunk: usize) -> (Vec<f32>, Vec<u32>) {
    dec.reset();
    let (mut l, mut next) = (vec![], vec![]);
    for c in ids.chunks(chunk) {
        let out = dec.step(c, true).unwrap();
        l.extend(out.logits.unwrap());
        next.extend(out.next);
    }
    (l, next)
}

#[test]
#[cfg_attr(
    not(kiln_engine_package),
    ignore = "needs a package with the engine's kernels: KILN_ENGINE_PACKAGE=DIR or dist/"
)]
fn a_prompt_in_chunks_equals_token_by_token_bit_for_bit() {
    let m = Tiny::small();
    let (kvs, ts) = tiny_llama(&m, 7);
    let model = open(&kvs, &ts).unwrap();
    let rt = runtime();
    let w = Weights::upload(&rt, &model.gguf, &model.config).unwrap();
    let step = StepGraph::build(&rt, &model.config, &w, 128).unwrap();
    let mut dec = Decoder::new(&rt, &model.config, &step).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(16);
    // 70 tokens: the attention's split variants take over from position 64.
    let ids: Vec<u32> = (0..70).map(|_| rng.gen_range(0..m.vocab as u32)).collect();
    let (one, next1) = logits(&mut dec, &ids, 1);
    assert_eq!(one.len(), ids.len() * m.vocab);
    assert!(one.iter().all(|v| v.is_finite()));
    for (i, row) in one.chunks(m.vocab).enumerate() {
        // argmax_rows agrees with the logits it read (ties to the lowest id).
        let best = (0..m.vocab).fold(0, |b, j| if row[j] > row[b] { j } else { b });
        assert_eq!(next1[i] as usize, best, "position {i}");
    }
    // Not a constant function of the position: the model looks at its input.
    assert!(one.chunks(m.vocab).any(|r| r != &one[..m.vocab]));
    for chunk in [8, 3, 5] {
        let (l, next) = logits(&mut dec, &ids, chunk);
        let same = l.iter().zip(&one).all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "steps of {chunk} differ from steps of 1");
        assert_eq!(next, next1);
    }
}

#[test]
#[cfg_attr(
    not(kiln_engine_package),
    ignore = "needs a package with the engine's kernels: KILN_ENGINE_PACKAGE=DIR or dist/"
)]
fn a_step_refuses_bad_tokens_and_positions_and_still_runs_after() {
    let m = Tiny::small();
    let (kvs, ts) = tiny_llama(&m, 3);
    let model = open(&kvs, &ts).unwrap();
    let rt = runtime();
    let w = Weights::upload(&rt, &model.gguf, &model.config).unwrap();
    let step = StepGraph::build(&rt, &model.config, &w, 16).unwrap();
    let mut dec = Decoder::new(&rt, &model.config, &step).unwrap();
    assert!(matches!(dec.step(&[], false), Err(ModelError::Tokens(0))));
    assert!(matches!(dec.step(&[1; 9], false), Err(ModelError::Tokens(9))));
    assert!(matches!(dec.step(&[96], false), Err(ModelError::TokenId { id: 96, vocab: 96 })));
    assert_eq!(dec.pos, 0);
    let first = dec.step(&[5, 6, 7], true).unwrap();
    dec.step(&[1; 8], false).unwrap();
    assert!(matches!(
        dec.step(&[1; 6], false),
        Err(ModelError::Context { pos: 11, end: 17, ctx: 16 })
    ));
    dec.step(&[1; 5], false).unwrap();
    assert_eq!(dec.pos, 16);
    dec.reset();
    assert_eq!(dec.step(&[5, 6, 7], true).unwrap(), first);
}

#[test]
#[cfg_attr(
    not(kiln_engine_package),
    ignore = "needs a package with the engine's kernels: KILN_ENGINE_PACKAGE=DIR or dist/"
)]
fn greedy_steps_fed_on_the_device_equal_steps_fed_from_the_host() {
    let m = Tiny::small();
    // An LM head of its own: a tied random model repeats its token.
    let (kvs, ts) = tiny_llama_with(&m, 11, true);
    let model = open(&kvs, &ts).unwrap();
    let rt = runtime();
    let w = Weights::upload(&rt, &model.gguf, &model.config).unwrap();
    let step = StepGraph::build(&rt, &model.config, &w, 32).unwrap();
    let mut dec = Decoder::new(&rt, &model.config, &step).unwrap();
    let prompt = [3, 1, 4, 1, 5];
    let run = |dec: &mut Decoder<'_>, on_device: bool| {
        dec.reset();
        let mut last = *dec.step(&prompt, false).unwrap().next.last().unwrap();
        // Right after a prompt of several tokens the token must come from the host.
        assert!(matches!(dec.step_greedy(false), Err(ModelError::Tokens(5))));
        let mut out = vec![];
        let mut logits = vec![];
        for i in 0..12 {
            let s = if on_device && i > 0 {
                dec.step_greedy(true).unwrap()
            } else {
                dec.step(&[last], true).unwrap()
            };
            last = s.next[0];
            out.push(last);
            if i > 1 {
                // Only `pos` moved: KV append and attention (RoPE of q in it) of each layer and
                // the copy of the tokens into the history are re-checked.
                assert_eq!(dec.rechecked(), 2 * m.layers + 1, "step {i}");
            }
            logits.extend(s.logits.unwrap());
        }
        (out, logits)
    };
    let host = run(&mut dec, false);
    let device = run(&mut dec, true);
    assert_eq!(host, device);
    // Steps queued ahead of the token read (the generation loop's): the same tokens.
    dec.reset();
    let last = *dec.step(&prompt, false).unwrap().next.last().unwrap();
    assert!(matches!(dec.queue_greedy(), Err(ModelError::Tokens(5))));
    let mut queued = vec![dec.step(&[last], false).unwrap().next[0]];
    let mut tickets = std::collections::VecDeque::new();
    while queued.len() < 12 {
        while tickets.len() < QUEUE_DEPTH && queued.len() + tickets.len() < 12 {
            tickets.push_back(dec.queue_greedy().unwrap());
        }
        if queued.len() == 1 {
            assert!(matches!(dec.queue_greedy(), Err(ModelError::Queued(QUEUE_DEPTH))));
        }
        queued.push(dec.token(tickets.pop_front().unwrap()).unwrap());
    }
    assert_eq!(queued, host.0);
    assert_eq!(dec.pos, prompt.len() + 12);
    assert_eq!(model.config.output, Some(kiln_engine::config::MatType::Q8_0));
    // Not one token over and over: a token fed wrong would show.
    let distinct: std::collections::BTreeSet<u32> = host.0.iter().copied().collect();
    assert!(distinct.len() >= 3, "{:?}", host.0);
}

#[test]
#[cfg_attr(
    not(kiln_engine_package),
    ignore = "needs a package with the engine's kernels: KILN_ENGINE_PACKAGE=DIR or dist/"
)]
fn timing_steps_leaves_the_decoder_as_it_was_and_both_reads_agree() {
    let m = Tiny::small();
    let (kvs, ts) = tiny_llama_with(&m, 11, true);
    let model = open(&kvs, &ts).unwrap();
    let rt = runtime();
    let w = Weights::upload(&rt, &model.gguf, &model.config).unwrap();
    let prompt = [3, 1, 4, 1, 5];
    // Greedy tokens after the prompt, read as `generate` reads them; with `time`, the profile's
    // timings run between the steps (they replay steps at the next positions, whose argmax
    // writes the ids the next step starts from).
    let run = |dec: &mut Decoder<'_>, time: bool| -> Vec<u32> {
        dec.reset();
        let last = *dec.step(&prompt, false).unwrap().next.last().unwrap();
        let mut out = vec![dec.step(&[last], false).unwrap().next[0]];
        for i in 0..6 {
            if time && i % 2 == 0 {
                let pos = dec.pos;
                assert_eq!(dec.time_steps(1, 1, 2).unwrap().len(), 2);
                assert_eq!(dec.time_steps(3, 0, 1).unwrap().len(), 1);
                assert_eq!(dec.time_decode_steps(1, 3, false).unwrap().len(), 3);
                let t = dec.time_decode_steps(0, 3, true).unwrap();
                assert!(t.len() == 3 && t.iter().all(|us| us.is_finite() && *us >= 0.0));
                assert_eq!(dec.pos, pos);
            }
            let t = dec.queue_greedy().unwrap();
            out.push(dec.token(t).unwrap());
        }
        out
    };
    let step = StepGraph::build(&rt, &model.config, &w, 32).unwrap();
    let mut dec = Decoder::new(&rt, &model.config, &step).unwrap();
    let plain = run(&mut dec, false);
    assert_eq!(run(&mut dec, true), plain);
    let distinct: std::collections::BTreeSet<u32> = plain.iter().copied().collect();
    assert!(distinct.len() >= 3, "{plain:?}");
    // Timing while a queued step is unread is refused (its read would be mixed with theirs).
    let t = dec.queue_greedy().unwrap();
    assert!(matches!(dec.time_decode_steps(0, 1, true), Err(ModelError::Queued(1))));
    dec.token(t).unwrap();
    // The token copied after each step instead of read in place: the same tokens, one node
    // fewer (no `copy_at_i32`).
    let copy = StepGraph::build_with(&rt, &model.config, &w, 32, TokenRead::Copy).unwrap();
    let mut dec_copy = Decoder::new(&rt, &model.config, &copy).unwrap();
    assert_eq!(dec_copy.nodes() + 1, dec.nodes());
    assert_eq!(run(&mut dec_copy, true), plain);
}

/// The L2 windows of `--l2`: the weights' window covers every weight buffer and no other buffer
/// of the step (the uploads put the repacks' staging buffers before the weights), the caches'
/// window every K/V cache and nothing else; `off` has none; the cpu device ignores them.
#[test]
#[cfg_attr(
    not(kiln_engine_package),
    ignore = "needs a package with the engine's kernels: KILN_ENGINE_PACKAGE=DIR or dist/"
)]
fn the_l2_windows_cover_the_weights_or_the_caches_and_nothing_else() {
    let m = Tiny::small();
    let (kvs, ts) = tiny_llama_with(&m, 13, true);
    let model = open(&kvs, &ts).unwrap();
    let rt = runtime();
    let w = Weights::upload(&rt, &model.gguf, &model.config).unwrap();
    let step = StepGraph::build(&rt, &model.config, &w, 32).unwrap();
    assert_eq!(step.l2_window(&w, L2Plan::Off).unwrap(), None);
    let weight =
        |n: &str| n.starts_with("blk.") || n.starts_with("token_embd") || n.starts_with("output");
    let cache = |n: &str| n.starts_with("kc.") || n.starts_with("vc.");
    for (plan, inside) in
        [(L2Plan::StreamWeights, &weight as &dyn Fn(&str) -> bool), (L2Plan::KeepCache, &cache)]
    {
        let (win, others) = step.l2_window(&w, plan).unwrap().expect("a window");
        assert_eq!(others, Vec::<String>::new());
        let expect = match plan {
            L2Plan::StreamWeights => L2Access::Streaming,
            _ => L2Access::Persisting,
        };
        assert_eq!((win.hit, win.hit_ratio), (expect, 1.0));
        let (lo, hi) = (win.base, win.base + win.bytes);
        let mut n_inside = 0;
        for (name, b) in step.graph.buffers() {
            let (a, e) = (b.device_address(), b.device_address() + b.bytes() as u64);
            if inside(name) {
                assert!(lo <= a && e <= hi, "{name} outside {plan:?}'s window");
                n_inside += 1;
            } else {
                assert!(e <= lo || a >= hi, "{name} inside {plan:?}'s window");
            }
        }
        assert!(n_inside >= 2 * model.config.n_layers, "{plan:?}: {n_inside} buffers");
        assert_eq!(rt.device().set_l2_window(Some(win)).unwrap(), L2Applied::Ignored);
    }
    assert_eq!(
        step.l2_window(&w, L2Plan::Auto).unwrap(),
        step.l2_window(&w, L2Plan::KeepCache).unwrap()
    );
    for plan in [L2Plan::Off, L2Plan::StreamWeights, L2Plan::KeepCache, L2Plan::Auto] {
        assert_eq!(
            step.set_l2(&rt, &w, plan).unwrap().0,
            L2Applied::Ignored,
            "{plan:?} on the cpu"
        );
    }
}

/// The tiny model with `blk.0.attn_v` in Q4_0 (random nibbles, scale 1/128): layer 0's Q, K
/// and V then differ in format.
fn tiny_with_layer0_v_in_q4_0(m: &Tiny) -> (Vec<Kv>, Vec<T>) {
    let (kvs, mut ts) = tiny_llama(m, 5);
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    let v = ts.iter_mut().find(|t| t.name == "blk.0.attn_v.weight").unwrap();
    let blocks = (v.dims[0] * v.dims[1] / 32) as usize;
    v.ty = 2;
    v.data = (0..blocks)
        .flat_map(|_| {
            let mut b = 0x2000u16.to_le_bytes().to_vec();
            b.extend((0..16).map(|_| rng.gen::<u8>()));
            b
        })
        .collect();
    (kvs, ts)
}

/// Q, K and V of one format need one `gemv_<fmt>_rp_qkv_norm` (the attention norm folded in); a
/// layer whose formats differ needs the norm and the three plain GEMVs of its formats.
#[test]
fn qkv_of_one_format_need_the_fused_gemv_and_mixed_formats_the_plain_ones() {
    let m = Tiny::small();
    let (kvs, ts) = tiny_llama(&m, 1);
    let c = open(&kvs, &ts).unwrap().config;
    assert!(c.layers.iter().all(|l| l.qkv().is_some()));
    let k = c.kernels(Norms::Folded);
    assert!(k.contains(&"gemv_q8_0_rp_qkv_norm".to_string()), "{k:?}");
    assert!(k.contains(&"gemv_q8_0_rp_swiglu_q8_1s_norm".to_string()), "{k:?}");
    assert!(!k.iter().any(|k| k == "gemv_q8_0_rp_qkv" || k == "gemv_q8_0_rp_swiglu_q8_1s"));
    // The output norm stays a node of its own (the LM head GEMV does not fold it).
    assert!(k.contains(&"rmsnorm_q8_1s_f32".to_string()), "{k:?}");
    // The plain GEMV only for the LM head: the tiny model's is tied, a repacked copy of the
    // Q8_0 embedding.
    assert!(k.contains(&"gemv_q8_0_rp".to_string()), "{k:?}");
    assert!(!k.iter().any(|k| k == "gemv_q8_0" || k == "gemv_q4_0_rp"), "{k:?}");

    let (kvs, ts) = tiny_with_layer0_v_in_q4_0(&m);
    let c = open(&kvs, &ts).unwrap().config;
    assert_eq!(c.layers[0].qkv(), None);
    assert!(c.layers[1].qkv().is_some());
    let apart = c.kernels(Norms::Apart);
    assert!(apart.contains(&"gemv_q8_0_rp_qkv".to_string()), "{apart:?}");
    assert!(apart.contains(&"gemv_q8_0_rp_swiglu_q8_1s".to_string()), "{apart:?}");
    assert!(!apart.iter().any(|k| k.ends_with("_norm")), "{apart:?}");
    let k = c.kernels(Norms::Folded);
    for name in ["gemv_q8_0_rp_qkv_norm", "gemv_q8_0_rp", "gemv_q4_0_rp", "rmsnorm_q8_1s_f32"] {
        assert!(k.contains(&name.to_string()), "{name} in {k:?}");
    }
}

/// A step has one Q/K/V node a layer (the norm folded in) when the formats agree: 8 nodes a
/// layer and 4 around them; a layer where they differ has the norm and three GEMVs (three more
/// nodes), and the mixed model still steps.
#[test]
#[cfg_attr(
    not(kiln_engine_package),
    ignore = "needs a package with the engine's kernels: KILN_ENGINE_PACKAGE=DIR or dist/"
)]
fn a_layer_of_mixed_qkv_formats_runs_three_gemvs() {
    let m = Tiny::small();
    let rt = runtime();
    let nodes = |(kvs, ts): (Vec<Kv>, Vec<T>)| {
        let model = open(&kvs, &ts).unwrap();
        let w = Weights::upload(&rt, &model.gguf, &model.config).unwrap();
        let step = StepGraph::build(&rt, &model.config, &w, 16).unwrap();
        let mut dec = Decoder::new(&rt, &model.config, &step).unwrap();
        let out = dec.step(&[1, 2, 3], true).unwrap();
        assert!(out.logits.unwrap().iter().all(|v| v.is_finite()));
        let v = dec.variants();
        (dec.nodes(), v.iter().filter(|(k, _)| k.ends_with("_qkv_cache_norm")).count())
    };
    let (fused, fused_qkv) = nodes(tiny_llama(&m, 1));
    let (mixed, mixed_qkv) = nodes(tiny_with_layer0_v_in_q4_0(&m));
    assert_eq!((fused_qkv, mixed_qkv), (m.layers, m.layers - 1));
    // A layer: Q/K/V with the append, attention, output, gate/up, down; then the embedding,
    // the output norm, the LM head, argmax and the tokens' copy into the history.
    assert_eq!(fused, 5 * m.layers + 5);
    // Layer 0 of the mixed model: the norm, three GEMVs and the append for one node.
    assert_eq!(mixed, fused + 4);
}

/// RoPE of Q and the quantize of the attention's output are in the attention node: a layer has
/// one `attention_decode_rope_q8_0_d64_q8_1s` node and the step no `rope_f32` or
/// `quantize_q8_1s_f32` node (two launches a layer fewer).
#[test]
#[cfg_attr(
    not(kiln_engine_package),
    ignore = "needs a package with the engine's kernels: KILN_ENGINE_PACKAGE=DIR or dist/"
)]
fn the_attention_node_rotates_q_and_quantizes_its_output() {
    let m = Tiny::small();
    let (kvs, ts) = tiny_llama(&m, 2);
    let model = open(&kvs, &ts).unwrap();
    let rt = runtime();
    let w = Weights::upload(&rt, &model.gguf, &model.config).unwrap();
    let step = StepGraph::build(&rt, &model.config, &w, 16).unwrap();
    let mut dec = Decoder::new(&rt, &model.config, &step).unwrap();
    dec.step(&[1, 2, 3], false).unwrap();
    let v = dec.variants();
    let count = |name: &str| v.iter().filter(|(k, _)| k == name).count();
    assert_eq!(count("attention_decode_rope_q8_0_d64_q8_1s"), m.layers, "{v:?}");
    for gone in ["rope_f32", "quantize_q8_1s_f32", "attention_decode_q8_0_d64"] {
        assert_eq!(count(gone), 0, "{gone} in {v:?}");
    }
}

/// Where the package lacks the `_norm` GEMVs (a wave-64 arch: they are built for wave 32 only)
/// the step runs the norms as nodes of their own; on an arch that has them all, the three
/// placements (folded, in the residual GEMVs' tails, apart) give the same logits bit for bit.
#[test]
#[cfg_attr(
    not(kiln_engine_package),
    ignore = "needs a package with the engine's kernels: KILN_ENGINE_PACKAGE=DIR or dist/"
)]
fn the_norms_run_apart_where_the_package_cannot_fold_them_with_the_same_logits() {
    let m = Tiny::small();
    let (kvs, ts) = tiny_llama(&m, 5);
    let model = open(&kvs, &ts).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(rand::random());
    let ids: Vec<u32> = (0..11).map(|_| rng.gen_range(0..m.vocab as u32)).collect();
    let run = |rt: &Runtime, norms: Norms| {
        let w = Weights::upload_with(rt, &model.gguf, &model.config, norms).unwrap();
        let step = StepGraph::build(rt, &model.config, &w, 16).unwrap();
        let mut dec = Decoder::new(rt, &model.config, &step).unwrap();
        let (l, _) = logits(&mut dec, &ids, 8);
        let norm_nodes = dec.variants().iter().filter(|(k, _)| k == "rmsnorm_q8_1s_f32").count();
        (l, dec.nodes(), norm_nodes)
    };
    let rt = runtime();
    assert_eq!(model.config.norms_for(&rt), Norms::Folded);
    // The package's manifest alone (what `kiln generate` decides from) says the same.
    let pkg = Package::open(package_dir()).unwrap();
    let catalog = Catalog::new(rt.device(), &pkg).unwrap();
    assert_eq!(model.config.norms_for(&catalog), Norms::Folded);
    // A long row's norm is split between the GEMVs around it (every workgroup of a `_norm`
    // GEMV would redo it; the residual GEMVs' tails are only taken when asked for: measured
    // slower), or runs apart where a layer is not Q8_0.
    let mut wide = model.config.clone();
    wide.hidden = kiln_engine::config::FOLD_NORMS_MAX_HIDDEN + 32;
    assert_eq!(wide.norms_for(&rt), Norms::Split);
    assert_eq!(wide.norms_for(&catalog), Norms::Split);
    wide.layers[1].gate_up = kiln_engine::config::MatType::Q4_0;
    assert_eq!(wide.norms_for(&rt), Norms::Apart);
    assert_eq!(wide.norms_for(&catalog), Norms::Apart);
    let (folded, n_folded, norms_folded) = run(&rt, Norms::Folded);
    let (apart, n_apart, norms_apart) = run(&rt, Norms::Apart);
    let (tails, n_tails, norms_tails) = run(&rt, Norms::InResidual);
    let (split, n_split, norms_split) = run(&rt, Norms::Split);
    // Layer 0's first norm stays a node with the tails (nothing before it has one).
    assert_eq!((norms_folded, norms_apart, norms_tails, norms_split), (1, 2 * m.layers + 1, 1, 1));
    assert_eq!(n_apart, n_folded + 2 * m.layers);
    assert_eq!((n_tails, n_split), (n_folded, n_folded));
    // The split norm rounds differently (`x w` quantized, `1 / rms` applied to the sums): the
    // same logits up to the activations' quantization (measured: a few thousandths of the
    // largest logit; each quant may move by one step of its block).
    let top = folded.iter().fold(0f32, |m, v| m.max(v.abs()));
    let worst = folded.iter().zip(&split).fold(0f32, |m, (a, b)| m.max((a - b).abs()));
    println!("split norms: largest logit {top}, largest difference {worst}");
    assert!(split.iter().all(|v| v.is_finite()));
    assert!(worst <= 0.02 * top && worst > 0.0, "split against folded: {worst} of {top}");
    // Not for a model with other formats.
    let mut q4 = model.config.clone();
    q4.layers[0].down = kiln_engine::config::MatType::Q4_1;
    assert!(!q4.split_fits() && model.config.split_fits());
    match Weights::upload_with(&rt, &model.gguf, &q4, Norms::Split) {
        Err(e) => assert!(e.to_string().contains("Q8_0 layers"), "{e}"),
        Ok(_) => panic!("a Q4_1 layer's norms were split"),
    }
    assert!(folded.iter().all(|v| v.is_finite()));
    for (other, what) in [(&apart, "apart"), (&tails, "in the residual GEMVs")] {
        let same = folded.iter().zip(other).all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "the norms {what} changed the logits");
    }

    let pkg = Package::open(package_dir()).unwrap();
    assert!(
        pkg.archs().contains(&"gfx906"),
        "this test needs gfx906 objects in the engine's package (scripts/test.sh builds \
         `--arch sm_90,gfx906`); the package has {:?}",
        pkg.archs()
    );
    let rt64 = Runtime::load(&Device::cpu(CpuOptions::arch("gfx906")), &pkg).unwrap();
    assert_eq!(model.config.norms_for(&rt64), Norms::Apart);
    match Weights::upload_with(&rt64, &model.gguf, &model.config, Norms::Folded) {
        Err(e) => assert!(e.to_string().contains("gemv_q8_0_rp_qkv_norm"), "{e}"),
        Ok(_) => panic!("a gfx906 package has no _norm GEMVs, yet the folded step was accepted"),
    }
    let w = Weights::upload(&rt64, &model.gguf, &model.config).unwrap();
    assert_eq!(w.norms, Norms::Apart);
    let step = StepGraph::build(&rt64, &model.config, &w, 16).unwrap();
    let mut dec = Decoder::new(&rt64, &model.config, &step).unwrap();
    let (l, _) = logits(&mut dec, &ids, 8);
    assert!(l.iter().all(|v| v.is_finite()));
}

/// The fused attention's routes for the engine's calls (Q8_0 cache): a workgroup a row for one
/// or two tokens at short contexts (`short_r1`), four rows for more (`short`), at head dim 64 on
/// sm_90 a 640-lane workgroup a row up to 632 positions (`short_r1t640`) but one token from 512
/// positions on a row split across two waves (`r1x`), and at head dim 64 `r1` past them (each
/// measured faster in SmolLM2's step); head dim 128 keeps `r4t256` / `r8`.
#[test]
#[cfg_attr(
    not(kiln_engine_package),
    ignore = "needs a package with the engine's kernels: KILN_ENGINE_PACKAGE=DIR or dist/"
)]
fn the_attention_routes_take_a_workgroup_a_row_where_it_was_measured_faster() {
    use kiln_runtime::route::RouteQuery;
    use kiln_runtime::{Overrides, Scalar};
    let rt = runtime();
    let o = Overrides::none();
    let route = |kernel: &str, pos: u32, t: u32, group: u32| {
        let scalars = move |p: &str| match p {
            "pos" => Some(Scalar::from(pos)),
            "n_tokens" => Some(Scalar::from(t)),
            "group" => Some(Scalar::from(group)),
            _ => None,
        };
        let built = |v: &str| rt.variants(kernel).contains(&v);
        let q = RouteQuery { arch: rt.arch(), scalars: &scalars, built: &built, overrides: &o };
        rt.router(kernel).unwrap().choose(&q).unwrap().to_string()
    };
    let (d64, d128) =
        ("attention_decode_rope_q8_0_d64_q8_1s", "attention_decode_rope_q8_0_d128_q8_1s");
    // Routed on sm_90 alone (measured there).
    let sm_90 = rt.arch() == "sm_90";
    let wide = if sm_90 { "short_r1t640" } else { "r1" };
    let across = if sm_90 { "r1x" } else { "r1" };
    for (kernel, pos, t, group, want) in [
        (d64, 0, 1, 3, "short_r1"),
        (d64, 248, 2, 3, "short_r1"),
        (d64, 100, 8, 3, "short"),
        (d64, 249, 1, 3, wide),
        (d64, 511, 1, 3, wide),
        (d64, 512, 1, 3, across),
        (d64, 632, 2, 3, wide),
        (d64, 600, 1, 1, across),
        (d64, 633, 1, 3, across),
        (d64, 2000, 1, 3, across),
        (d64, 633, 2, 3, "r1"),
        (d64, 600, 3, 3, "r1"),
        (d64, 2000, 8, 3, "r1"),
        (d128, 100, 1, 4, "short_r1"),
        (d128, 600, 1, 4, "r4t256"),
        (d128, 600, 8, 4, "r8"),
    ] {
        assert_eq!(route(kernel, pos, t, group), want, "{kernel} pos={pos} T={t} group={group}");
    }
}

/// The K/V append folded into the Q/K/V GEMV (`_qkv_cache`, `_qkv_cache_norm`) gives the logits
/// of the step with a `kv_append_q8_0` node, bit for bit, with the norms folded and apart, in a
/// node a layer fewer; a gfx906 package (no such kernels: wave 32 only) appends apart.
#[test]
#[cfg_attr(
    not(kiln_engine_package),
    ignore = "needs a package with the engine's kernels: KILN_ENGINE_PACKAGE=DIR or dist/"
)]
fn the_append_in_the_qkv_gemv_gives_the_same_logits_a_node_a_layer_fewer() {
    let m = Tiny::small();
    let (kvs, ts) = tiny_llama(&m, 9);
    let model = open(&kvs, &ts).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(rand::random());
    let ids: Vec<u32> = (0..11).map(|_| rng.gen_range(0..m.vocab as u32)).collect();
    let rt = runtime();
    for norms in [Norms::Folded, Norms::Apart] {
        assert_eq!(model.config.append_for(&rt, norms), Append::InQkv);
        let run = |append: Append| {
            let w = Weights::upload_placed(&rt, &model.gguf, &model.config, norms, append).unwrap();
            let step = StepGraph::build(&rt, &model.config, &w, 16).unwrap();
            let mut dec = Decoder::new(&rt, &model.config, &step).unwrap();
            let (l, next) = logits(&mut dec, &ids, 8);
            let appends = dec.variants().iter().filter(|(k, _)| k == "kv_append_q8_0").count();
            (l, next, dec.nodes(), appends)
        };
        let (fused, next_fused, n_fused, appends_fused) = run(Append::InQkv);
        let (apart, next_apart, n_apart, appends_apart) = run(Append::Apart);
        assert_eq!((appends_fused, appends_apart), (0, m.layers), "{norms:?}");
        assert_eq!(n_apart, n_fused + m.layers, "{norms:?}");
        assert!(fused.iter().all(|v| v.is_finite()));
        let same = fused.iter().zip(&apart).all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(
            same && next_fused == next_apart,
            "the fused append changed the logits ({norms:?})"
        );
    }
    let pkg = Package::open(package_dir()).unwrap();
    let cpu64 = Device::cpu(CpuOptions::arch("gfx906"));
    let rt64 = Runtime::load(&cpu64, &pkg).unwrap();
    assert_eq!(model.config.append_for(&rt64, Norms::Apart), Append::Apart);
    // The manifest alone decides alike on both archs, and reads the token back alike.
    let catalog64 = Catalog::new(&cpu64, &pkg).unwrap();
    assert_eq!(model.config.append_for(&catalog64, Norms::Apart), Append::Apart);
    let catalog = Catalog::new(rt.device(), &pkg).unwrap();
    for norms in [Norms::Folded, Norms::Apart] {
        assert_eq!(model.config.append_for(&catalog, norms), Append::InQkv);
    }
    assert_eq!(TokenRead::for_package(&catalog), TokenRead::for_package(&rt));
    assert_eq!(TokenRead::for_package(&catalog64), TokenRead::for_package(&rt64));
}
