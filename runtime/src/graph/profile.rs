//! Where a decode step's time goes: the device time of a replay of the whole graph, each node's
//! own time inside a graph of its own (the node repeated, so its launch gap is counted as it is
//! in the step's graph), and each kernel's cost inside the step (the step replayed without its
//! nodes: [`DecodeGraph::leave_out`]).
//!
//! The first two replay what the step replays; they change no buffer a step would not (a node
//! repeated writes what it wrote once, from the same inputs). The third is for timing only: the
//! nodes after a left-out one compute from stale inputs.

use super::{CapturedGraph, DecodeGraph, Node};
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
        self.time_replays_with(warmup, n, &mut |_, _| Ok(()), &mut |_, _| Ok(()))
    }

    /// [`Self::time_replays`] with `before(self, i)` called before replay `i` (warm-up ones
    /// counted first) and `after(self, i)` after it, inside the replay's events: what they
    /// issue on the stream is timed with it (an engine's per-step variables and read-backs).
    pub fn time_replays_with(
        &mut self,
        warmup: usize,
        n: usize,
        before: &mut dyn FnMut(&mut Self, usize) -> Result<(), RuntimeError>,
        after: &mut dyn FnMut(&mut Self, usize) -> Result<(), RuntimeError>,
    ) -> Result<Vec<f64>, RuntimeError> {
        let rt = self.rt;
        let mut i = 0;
        time_replays(rt, warmup, n, &mut || {
            before(self, i)?;
            self.replay()?;
            after(self, i)?;
            i += 1;
            Ok(())
        })
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
            let mut g = self.empty_like();
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

/// A kernel's cost inside the step, found by leaving its nodes out: what the step's own replay
/// loses without them, launch gaps, overlap with the nodes around it and cold caches included
/// (a node timed alone, in a graph of its own copies, sees none of those).
#[derive(Clone, Debug, PartialEq)]
pub struct KernelInStep {
    /// The kernel.
    pub kernel: String,
    /// Its nodes in the step.
    pub nodes: usize,
    /// Median microseconds of a replay of the step without them (0 where they are every node).
    pub without_us: f64,
}

/// The step replayed whole and without each kernel's nodes in turn ([`DecodeGraph::leave_out`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LeaveOut {
    /// Median microseconds of a replay of the whole step, timed in the same rounds.
    pub whole_us: f64,
    /// One row a kernel, in the order of its first node.
    pub kernels: Vec<KernelInStep>,
}

impl LeaveOut {
    /// Microseconds the step spends on `k`'s nodes: the whole step less the step without them.
    pub fn in_step_us(&self, k: &KernelInStep) -> f64 {
        self.whole_us - k.without_us
    }
}

impl DecodeGraph {
    /// This graph without the nodes of `kernel`: the same buffers and variables, the other nodes
    /// added again in their order (so the hazards between them are found again).
    pub fn without_kernel(&self, rt: &Runtime, kernel: &str) -> Result<DecodeGraph, RuntimeError> {
        self.rebuilt(rt, |n| n.kernel != kernel)
    }

    /// A graph with this one's buffers and variables and no nodes.
    fn empty_like(&self) -> DecodeGraph {
        DecodeGraph {
            buffers: self.buffers.clone(),
            vars: self.vars.clone(),
            ..DecodeGraph::default()
        }
    }

    /// The nodes `keep` takes, added again in their order, over the same buffers and variables.
    fn rebuilt(
        &self,
        rt: &Runtime,
        keep: impl Fn(&Node) -> bool,
    ) -> Result<DecodeGraph, RuntimeError> {
        let mut g = self.empty_like();
        for (_, n) in self.nodes().filter(|(_, n)| keep(n)) {
            g.add_node(rt, &n.kernel, n.args.clone())?;
        }
        Ok(g)
    }

    /// Each kernel's cost inside the step (the marginal, not the node alone): the whole graph
    /// and the graph without each kernel's nodes are captured with the current variables, then
    /// replayed in turns, `rounds` times `iters` replays each (after `warmup` more a turn), so
    /// that a drift of the clocks falls on all alike. The medians are reported.
    ///
    /// For timing only: a left-out node's outputs keep what they held, so the nodes after it
    /// compute from stale values and write the buffers a step writes (the KV rows at the step's
    /// position among them: the next step at that position writes them again).
    pub fn leave_out(
        &self,
        rt: &Runtime,
        rounds: usize,
        warmup: usize,
        iters: usize,
    ) -> Result<LeaveOut, RuntimeError> {
        let mut kernels: Vec<(String, usize)> = vec![];
        for (_, n) in self.nodes() {
            match kernels.iter_mut().find(|(k, _)| *k == n.kernel) {
                Some((_, c)) => *c += 1,
                None => kernels.push((n.kernel.clone(), 1)),
            }
        }
        // The whole step built the same way as the others, so only the left-out nodes differ.
        let mut whole = self.rebuilt(rt, |_| true)?.capture(rt)?;
        // `None` where the kernel is every node: nothing is left to replay.
        let mut without = vec![];
        for (k, c) in &kernels {
            let left = *c < self.graph.node_count();
            without.push(if left { Some(self.without_kernel(rt, k)?.capture(rt)?) } else { None });
        }
        let iters = iters.max(1);
        let (mut whole_t, mut without_t) = (vec![], vec![vec![]; kernels.len()]);
        for _ in 0..rounds.max(1) {
            whole_t.extend(whole.time_replays(warmup, iters)?);
            for (t, c) in without_t.iter_mut().zip(&mut without) {
                if let Some(c) = c {
                    t.extend(c.time_replays(warmup, iters)?);
                }
            }
        }
        let kernels = kernels
            .into_iter()
            .zip(without_t)
            .map(|((kernel, nodes), t)| KernelInStep {
                kernel,
                nodes,
                without_us: if t.is_empty() { 0.0 } else { median(t) },
            })
            .collect();
        Ok(LeaveOut { whole_us: median(whole_t), kernels })
    }
}
