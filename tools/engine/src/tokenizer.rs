//! The GPT-2 byte-level BPE tokenizer of a GGUF file (`tokenizer.ggml.model = "gpt2"`), built
//! with the `tokenizers` crate from `tokenizer.ggml.tokens` and `tokenizer.ggml.merges`.
//!
//! Pre-tokenization follows llama.cpp's table for `tokenizer.ggml.pre` (`src/llama-vocab.cpp`):
//! `smollm` (and `starcoder`, `refact`, ...) split every digit apart (`\p{N}`) before the GPT-2
//! regex; `gpt2` uses the GPT-2 regex alone. Other pre-tokenizers are refused rather than
//! guessed. Control tokens (`token_type` 3) are matched in the text as whole tokens first, as
//! `llama-tokenize` does by default (`parse_special`). No BOS is added when
//! `tokenizer.ggml.add_bos_token` is false (SmolLM2). The ids equal llama.cpp's on the prompts of
//! `tests/data/tokens.json` (`tests/tokenizer.rs`).
//!
//! Decoding is by bytes (each vocabulary string maps back through GPT-2's byte-to-character
//! table), so generated text can be printed as soon as its bytes form whole UTF-8 characters.

use crate::gguf::{Gguf, Value};
use std::collections::HashMap;
use tokenizers::models::bpe::BPE;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::{AddedToken, PreTokenizerWrapper};

/// Why a tokenizer could not be built or used.
#[derive(Debug, thiserror::Error)]
pub enum TokenizerError {
    /// A metadata key is missing or has the wrong type.
    #[error("tokenizer: `{key}` {problem}")]
    Metadata {
        /// The key.
        key: &'static str,
        /// What is wrong.
        problem: String,
    },
    /// Not a byte-level BPE vocabulary.
    #[error("tokenizer: tokenizer.ggml.model is `{0}`, expected `gpt2` (byte-level BPE)")]
    Model(String),
    /// A pre-tokenizer this engine does not implement.
    #[error("tokenizer: tokenizer.ggml.pre is `{0}`, expected one of {PRE_TYPES}")]
    Pre(String),
    /// A merge that is not two tokens separated by a space.
    #[error("tokenizer: merge {index} is {text:?}, expected two tokens separated by one space")]
    Merge {
        /// Its index.
        index: usize,
        /// Its text.
        text: String,
    },
    /// A vocabulary string with a character outside GPT-2's byte table.
    #[error("tokenizer: token {id} {text:?} has the character {ch:?}, not in GPT-2's byte table")]
    Byte {
        /// The id.
        id: usize,
        /// The token.
        text: String,
        /// The character.
        ch: char,
    },
    /// An id past the vocabulary.
    #[error("tokenizer: id {id} is past the vocabulary of {len}")]
    Id {
        /// The id.
        id: u32,
        /// Vocabulary size.
        len: usize,
    },
    /// The `tokenizers` crate refused.
    #[error("tokenizer: {0}")]
    Crate(String),
}

const PRE_TYPES: &str = "gpt2, smollm, starcoder, refact, codeshell";

/// GGUF token type of a control token (`<|im_start|>`, ...).
const CONTROL: i64 = 3;

/// A GPT-2 byte-level BPE tokenizer.
pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
    /// Each token's bytes (control tokens: their text).
    bytes: Vec<Vec<u8>>,
    /// End of sequence.
    pub eos: Option<u32>,
    /// Beginning of sequence, when the model adds one.
    pub bos: Option<u32>,
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tokenizer({} tokens, eos {:?})", self.bytes.len(), self.eos)
    }
}

fn strings<'a>(g: &'a Gguf, key: &'static str) -> Result<Vec<&'a str>, TokenizerError> {
    let bad = |problem: String| TokenizerError::Metadata { key, problem };
    match g.get(key) {
        Some(Value::Array(v)) => v
            .iter()
            .enumerate()
            .map(|(i, x)| {
                x.as_str()
                    .ok_or_else(|| bad(format!("[{i}] is {}, expected string", x.type_name())))
            })
            .collect(),
        Some(v) => Err(bad(format!("is {}, expected an array of strings", v.type_name()))),
        None => Err(bad("is missing".into())),
    }
}

fn string<'a>(g: &'a Gguf, key: &'static str) -> Result<&'a str, TokenizerError> {
    let v = g.get(key).ok_or(TokenizerError::Metadata { key, problem: "is missing".into() })?;
    v.as_str().ok_or(TokenizerError::Metadata {
        key,
        problem: format!("is {}, expected string", v.type_name()),
    })
}

/// GPT-2's table from bytes to the printable characters byte-level vocabularies are written in.
fn byte_chars() -> [char; 256] {
    let mut table = ['\0'; 256];
    let mut next = 256u32;
    for b in 0..256u32 {
        let printable =
            (33..=126).contains(&b) || (161..=172).contains(&b) || (174..=255).contains(&b);
        let c = if printable {
            b
        } else {
            next += 1;
            next - 1
        };
        table[b as usize] = char::from_u32(c).expect("below the surrogates");
    }
    table
}

impl Tokenizer {
    /// Builds the tokenizer of a GGUF file.
    pub fn from_gguf(g: &Gguf) -> Result<Tokenizer, TokenizerError> {
        let model = string(g, "tokenizer.ggml.model")?;
        if model != "gpt2" {
            return Err(TokenizerError::Model(model.into()));
        }
        let pre = g.get("tokenizer.ggml.pre").and_then(Value::as_str).unwrap_or("gpt2");
        let split_digits = match pre {
            "gpt2" => false,
            "smollm" | "starcoder" | "refact" | "codeshell" => true,
            other => return Err(TokenizerError::Pre(other.into())),
        };
        let tokens = strings(g, "tokenizer.ggml.tokens")?;
        let merges = strings(g, "tokenizer.ggml.merges")?;
        let types: Vec<i64> = match g.get("tokenizer.ggml.token_type") {
            Some(Value::Array(v)) => {
                v.iter().map(|x| x.as_u64().map(|u| u as i64).unwrap_or(-1)).collect()
            }
            _ => vec![1; tokens.len()],
        };
        let id = |key| g.get(key).and_then(Value::as_u64).map(|v| v as u32);
        let add_bos = matches!(g.get("tokenizer.ggml.add_bos_token"), Some(Value::Bool(true)));
        let bos = if add_bos { id("tokenizer.ggml.bos_token_id") } else { None };
        let eos = id("tokenizer.ggml.eos_token_id");

        let vocab: tokenizers::models::bpe::Vocab =
            tokens.iter().enumerate().map(|(i, t)| (t.to_string(), i as u32)).collect();
        let merges = merges
            .iter()
            .enumerate()
            .map(|(index, m)| match m.split_once(' ') {
                Some((a, b)) if !a.is_empty() && !b.is_empty() => Ok((a.into(), b.into())),
                _ => Err(TokenizerError::Merge { index, text: m.to_string() }),
            })
            .collect::<Result<Vec<(String, String)>, _>>()?;
        let bpe = BPE::builder()
            .vocab_and_merges(vocab, merges)
            .build()
            .map_err(|e| TokenizerError::Crate(e.to_string()))?;
        let mut inner = tokenizers::Tokenizer::new(bpe);
        let byte_level = PreTokenizerWrapper::ByteLevel(ByteLevel::new(false, false, true));
        let pre_tok = if split_digits {
            let digits = PreTokenizerWrapper::Digits(Digits::new(true));
            PreTokenizerWrapper::Sequence(Sequence::new(vec![digits, byte_level]))
        } else {
            byte_level
        };
        inner.with_pre_tokenizer(Some(pre_tok));
        let specials: Vec<AddedToken> = tokens
            .iter()
            .zip(&types)
            .filter(|(_, &t)| t == CONTROL)
            .map(|(s, _)| AddedToken::from(s.to_string(), true))
            .collect();
        inner.add_special_tokens(&specials);

        let table = byte_chars();
        let byte_of: HashMap<char, u8> = (0..=255u8).map(|b| (table[b as usize], b)).collect();
        let bytes = tokens
            .iter()
            .zip(&types)
            .enumerate()
            .map(|(id, (s, &t))| {
                if t == CONTROL {
                    return Ok(s.as_bytes().to_vec());
                }
                s.chars()
                    .map(|ch| {
                        byte_of.get(&ch).copied().ok_or(TokenizerError::Byte {
                            id,
                            text: s.to_string(),
                            ch,
                        })
                    })
                    .collect()
            })
            .collect::<Result<Vec<Vec<u8>>, _>>()?;
        Ok(Tokenizer { inner, bytes, eos, bos })
    }

    /// The ids of `text` (with BOS first when the model adds one).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        let enc =
            self.inner.encode(text, false).map_err(|e| TokenizerError::Crate(e.to_string()))?;
        let mut ids = Vec::with_capacity(enc.len() + 1);
        ids.extend(self.bos);
        ids.extend_from_slice(enc.get_ids());
        Ok(ids)
    }

    /// The bytes of a token (a piece of UTF-8, not always whole characters).
    pub fn token_bytes(&self, id: u32) -> Result<&[u8], TokenizerError> {
        self.bytes
            .get(id as usize)
            .map(Vec::as_slice)
            .ok_or(TokenizerError::Id { id, len: self.bytes.len() })
    }

    /// The text of `ids` (invalid UTF-8 replaced).
    pub fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> {
        let mut b = vec![];
        for &id in ids {
            b.extend_from_slice(self.token_bytes(id)?);
        }
        Ok(String::from_utf8_lossy(&b).into_owned())
    }

    /// Vocabulary size.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True for an empty vocabulary.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// Streams text out of token bytes: holds back an incomplete UTF-8 sequence until its next
/// bytes come.
#[derive(Debug, Default)]
pub struct TextStream {
    pending: Vec<u8>,
}

impl TextStream {
    /// Adds a token's bytes; returns the text that is now whole.
    pub fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let valid = match std::str::from_utf8(&self.pending) {
            Ok(_) => self.pending.len(),
            // An error with no length is an incomplete sequence at the end: keep it.
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => {
                let s = String::from_utf8_lossy(&self.pending).into_owned();
                self.pending.clear();
                return s;
            }
        };
        let s = String::from_utf8(self.pending[..valid].to_vec()).expect("checked");
        self.pending.drain(..valid);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpt2_byte_table_is_a_bijection_with_the_known_corners() {
        let t = byte_chars();
        assert_eq!(t[b' ' as usize], 'Ġ');
        assert_eq!(t[b'\n' as usize], 'Ċ');
        assert_eq!(t[b'a' as usize], 'a');
        let set: std::collections::BTreeSet<char> = t.iter().copied().collect();
        assert_eq!(set.len(), 256);
    }

    #[test]
    fn text_stream_holds_back_split_characters() {
        let mut s = TextStream::default();
        let e = "é🙂".as_bytes();
        assert_eq!(s.push(&e[..1]), "");
        assert_eq!(s.push(&e[1..3]), "é");
        assert_eq!(s.push(&e[3..5]), "");
        assert_eq!(s.push(&e[5..]), "🙂");
        assert_eq!(s.push(b"ok"), "ok");
        // An invalid byte is replaced, not held forever.
        assert_eq!(s.push(&[0xff, b'x']), "\u{fffd}x");
    }
}
