//! How a decode step asks the L2 to treat its memory (`kiln generate --l2`): the plans, and the
//! window of a plan over a step's buffers.

use super::{ModelError, StepGraph, Weights};
use kiln_runtime::{Buffer, L2Applied, L2Window, Runtime};

/// How a decode step asks the L2 to treat its memory (`kiln generate --l2`; see
/// [`kiln_runtime::L2Window`]). The step's results are the same under every plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum L2Plan {
    /// No window: the L2's own policy.
    Off,
    /// The weights' addresses streaming (evicted first): a step reads each weight once, and
    /// in plain LRU their stream evicts the KV cache and the activations that the next step
    /// reads again.
    StreamWeights,
    /// The KV caches' addresses persisting in the set-aside L2 (as much of them as it holds).
    KeepCache,
    /// [`L2Plan::KeepCache`] where the device holds every line of the caches persisting, else
    /// [`L2Plan::Off`]. On the H200 keeping the caches took 2-6 us (0.5-1%) off SmolLM2's step
    /// at 173 and 2013 positions and changed nothing on the Llama-3-8B shape at 109
    /// (`bench/results/l2-h200-2026-12-04.md`); a cache larger than the set-aside part is
    /// not measured, so it is left alone.
    Auto,
}

impl L2Plan {
    /// `off`, `stream`, `keep` or `auto`.
    pub fn name(self) -> &'static str {
        match self {
            L2Plan::Off => "off",
            L2Plan::StreamWeights => "stream",
            L2Plan::KeepCache => "keep",
            L2Plan::Auto => "auto",
        }
    }
}

impl StepGraph {
    /// The L2 window of `plan` over this graph's buffers: the address range of the weights
    /// (`stream`) or of the KV caches (`keep`: the device lowers the persisting share to what
    /// its set-aside part holds), with the names of the step's other buffers that lie inside
    /// it (the device's allocator may put small buffers between the weights: the window covers
    /// them too, which changes no result). Refused when the range holds what the plan keeps
    /// apart: a KV cache inside the weights' range, or a weight inside the caches'. Set it
    /// with [`kiln_runtime::Device::set_l2_window`] before the step is captured.
    pub fn l2_window(
        &self,
        weights: &Weights,
        plan: L2Plan,
    ) -> Result<Option<(L2Window, Vec<String>)>, ModelError> {
        let weight = |n: &str| weights.buffers.contains_key(n);
        let cache = |n: &str| n.starts_with("kc.") || n.starts_with("vc.");
        let (what, inside, apart): (&str, &dyn Fn(&str) -> bool, &dyn Fn(&str) -> bool) = match plan
        {
            L2Plan::Off => return Ok(None),
            L2Plan::StreamWeights => ("weights", &weight, &cache),
            L2Plan::KeepCache | L2Plan::Auto => ("KV caches", &cache, &weight),
        };
        let span = |b: &Buffer| (b.device_address(), b.device_address() + b.bytes() as u64);
        let (mut lo, mut hi) = (u64::MAX, 0);
        for (_, b) in self.graph.buffers().filter(|(n, _)| inside(n)) {
            let (a, e) = span(b);
            (lo, hi) = (lo.min(a), hi.max(e));
        }
        if lo >= hi {
            return Ok(None);
        }
        let mut others = vec![];
        for (n, b) in self.graph.buffers().filter(|(n, _)| !inside(n)) {
            let (a, e) = span(b);
            if a < hi && e > lo {
                if apart(n) {
                    return Err(ModelError::L2Range {
                        what,
                        plan: plan.name(),
                        other: n.to_string(),
                        lo,
                        hi,
                    });
                }
                others.push(n.to_string());
            }
        }
        let window = match plan {
            L2Plan::StreamWeights => L2Window::streaming(lo, hi - lo),
            _ => L2Window::persisting(lo, hi - lo, 1.0),
        };
        Ok(Some((window, others)))
    }

    /// Sets `plan`'s window ([`Self::l2_window`]) on `rt`'s device, before the step is
    /// captured: [`L2Plan::Auto`] sets the caches' window and clears it again unless the device
    /// keeps all of it (a hit ratio of 1 after its set-aside cut). Returns what the device did
    /// and the other buffers the window covers.
    pub fn set_l2(
        &self,
        rt: &Runtime,
        weights: &Weights,
        plan: L2Plan,
    ) -> Result<(L2Applied, Vec<String>), ModelError> {
        let dev = rt.device();
        let Some((window, others)) = self.l2_window(weights, plan)? else {
            return Ok((dev.set_l2_window(None)?, vec![]));
        };
        let asked = window.bytes;
        let applied = dev.set_l2_window(Some(window))?;
        if plan == L2Plan::Auto {
            if let L2Applied::Applied { window, .. } = applied {
                if window.hit_ratio < 1.0 || window.bytes < asked {
                    return Ok((dev.set_l2_window(None)?, vec![]));
                }
            }
        }
        Ok((applied, others))
    }
}
