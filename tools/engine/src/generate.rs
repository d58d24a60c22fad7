//! Greedy generation: the prompt in steps of up to [`MAX_T`] tokens through the captured graph,
//! then one token a step, with the wall time of each phase.

use crate::model::{Decoder, ModelError, MAX_T, QUEUE_DEPTH};
use crate::tokenizer::{TextStream, Tokenizer, TokenizerError};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Why generation stopped early.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// The model.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The tokenizer.
    #[error(transparent)]
    Tokenizer(#[from] TokenizerError),
    /// Nothing to start from.
    #[error("the prompt has no tokens")]
    EmptyPrompt,
}

/// What a generation did and how long it took.
#[derive(Clone, Debug, PartialEq)]
pub struct Generation {
    /// The prompt's ids.
    pub prompt: Vec<u32>,
    /// The generated ids (the first comes from the prompt's last step).
    pub tokens: Vec<u32>,
    /// Wall time of the prompt steps (the first token included).
    pub prompt_time: Duration,
    /// Wall time of the decode steps after it.
    pub decode_time: Duration,
    /// True when it stopped at the end-of-sequence token.
    pub stopped_at_eos: bool,
}

impl Generation {
    /// Prompt tokens a second.
    pub fn prompt_rate(&self) -> f64 {
        self.prompt.len() as f64 / self.prompt_time.as_secs_f64()
    }
    /// Decode tokens a second (tokens after the first, over the decode steps).
    pub fn decode_rate(&self) -> f64 {
        (self.tokens.len().saturating_sub(1)) as f64 / self.decode_time.as_secs_f64()
    }
}

/// Generates up to `n` tokens after `prompt`, greedily, from position 0 of `dec`; `out` gets
/// text as soon as it forms whole characters.
pub fn generate(
    dec: &mut Decoder<'_>,
    tok: &Tokenizer,
    prompt: &str,
    n: usize,
    out: &mut dyn FnMut(&str),
) -> Result<Generation, GenerateError> {
    let ids = tok.encode(prompt)?;
    generate_ids(dec, tok, &ids, n, out)
}

/// [`generate`] from token ids.
pub fn generate_ids(
    dec: &mut Decoder<'_>,
    tok: &Tokenizer,
    ids: &[u32],
    n: usize,
    out: &mut dyn FnMut(&str),
) -> Result<Generation, GenerateError> {
    if ids.is_empty() {
        return Err(GenerateError::EmptyPrompt);
    }
    dec.reset();
    let start = Instant::now();
    let mut last = 0;
    for chunk in ids.chunks(MAX_T) {
        last = *dec.step(chunk, false)?.next.last().expect("a step of 1..=8 tokens");
    }
    let prompt_time = start.elapsed();
    let mut g = Generation {
        prompt: ids.to_vec(),
        tokens: vec![],
        prompt_time,
        decode_time: Duration::ZERO,
        stopped_at_eos: false,
    };
    let mut text = TextStream::default();
    let start = Instant::now();
    // One-token steps are queued one ahead of the token being read (`Decoder::queue_greedy`),
    // so the device goes from step to step without waiting for the host; never past `n`.
    let mut queued = VecDeque::new();
    let result = (|| -> Result<(), GenerateError> {
        loop {
            g.tokens.push(last);
            if Some(last) == tok.eos {
                g.stopped_at_eos = true;
                return Ok(());
            }
            out(&text.push(tok.token_bytes(last)?));
            if g.tokens.len() == n {
                return Ok(());
            }
            if dec.last_tokens() != 1 {
                // After a prompt step of several tokens, one step from the host's token.
                last = dec.step(&[last], false)?.next[0];
                continue;
            }
            while queued.len() < QUEUE_DEPTH && g.tokens.len() + queued.len() < n {
                queued.push_back(dec.queue_greedy()?);
            }
            last = dec.token(queued.pop_front().expect("queued above"))?;
        }
    })();
    // A step queued past the end-of-sequence token ran: read it, so the reads are settled.
    // (The loop's own error, if any, is the one to report.)
    for t in queued {
        let read = dec.token(t);
        if result.is_ok() {
            read?;
        }
    }
    result?;
    g.decode_time = start.elapsed();
    Ok(g)
}
