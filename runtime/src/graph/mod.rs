//! The decode graph (DESIGN.md section 6): kernel calls on named buffers, ordered by their
//! read/write hazards, run eagerly or captured once and replayed.
//!
//! Nodes bind each buffer parameter to a named buffer of the graph and each scalar parameter to
//! a constant or to a named variable (`pos`, `len`). Edges come from the parameters' `Access`:
//! a node depends on every earlier node that writes what it reads (read after write), reads what
//! it writes (write after read) or writes what it writes (write after write). Workspaces count as
//! a buffer written by every call of their kernel.
//!
//! Capture prepares every node (routes, checks, workspaces) and records the launches; on a GPU
//! they go into a CUDA / HIP graph through stream capture. A replay re-prepares the nodes that
//! read a variable whose value changed since the last capture or replay, so their arguments are
//! checked and routes re-decided as for an eager launch, and rewrites only the kernel nodes whose
//! arguments, grid or variant changed (`cuGraphExecKernelNodeSetParams` on the instantiated
//! graph) before launching it. That is exact: the replay runs what an eager run with the same
//! variables would, node for node (a node's preparation depends only on its kernel, its buffers,
//! which a captured graph cannot change, and its scalars). The host work of a replay is then one
//! preparation per node whose variables moved, not one per node: a 4096-node graph with nothing
//! changed costs one graph launch. The cpu device records the node list and runs it, through the
//! same API.

use crate::device::{GraphExec, KernelArg, PreparedLaunch};
use crate::launch::{check_aliasing, Args, BufferUse};
use crate::value::Scalar;
use crate::{Buffer, Runtime, RuntimeError};
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

mod profile;
pub use profile::{KernelInStep, LeaveOut, NodeTime};

/// Errors of the decode graph.
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    /// A buffer name used twice.
    #[error("the graph already has a buffer `{0}`")]
    DuplicateBuffer(String),
    /// A node names a buffer the graph does not have.
    #[error("node {node} ({kernel}): no buffer `{buffer}` in the graph (bound to `{param}`)")]
    UnknownBuffer {
        /// Node index.
        node: usize,
        /// Kernel.
        kernel: String,
        /// The parameter.
        param: String,
        /// The buffer name.
        buffer: String,
    },
    /// A node binds a parameter that is not a buffer parameter of any variant.
    #[error("node {node} ({kernel}): `{param}` is not a buffer parameter")]
    NotABufferParam {
        /// Node index.
        node: usize,
        /// Kernel.
        kernel: String,
        /// The parameter.
        param: String,
    },
    /// A node reads a variable that has no value.
    #[error("node {node} ({kernel}): variable `{var}` (for `{param}`) has no value; set it first")]
    UnsetVar {
        /// Node index.
        node: usize,
        /// Kernel.
        kernel: String,
        /// The parameter.
        param: String,
        /// The variable.
        var: String,
    },
    /// A variable no node uses.
    #[error("no node of the graph uses a variable `{0}`")]
    UnknownVar(String),
    /// The hazard edges form a cycle (cannot happen with edges from earlier to later nodes).
    #[error("the graph has a cycle through node {0}")]
    Cycle(usize),
}

/// How a scalar parameter of a node gets its value.
#[derive(Clone, Debug, PartialEq)]
pub enum ScalarArg {
    /// A constant.
    Const(Scalar),
    /// A graph variable, read at each run or replay.
    Var(String),
}

/// The arguments of a node: buffers by graph name, scalars by value or variable.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeArgs {
    buffers: Vec<(String, String)>,
    scalars: Vec<(String, ScalarArg)>,
}

impl NodeArgs {
    /// No arguments.
    pub fn new() -> NodeArgs {
        NodeArgs::default()
    }

    /// Binds parameter `param` to the graph buffer `buffer`.
    pub fn buffer(mut self, param: impl Into<String>, buffer: impl Into<String>) -> NodeArgs {
        self.buffers.push((param.into(), buffer.into()));
        self
    }

    /// Binds scalar parameter `param` to a constant.
    pub fn scalar(mut self, param: impl Into<String>, v: impl Into<Scalar>) -> NodeArgs {
        self.scalars.push((param.into(), ScalarArg::Const(v.into())));
        self
    }

    /// Binds scalar parameter `param` to the graph variable `var`.
    pub fn var(mut self, param: impl Into<String>, var: impl Into<String>) -> NodeArgs {
        self.scalars.push((param.into(), ScalarArg::Var(var.into())));
        self
    }
}

/// A node: one kernel call.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The kernel (routed at each run).
    pub kernel: String,
    /// Its arguments.
    pub args: NodeArgs,
    /// Buffers (and workspaces, as `workspace:<kernel>`) it may read.
    pub reads: BTreeSet<String>,
    /// Buffers it may write.
    pub writes: BTreeSet<String>,
}

/// The kind of a hazard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HazardKind {
    /// The later node reads what the earlier one writes.
    ReadAfterWrite,
    /// The later node writes what the earlier one reads.
    WriteAfterRead,
    /// Both write.
    WriteAfterWrite,
}

/// An edge: why a node must run after another.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Hazard {
    /// Kind.
    pub kind: HazardKind,
    /// The buffer.
    pub buffer: String,
}

impl fmt::Display for Hazard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let k = match self.kind {
            HazardKind::ReadAfterWrite => "RAW",
            HazardKind::WriteAfterRead => "WAR",
            HazardKind::WriteAfterWrite => "WAW",
        };
        write!(f, "{k} on {}", self.buffer)
    }
}

/// A decode graph: named buffers, variables, and kernel calls ordered by hazards.
#[derive(Clone, Debug, Default)]
pub struct DecodeGraph {
    buffers: BTreeMap<String, Buffer>,
    vars: BTreeMap<String, Scalar>,
    graph: DiGraph<Node, Hazard>,
    /// The nodes that touch each buffer (or workspace), in the order they were added: a new
    /// node is compared only with these, not with the whole graph.
    touched_by: BTreeMap<String, Vec<NodeIndex>>,
}

impl DecodeGraph {
    /// An empty graph.
    pub fn new() -> DecodeGraph {
        DecodeGraph::default()
    }

    /// Adds a named buffer.
    pub fn add_buffer(&mut self, name: impl Into<String>, b: Buffer) -> Result<(), GraphError> {
        let name = name.into();
        if self.buffers.contains_key(&name) {
            return Err(GraphError::DuplicateBuffer(name));
        }
        self.buffers.insert(name, b);
        Ok(())
    }

    /// The buffer named `name`.
    pub fn buffer(&self, name: &str) -> Option<&Buffer> {
        self.buffers.get(name)
    }

    /// Every named buffer, by name.
    pub fn buffers(&self) -> impl Iterator<Item = (&str, &Buffer)> {
        self.buffers.iter().map(|(n, b)| (n.as_str(), b))
    }

    /// Sets a variable (for eager runs and for the next capture).
    pub fn set_var(&mut self, name: impl Into<String>, v: impl Into<Scalar>) {
        self.vars.insert(name.into(), v.into());
    }

    /// The value of a variable.
    pub fn var(&self, name: &str) -> Option<Scalar> {
        self.vars.get(name).copied()
    }

    /// Adds a call of `kernel` after the nodes already there, with an edge from each node it
    /// has a hazard with.
    pub fn add_node(
        &mut self,
        rt: &Runtime,
        kernel: &str,
        args: NodeArgs,
    ) -> Result<NodeIndex, RuntimeError> {
        let node = self.graph.node_count();
        let access = rt.access(kernel)?;
        let (mut reads, mut writes) = (BTreeSet::new(), BTreeSet::new());
        for (param, buffer) in &args.buffers {
            if !self.buffers.contains_key(buffer) {
                return Err(GraphError::UnknownBuffer {
                    node,
                    kernel: kernel.to_string(),
                    param: param.clone(),
                    buffer: buffer.clone(),
                }
                .into());
            }
            let Some(&(r, w)) = access.get(param) else {
                return Err(GraphError::NotABufferParam {
                    node,
                    kernel: kernel.to_string(),
                    param: param.clone(),
                }
                .into());
            };
            if r {
                reads.insert(buffer.clone());
            }
            if w {
                writes.insert(buffer.clone());
            }
        }
        // No written buffer parameter may overlap another (`noalias`), as every launch checks:
        // refused here already, when the node is added, not first at run or capture.
        let uses: Vec<BufferUse<'_>> = args
            .buffers
            .iter()
            .map(|(param, buffer)| {
                let b = &self.buffers[buffer];
                BufferUse {
                    param,
                    writes: access[param].1,
                    address: b.device_address(),
                    bytes: b.bytes() as u64,
                }
            })
            .collect();
        check_aliasing(&format!("node {node} ({kernel})"), &uses)?;
        if rt.has_workspace(kernel) {
            let ws = format!("workspace:{kernel}");
            reads.insert(ws.clone());
            writes.insert(ws);
        }
        // Earlier nodes that share a buffer with this one, in the order they were added.
        let earlier: BTreeSet<NodeIndex> = reads
            .iter()
            .chain(&writes)
            .filter_map(|b| self.touched_by.get(b))
            .flatten()
            .copied()
            .collect();
        for b in reads.union(&writes) {
            self.touched_by.entry(b.clone()).or_default().push(NodeIndex::new(node));
        }
        let n = Node { kernel: kernel.to_string(), args, reads, writes };
        let idx = self.graph.add_node(n);
        for j in earlier {
            let (a, b) = (&self.graph[j], &self.graph[idx]);
            let mut hz = vec![];
            for buf in a.writes.intersection(&b.reads) {
                hz.push(Hazard { kind: HazardKind::ReadAfterWrite, buffer: buf.clone() });
            }
            for buf in a.reads.intersection(&b.writes) {
                hz.push(Hazard { kind: HazardKind::WriteAfterRead, buffer: buf.clone() });
            }
            for buf in a.writes.intersection(&b.writes) {
                hz.push(Hazard { kind: HazardKind::WriteAfterWrite, buffer: buf.clone() });
            }
            for h in hz {
                self.graph.add_edge(j, idx, h);
            }
        }
        Ok(idx)
    }

    /// The nodes.
    pub fn nodes(&self) -> impl Iterator<Item = (NodeIndex, &Node)> {
        self.graph.node_indices().map(|i| (i, &self.graph[i]))
    }

    /// The hazard edges `(earlier, later, hazard)`.
    pub fn hazards(&self) -> Vec<(NodeIndex, NodeIndex, &Hazard)> {
        self.graph.edge_references().map(|e| (e.source(), e.target(), e.weight())).collect()
    }

    /// The underlying petgraph.
    pub fn petgraph(&self) -> &DiGraph<Node, Hazard> {
        &self.graph
    }

    /// A topological order of the hazard edges; among nodes free to go, the one added first
    /// goes first (Kahn's algorithm with a min-heap), so the order is deterministic and equals
    /// the order of addition whenever the hazards allow it.
    pub fn order(&self) -> Result<Vec<NodeIndex>, GraphError> {
        use std::cmp::Reverse;
        let g = &self.graph;
        let mut indegree: Vec<usize> =
            g.node_indices().map(|i| g.neighbors_directed(i, petgraph::Incoming).count()).collect();
        let mut ready: std::collections::BinaryHeap<Reverse<NodeIndex>> =
            g.node_indices().filter(|i| indegree[i.index()] == 0).map(Reverse).collect();
        let mut out = Vec::with_capacity(g.node_count());
        while let Some(Reverse(i)) = ready.pop() {
            out.push(i);
            for j in g.neighbors_directed(i, petgraph::Outgoing) {
                indegree[j.index()] -= 1;
                if indegree[j.index()] == 0 {
                    ready.push(Reverse(j));
                }
            }
        }
        match g.node_indices().find(|i| indegree[i.index()] > 0) {
            Some(i) => Err(GraphError::Cycle(i.index())),
            None => Ok(out),
        }
    }

    fn prepare(
        &self,
        rt: &Runtime,
        order: &[NodeIndex],
        vars: &BTreeMap<String, Scalar>,
    ) -> Result<Vec<PreparedLaunch>, RuntimeError> {
        order
            .iter()
            .map(|&i| prepare_node(rt, &self.buffers, vars, i.index(), &self.graph[i]))
            .collect()
    }

    /// Runs every node once, in topological order, on the device's stream.
    pub fn run(&self, rt: &Runtime) -> Result<(), RuntimeError> {
        for i in self.order()? {
            let p = prepare_node(rt, &self.buffers, &self.vars, i.index(), &self.graph[i])?;
            rt.device().launch(&p)?;
        }
        Ok(())
    }

    /// Captures the graph with the current variables; replay it with [`CapturedGraph::replay`].
    /// Capturing runs nothing.
    pub fn capture<'r>(&self, rt: &'r Runtime) -> Result<CapturedGraph<'r>, RuntimeError> {
        let order = self.order()?;
        let launches = self.prepare(rt, &order, &self.vars)?;
        let exec = rt.device().capture(&launches)?;
        let readers: Vec<BTreeSet<String>> =
            order.iter().map(|&i| node_vars(&self.graph[i])).collect();
        let used = readers.iter().flatten().cloned().collect();
        Ok(CapturedGraph {
            rt,
            graph: self.clone(),
            order,
            used,
            readers,
            vars: self.vars.clone(),
            dirty: BTreeSet::new(),
            resync: false,
            rechecked: 0,
            pending: 0,
            last: launches,
            exec,
        })
    }
}

/// The variables a node's scalars read.
fn node_vars(n: &Node) -> BTreeSet<String> {
    n.args
        .scalars
        .iter()
        .filter_map(|(_, s)| match s {
            ScalarArg::Var(v) => Some(v.clone()),
            ScalarArg::Const(_) => None,
        })
        .collect()
}

fn prepare_node(
    rt: &Runtime,
    buffers: &BTreeMap<String, Buffer>,
    vars: &BTreeMap<String, Scalar>,
    index: usize,
    n: &Node,
) -> Result<PreparedLaunch, RuntimeError> {
    let mut args = Args::new();
    for (param, buffer) in &n.args.buffers {
        args = args.buffer(param.as_str(), &buffers[buffer]);
    }
    for (param, s) in &n.args.scalars {
        let v = match s {
            ScalarArg::Const(v) => *v,
            ScalarArg::Var(var) => *vars.get(var).ok_or_else(|| GraphError::UnsetVar {
                node: index,
                kernel: n.kernel.clone(),
                param: param.clone(),
                var: var.clone(),
            })?,
        };
        args = args.scalar(param.as_str(), v);
    }
    rt.prepare(&n.kernel, None, &args)
}

/// True when the device must be told about new arguments for this node.
fn changed(old: &PreparedLaunch, new: &PreparedLaunch) -> bool {
    old.variant != new.variant
        || old.grid != new.grid
        || old.block != new.block
        || old.args.len() != new.args.len()
        || old.args.iter().zip(&new.args).any(|(a, b)| match (a, b) {
            (KernelArg::Scalar(x), KernelArg::Scalar(y)) => x != y,
            (KernelArg::Buffer(x), KernelArg::Buffer(y)) => !Arc::ptr_eq(x, y),
            _ => true,
        })
}

/// A captured decode graph: set variables, replay.
pub struct CapturedGraph<'r> {
    rt: &'r Runtime,
    graph: DecodeGraph,
    order: Vec<NodeIndex>,
    used: BTreeSet<String>,
    /// The variables each node (in launch order) reads.
    readers: Vec<BTreeSet<String>>,
    vars: BTreeMap<String, Scalar>,
    /// Variables whose value changed since the launches in `last` were prepared.
    dirty: BTreeSet<String>,
    /// A replay failed on the device: rewrite every node at the next one.
    resync: bool,
    /// Nodes re-checked at the last replay (and the updates before it).
    rechecked: usize,
    /// Nodes re-checked by updates since the last replay.
    pending: usize,
    /// The launches as the device graph holds them now.
    last: Vec<PreparedLaunch>,
    exec: GraphExec,
}

impl fmt::Debug for CapturedGraph<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CapturedGraph({} nodes on {:?})", self.order.len(), self.rt.device())
    }
}

impl CapturedGraph<'_> {
    /// Sets a variable for the next replays.
    pub fn set_var(&mut self, name: &str, v: impl Into<Scalar>) -> Result<(), GraphError> {
        if !self.used.contains(name) {
            return Err(GraphError::UnknownVar(name.to_string()));
        }
        let v = v.into();
        if self.vars.insert(name.to_string(), v) != Some(v) {
            self.dirty.insert(name.to_string());
        }
        Ok(())
    }

    /// The value of a variable.
    pub fn var(&self, name: &str) -> Option<Scalar> {
        self.vars.get(name).copied()
    }

    /// The number of kernel nodes.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True when the graph has no node.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The variant each node ran at the last capture or replay, in launch order.
    pub fn variants(&self) -> Vec<(String, String)> {
        self.order
            .iter()
            .zip(&self.last)
            .map(|(&i, l)| (self.graph.graph[i].kernel.clone(), l.variant.to_string()))
            .collect()
    }

    /// Replays the graph with the current variables. The nodes that read a variable changed
    /// since the last capture, update or replay are re-checked (routes, ABI, lengths) first; a
    /// refusal replays nothing and leaves the graph as it was. The others were checked with the
    /// same arguments before and are launched as they are.
    pub fn replay(&mut self) -> Result<(), RuntimeError> {
        self.apply(true)
    }

    /// Does a replay's host work without the launch: re-checks the nodes whose variables
    /// changed and rewrites them on the device. It may run while an earlier replay is still on
    /// the device (a rewrite does not touch launches already issued), so an engine can prepare
    /// the next step during this one; the next [`Self::replay`] with the same variables is
    /// then one graph launch.
    pub fn update(&mut self) -> Result<(), RuntimeError> {
        self.apply(false)
    }

    fn apply(&mut self, launch: bool) -> Result<(), RuntimeError> {
        let mut updates = vec![];
        for (k, &i) in self.order.iter().enumerate() {
            if !self.readers[k].is_disjoint(&self.dirty) {
                let n = &self.graph.graph[i];
                updates.push((
                    k,
                    prepare_node(self.rt, &self.graph.buffers, &self.vars, i.index(), n)?,
                ));
            }
        }
        let mut flags = vec![self.resync; self.last.len()];
        for (k, p) in &mut updates {
            flags[*k] |= changed(&self.last[*k], p);
            std::mem::swap(&mut self.last[*k], p);
        }
        if let Err(e) = self.rt.device().replay(&self.exec, &self.last, &flags, launch) {
            // Some nodes may have been rewritten before the failure: go back to the launches
            // prepared before and rewrite every node at the next replay.
            for (k, p) in &mut updates {
                std::mem::swap(&mut self.last[*k], p);
            }
            self.resync = true;
            return Err(e.into());
        }
        self.dirty.clear();
        self.resync = false;
        self.pending += updates.len();
        if launch {
            self.rechecked = std::mem::take(&mut self.pending);
        }
        Ok(())
    }

    /// How many nodes the last successful replay re-checked (with the updates since the replay
    /// before it): those reading a variable whose value had changed. The host cost of a replay
    /// grows with it, not with the graph's size.
    pub fn rechecked(&self) -> usize {
        self.rechecked
    }

    /// Replays the graph `n` times with the same variables.
    pub fn replay_n(&mut self, n: usize) -> Result<(), RuntimeError> {
        for _ in 0..n {
            self.replay()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
