//! Where a decode step's time goes: the device time of a replay of the whole graph, and each
//! node's own time inside a graph of its own (the node repeated, so its launch gap is counted as
//! it is in the step's graph).
//!
//! Both replay what the step replays; nothing here changes a buffer a step would not (a node
//! repeated writes what it wrote once, from the same inputs).

use super::{CapturedGraph, DecodeGraph};
use crate::{Runtime, RuntimeError};

/// One node's time in a graph of its own.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeTime {
    /// Its place in launch order.
    pub index: usize,
    /// The kernel.
    pub kernel: String,
    /// The variant its route chose.
    pub variant: String,
    /// Microseconds a call: the median over the timed replays of a graph of `reps` copies of
    /// the node, divided by `reps`.
    pub us: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Microseconds of each replay: an event recorded before and after each (the host's launch of
/// the graph is inside, as it is in a step).
fn time_replays(
    rt: &Runtime,
    warmup: usize,
    n: usize,
    replay: &mut dyn FnMut() -> Result<(), RuntimeError>,
) -> Result<Vec<f64>, RuntimeError> {
    for _ in 0..warmup {
        replay()?;
    }
    let mut events = Vec::with_capacity(n);
    for _ in 0..n {
        let a = rt.device().record_event()?;
        replay()?;
        let b = rt.device().record_event()?;
        events.push((a, b));
    }
    events.iter().map(|(a, b)| Ok(a.elapsed_ms(b)? * 1e3)).collect()
}

impl CapturedGraph<'_> {
    /// Device microseconds of `n` replays with the current variables (after `warmup` more),
    /// one figure a replay.
    pub fn time_replays(&mut self, warmup: usize, n: usize) -> Result<Vec<f64>, RuntimeError> {
        let rt = self.rt;
        time_replays(rt, warmup, n, &mut || self.replay())
    }
}

impl DecodeGraph {
    /// Each node's time, in launch order, with the current variables: a graph of `reps` copies
    /// of the node alone is captured and replayed `iters` times after `warmup` more; the median
    /// replay over `reps` is the node's time. Nodes equal in kernel and arguments are timed once.
    pub fn profile_nodes(
        &self,
        rt: &Runtime,
        reps: usize,
        warmup: usize,
        iters: usize,
    ) -> Result<Vec<NodeTime>, RuntimeError> {
        let order = self.order()?;
        let mut out: Vec<NodeTime> = Vec::with_capacity(order.len());
        for (index, &i) in order.iter().enumerate() {
            let n = &self.graph[i];
            let twin = order[..index].iter().position(|&j| {
                let m = &self.graph[j];
                m.kernel == n.kernel && m.args == n.args
            });
            if let Some(j) = twin {
                let t = NodeTime { index, ..out[j].clone() };
                out.push(t);
                continue;
            }
            let mut g = DecodeGraph {
                buffers: self.buffers.clone(),
                vars: self.vars.clone(),
                ..DecodeGraph::default()
            };
            for _ in 0..reps.max(1) {
                g.add_node(rt, &n.kernel, n.args.clone())?;
            }
            let mut c = g.capture(rt)?;
            let variant = c.variants().first().map(|(_, v)| v.clone()).unwrap_or_default();
            let t = time_replays(rt, warmup, iters.max(1), &mut || c.replay())?;
            out.push(NodeTime {
                index,
                kernel: n.kernel.clone(),
                variant,
                us: median(t) / reps.max(1) as f64,
            });
        }
        Ok(out)
    }
}
