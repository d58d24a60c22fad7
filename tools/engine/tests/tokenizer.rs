//! The tokenizer against llama.cpp's: `tests/data/tokens.json` (llama-tokenize on tricky
//! strings: spaces, digits, unicode, code, control tokens) and the ids of the oracle's prompts
//! (`scripts/engine-oracle.sh` made both). Needs the model file (`scripts/fetch-smollm2.sh`).

use kiln_engine::ModelFile;
use serde_json::Value;

fn model(q: &str) -> ModelFile {
    let dir = env!("KILN_MODELS_DIR");
    ModelFile::open(format!("{dir}/SmolLM2-135M-Instruct.{q}.gguf")).unwrap()
}

fn ids(v: &Value) -> Vec<u32> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

#[test]
#[cfg_attr(
    not(kiln_smollm2),
    ignore = "needs models/SmolLM2-135M-Instruct.*.gguf: scripts/fetch-smollm2.sh"
)]
fn ids_equal_llama_tokenize() {
    let m = model("Q4_1");
    let data: Value = serde_json::from_str(include_str!("data/tokens.json")).unwrap();
    let cases = data["cases"].as_array().unwrap();
    assert!(cases.len() >= 20);
    for c in cases {
        let text = c["text"].as_str().unwrap();
        let got = m.tokenizer.encode(text).unwrap();
        assert_eq!(got, ids(&c["ids"]), "{text:?}");
        // And back: the bytes of the ids are the text.
        assert_eq!(m.tokenizer.decode(&got).unwrap(), text);
    }
    for q in ["q4_1", "q8_0"] {
        let f = std::fs::read_to_string(format!(
            "{}/tests/data/oracle-{q}.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let data: Value = serde_json::from_str(&f).unwrap();
        for p in data["prompts"].as_array().unwrap() {
            let text = p["text"].as_str().unwrap();
            assert_eq!(m.tokenizer.encode(text).unwrap(), ids(&p["ids"]), "{text:?}");
        }
    }
}

#[test]
#[cfg_attr(
    not(kiln_smollm2),
    ignore = "needs models/SmolLM2-135M-Instruct.*.gguf: scripts/fetch-smollm2.sh"
)]
fn config_is_smollm2_135m() {
    use kiln_engine::config::MatType;
    for (q, m) in [("Q4_1", MatType::Q4_1), ("Q8_0", MatType::Q8_0)] {
        let c = model(q).config;
        assert_eq!(
            (c.n_layers, c.hidden, c.ffn, c.n_heads, c.n_kv_heads, c.head_dim, c.vocab),
            (30, 576, 1536, 9, 3, 64, 49152)
        );
        assert_eq!((c.rope_base, c.rope_dims, c.output), (100000.0, 64, None));
        assert!((c.eps - 1e-5).abs() < 1e-9);
        assert!(c.layers.iter().all(|l| l.q == m && l.gate_up == m && l.down == m));
    }
}
