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
mod tests {
    use super::*;
    use crate::testing::{self, testgen};
    use crate::{Device, Overrides};
    use kiln_ir::ScalarType;
    use rand::Rng;

    const STEPS: u32 = 100;
    const LEN: usize = (STEPS as usize + 1) * 32;

    struct Data {
        a: Vec<f32>,
        b: Vec<f32>,
        c: Vec<u32>,
    }

    fn random_data() -> Data {
        let mut r = rand::thread_rng();
        Data {
            a: (0..LEN).map(|_| r.gen_range(-1.0f32..1.0)).collect(),
            b: (0..LEN).map(|_| r.gen_range(-1.0f32..1.0)).collect(),
            c: (0..STEPS as usize + 1).map(|_| r.gen()).collect(),
        }
    }

    /// The chain on the host, step by step, with the same roundings (one per operation).
    fn reference(d: &Data) -> Data {
        let (mut a, mut b, mut c) = (d.a.clone(), d.b.clone(), d.c.clone());
        for pos in 1..=STEPS as usize {
            for l in 0..32 {
                a[pos * 32 + l] = b[(pos - 1) * 32 + l] * 1.5 + (pos + l) as f32;
            }
            for l in 0..32 {
                b[pos * 32 + l] = a[pos * 32 + l] + b[(pos - 1) * 32 + (l ^ 1)];
            }
            c[pos] = c[pos - 1].wrapping_mul(31).wrapping_add(a[pos * 32].to_bits());
        }
        Data { a, b, c }
    }

    fn graph(rt: &Runtime, d: &Data) -> DecodeGraph {
        let dev = rt.device();
        let mut g = DecodeGraph::new();
        g.add_buffer("a", dev.upload(&d.a).unwrap()).unwrap();
        g.add_buffer("b", dev.upload(&d.b).unwrap()).unwrap();
        g.add_buffer("c", dev.upload(&d.c).unwrap()).unwrap();
        let pos = || NodeArgs::new().var("pos", "pos");
        g.add_node(rt, "mix", pos().buffer("a", "a").buffer("b", "b")).unwrap();
        g.add_node(rt, "acc", pos().buffer("a", "a").buffer("b", "b")).unwrap();
        g.add_node(rt, "count", pos().buffer("a", "a").buffer("c", "c")).unwrap();
        g
    }

    fn bits(g: &DecodeGraph) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
        let r = |n: &str| g.buffer(n).unwrap().read_bytes().unwrap();
        (r("a"), r("b"), r("c"))
    }

    fn replay_equals_eager_bitwise(dev: &Device) {
        let kernels = [testing::mix(), testing::acc(), testing::count()];
        let Some((_d, pkg)) = testing::package_for(dev, &kernels) else { return };
        let rt = Runtime::load_with(dev, &pkg, Overrides::none()).unwrap();
        let data = random_data();

        let mut eager = graph(&rt, &data);
        let order: Vec<String> =
            eager.order().unwrap().iter().map(|&i| eager.petgraph()[i].kernel.clone()).collect();
        assert_eq!(order, ["mix", "acc", "count"]);
        let hz: Vec<String> = eager
            .hazards()
            .iter()
            .map(|(a, b, h)| format!("{}->{} {h}", a.index(), b.index()))
            .collect();
        assert_eq!(hz, ["0->1 RAW on a", "0->1 WAR on b", "0->2 RAW on a"]);
        for pos in 1..=STEPS {
            eager.set_var("pos", pos);
            eager.run(&rt).unwrap();
        }

        let mut g = graph(&rt, &data);
        g.set_var("pos", 1u32);
        let mut cap = g.capture(&rt).unwrap();
        assert_eq!(cap.len(), 3);
        for pos in 1..=STEPS {
            cap.set_var("pos", pos).unwrap();
            cap.replay().unwrap();
        }
        assert_eq!(bits(&g), bits(&eager), "graph replay differs from the eager run");

        let want = reference(&data);
        let (a, b, c) = bits(&g);
        assert_eq!(a, crate::value::to_bytes(&want.a));
        assert_eq!(b, crate::value::to_bytes(&want.b));
        assert_eq!(c, crate::value::to_bytes(&want.c));

        // A replay is checked like a launch: a position past the buffers replays nothing.
        cap.set_var("pos", STEPS + 1).unwrap();
        let e = cap.replay().unwrap_err();
        assert!(e.to_string().contains("buffer `a` has 3232 elements, needs at least 3264"), "{e}");
        assert_eq!(bits(&g), (a, b, c));
        assert!(cap.set_var("nope", 1u32).is_err());
    }

    /// A replay re-checks only the nodes whose variables changed, and still runs every node.
    fn replay_rechecks_only_changed_nodes(dev: &Device) {
        let kernels = [testing::mix(), testing::acc(), testing::count()];
        let Some((_d, pkg)) = testing::package_for(dev, &kernels) else { return };
        let rt = Runtime::load_with(dev, &pkg, Overrides::none()).unwrap();
        let data = random_data();
        let build = || {
            let dev = rt.device();
            let mut g = DecodeGraph::new();
            g.add_buffer("a", dev.upload(&data.a).unwrap()).unwrap();
            g.add_buffer("b", dev.upload(&data.b).unwrap()).unwrap();
            g.add_buffer("c", dev.upload(&data.c).unwrap()).unwrap();
            // `mix` and `count` follow `pos`; `acc` always works on position `fixed`.
            let pos = NodeArgs::new().var("pos", "pos");
            g.add_node(&rt, "mix", pos.buffer("a", "a").buffer("b", "b")).unwrap();
            let fixed = NodeArgs::new().var("pos", "fixed");
            g.add_node(&rt, "acc", fixed.buffer("a", "a").buffer("b", "b")).unwrap();
            let pos = NodeArgs::new().var("pos", "pos");
            g.add_node(&rt, "count", pos.buffer("a", "a").buffer("c", "c")).unwrap();
            g
        };
        let steps = [3u32, 3, 3, 7, 7, 2, 2, 2];
        let mut eager = build();
        eager.set_var("fixed", 5u32);
        let mut g = build();
        g.set_var("fixed", 5u32);
        g.set_var("pos", 3u32);
        let mut cap = g.capture(&rt).unwrap();
        let mut prev = 3;
        for &p in &steps {
            eager.set_var("pos", p);
            eager.run(&rt).unwrap();
            cap.set_var("pos", p).unwrap();
            cap.replay().unwrap();
            let want = if p == prev { 0 } else { 2 };
            assert_eq!(cap.rechecked(), want, "pos {prev} -> {p}");
            prev = p;
        }
        cap.set_var("fixed", 5u32).unwrap();
        cap.replay().unwrap();
        assert_eq!(cap.rechecked(), 0, "the same value is no change");
        eager.run(&rt).unwrap();
        cap.set_var("fixed", 6u32).unwrap();
        cap.replay().unwrap();
        assert_eq!(cap.rechecked(), 1);
        eager.set_var("fixed", 6u32);
        eager.run(&rt).unwrap();
        assert_eq!(bits(&g), bits(&eager), "replays with unchanged variables differ from eager");

        // A refused replay changes nothing and keeps the variable pending: the next good value
        // re-checks its nodes again.
        let before = bits(&g);
        cap.set_var("pos", STEPS + 1).unwrap();
        assert!(cap.replay().is_err());
        assert_eq!(bits(&g), before);
        assert!(cap.replay().is_err(), "still the refused value");
        cap.set_var("pos", 4u32).unwrap();
        cap.replay().unwrap();
        assert_eq!(cap.rechecked(), 2);
        eager.set_var("pos", 4u32);
        eager.run(&rt).unwrap();
        assert_eq!(bits(&g), bits(&eager));
    }

    /// `update` does a replay's host work and no launch: nothing runs, the next replay with the
    /// same variables re-checks nothing more and runs what an eager run does; a refused update
    /// leaves the graph as it was and the next good replay still re-checks.
    fn update_prepares_the_next_replay_without_running(dev: &Device) {
        let kernels = [testing::mix(), testing::count()];
        let Some((_d, pkg)) = testing::package_for(dev, &kernels) else { return };
        let rt = Runtime::load_with(dev, &pkg, Overrides::none()).unwrap();
        let data = random_data();
        let build = || {
            let dev = rt.device();
            let mut g = DecodeGraph::new();
            g.add_buffer("a", dev.upload(&data.a).unwrap()).unwrap();
            g.add_buffer("b", dev.upload(&data.b).unwrap()).unwrap();
            g.add_buffer("c", dev.upload(&data.c).unwrap()).unwrap();
            let pos = NodeArgs::new().var("pos", "pos");
            g.add_node(&rt, "mix", pos.buffer("a", "a").buffer("b", "b")).unwrap();
            let pos = NodeArgs::new().var("pos", "pos");
            g.add_node(&rt, "count", pos.buffer("a", "a").buffer("c", "c")).unwrap();
            g
        };
        let mut eager = build();
        let mut g = build();
        g.set_var("pos", 3u32);
        let mut cap = g.capture(&rt).unwrap();
        cap.replay().unwrap();
        eager.set_var("pos", 3u32);
        eager.run(&rt).unwrap();
        let mut prev = 3;
        for p in [9u32, 10, 10, 2] {
            let before = bits(&g);
            cap.set_var("pos", p).unwrap();
            cap.update().unwrap();
            rt.synchronize().unwrap();
            assert_eq!(bits(&g), before, "an update ran something (pos {p})");
            cap.replay().unwrap();
            assert_eq!(cap.rechecked(), if p == prev { 0 } else { 2 }, "pos {prev} -> {p}");
            prev = p;
            eager.set_var("pos", p);
            eager.run(&rt).unwrap();
            assert_eq!(bits(&g), bits(&eager), "update then replay differs from eager at pos {p}");
        }
        // Updated at 11, replayed with nothing changed since: the two re-checks are the update's.
        cap.set_var("pos", 11u32).unwrap();
        cap.update().unwrap();
        cap.replay().unwrap();
        assert_eq!(cap.rechecked(), 2);
        eager.set_var("pos", 11u32);
        eager.run(&rt).unwrap();
        let before = bits(&g);
        cap.set_var("pos", STEPS + 1).unwrap();
        assert!(cap.update().is_err());
        rt.synchronize().unwrap();
        assert_eq!(bits(&g), before);
        cap.set_var("pos", 5u32).unwrap();
        cap.replay().unwrap();
        assert_eq!(cap.rechecked(), 2);
        eager.set_var("pos", 5u32);
        eager.run(&rt).unwrap();
        assert_eq!(bits(&g), bits(&eager));
    }

    /// Under an L2 window (streaming, then a persisting one larger than any set-aside part)
    /// launches and a captured graph give the reference's bits; the window is cut to what the
    /// device takes, windows no device takes are refused, and clearing it works. Only cuda
    /// applies a window; the others answer that it was ignored.
    fn an_l2_window_changes_no_result(dev: &Device) {
        use crate::device::{L2Access, L2Applied, L2Window};
        let kernels = [testing::mix(), testing::acc(), testing::count()];
        let Some((_d, pkg)) = testing::package_for(dev, &kernels) else { return };
        let rt = Runtime::load_with(dev, &pkg, Overrides::none()).unwrap();
        let data = random_data();
        let want = reference(&data);
        let expect = |g: &DecodeGraph| {
            let (a, b, c) = bits(g);
            assert_eq!(a, crate::value::to_bytes(&want.a));
            assert_eq!(b, crate::value::to_bytes(&want.b));
            assert_eq!(c, crate::value::to_bytes(&want.c));
        };
        for bad in [
            L2Window::streaming(4096, 0),
            L2Window::streaming(u64::MAX - 8, 64),
            L2Window::persisting(4096, 64, f32::NAN),
            L2Window::persisting(4096, 64, 1.5),
        ] {
            let e = dev.set_l2_window(Some(bad)).unwrap_err().to_string();
            assert!(e.starts_with("bad L2 window"), "{e}");
        }
        let a = dev.alloc(ScalarType::U8, 1).unwrap();
        let g = graph(&rt, &data);
        let span = g.buffer("a").unwrap();
        let windows = [
            L2Window::streaming(span.device_address(), span.bytes() as u64),
            // 1 TiB: past every device's largest window and set-aside part.
            L2Window::persisting(a.device_address(), 1 << 40, 1.0),
        ];
        for w in windows {
            let applied = dev.set_l2_window(Some(w)).unwrap();
            match (dev.kind(), applied) {
                (crate::DeviceKind::Cuda, L2Applied::Applied { window, max_window, set_aside }) => {
                    assert_eq!(window.bytes, w.bytes.min(max_window));
                    assert!(window.hit_ratio <= w.hit_ratio);
                    let persists = w.hit == L2Access::Persisting;
                    assert_eq!(set_aside > 0, persists, "{applied:?}");
                    if persists {
                        let share = window.bytes as f64 * f64::from(window.hit_ratio);
                        assert!(share <= set_aside as f64 + 1.0, "{applied:?}");
                    }
                }
                (crate::DeviceKind::Cuda, other) => {
                    panic!("not applied on an sm_80+ GPU: {other:?}")
                }
                (_, applied) => assert_eq!(applied, L2Applied::Ignored),
            }
            let mut eager = graph(&rt, &data);
            let mut g = graph(&rt, &data);
            g.set_var("pos", 1u32);
            let mut cap = g.capture(&rt).unwrap();
            for pos in 1..=STEPS {
                eager.set_var("pos", pos);
                eager.run(&rt).unwrap();
                cap.set_var("pos", pos).unwrap();
                cap.replay().unwrap();
            }
            expect(&eager);
            expect(&g);
        }
        let cleared = dev.set_l2_window(None).unwrap();
        let on_cuda = dev.kind() == crate::DeviceKind::Cuda;
        assert_eq!(cleared, if on_cuda { L2Applied::Cleared } else { L2Applied::Ignored });
        let mut eager = graph(&rt, &data);
        for pos in 1..=STEPS {
            eager.set_var("pos", pos);
            eager.run(&rt).unwrap();
        }
        expect(&eager);
    }

    testgen!(
        replay_equals_eager_bitwise,
        replay_rechecks_only_changed_nodes,
        update_prepares_the_next_replay_without_running,
        an_l2_window_changes_no_result
    );

    /// The hazard edges of a random graph are exactly those of the pairwise definition: every
    /// earlier node that writes what a node reads, reads what it writes, or writes what it writes.
    #[test]
    fn hazards_match_the_pairwise_definition() {
        let dev = Device::cpu(Default::default());
        let kernels = [testing::mix(), testing::acc(), testing::count()];
        let (_d, pkg) = testing::package_for(&dev, &kernels).unwrap();
        let rt = Runtime::load_with(&dev, &pkg, Overrides::none()).unwrap();
        let mut g = DecodeGraph::new();
        for name in ["p", "q", "r", "s", "t"] {
            g.add_buffer(name, dev.alloc(ScalarType::F32, 64).unwrap()).unwrap();
        }
        g.add_buffer("c", dev.alloc(ScalarType::U32, 4).unwrap()).unwrap();
        let mut r = rand::thread_rng();
        // Two different buffers: one buffer as `a` and `b` is refused (a writer aliases).
        let names = ["p", "q", "r", "s", "t"];
        for _ in 0..80 {
            let i = r.gen_range(0..5);
            let (a, b) = (names[i], names[(i + r.gen_range(1..5)) % 5]);
            let args = NodeArgs::new().scalar("pos", 1u32).buffer("a", a);
            match r.gen_range(0..3) {
                0 => g.add_node(&rt, "mix", args.buffer("b", b)).unwrap(),
                1 => g.add_node(&rt, "acc", args.buffer("b", b)).unwrap(),
                _ => g.add_node(&rt, "count", args.buffer("c", "c")).unwrap(),
            };
        }
        let nodes: Vec<&Node> = g.nodes().map(|(_, n)| n).collect();
        let mut want = vec![];
        for i in 0..nodes.len() {
            for j in 0..i {
                let (a, b) = (nodes[j], nodes[i]);
                for buf in a.writes.intersection(&b.reads) {
                    want.push((j, i, HazardKind::ReadAfterWrite, buf.clone()));
                }
                for buf in a.reads.intersection(&b.writes) {
                    want.push((j, i, HazardKind::WriteAfterRead, buf.clone()));
                }
                for buf in a.writes.intersection(&b.writes) {
                    want.push((j, i, HazardKind::WriteAfterWrite, buf.clone()));
                }
            }
        }
        let mut got: Vec<_> = g
            .hazards()
            .into_iter()
            .map(|(a, b, h)| (a.index(), b.index(), h.kind, h.buffer.clone()))
            .collect();
        got.sort_by_key(|x| (x.1, x.0));
        want.sort_by_key(|x| (x.1, x.0));
        assert!(!want.is_empty());
        assert_eq!(got, want);
    }

    /// Leaving a kernel out rebuilds the other nodes with the hazards they have among
    /// themselves, and `leave_out` gives one row a kernel, in the order of its first node; a
    /// kernel that is every node leaves nothing to time.
    #[test]
    fn leave_out_drops_one_kernel_at_a_time() {
        let dev = Device::cpu(Default::default());
        let kernels = [testing::mix(), testing::acc(), testing::count()];
        let (_d, pkg) = testing::package_for(&dev, &kernels).unwrap();
        let rt = Runtime::load_with(&dev, &pkg, Overrides::none()).unwrap();
        let data = random_data();
        let mut g = graph(&rt, &data);
        g.add_node(&rt, "mix", NodeArgs::new().var("pos", "pos").buffer("a", "a").buffer("b", "b"))
            .unwrap();
        g.set_var("pos", 2u32);
        let edges = |g: &DecodeGraph| -> Vec<String> {
            let name = |i: NodeIndex| g.petgraph()[i].kernel.clone();
            g.hazards().iter().map(|(a, b, h)| format!("{}->{} {h}", name(*a), name(*b))).collect()
        };
        let no_mix = g.without_kernel(&rt, "mix").unwrap();
        let kinds: Vec<_> = no_mix.nodes().map(|(_, n)| n.kernel.clone()).collect();
        assert_eq!(kinds, ["acc", "count"]);
        assert!(edges(&no_mix).is_empty(), "{:?}", edges(&no_mix));
        let no_acc = g.without_kernel(&rt, "acc").unwrap();
        assert_eq!(
            edges(&no_acc),
            ["mix->count RAW on a", "mix->mix WAW on a", "count->mix WAR on a"]
        );
        assert_eq!(no_acc.var("pos"), Some(2u32.into()));

        let lo = g.leave_out(&rt, 1, 0, 1).unwrap();
        let rows: Vec<_> = lo.kernels.iter().map(|k| (k.kernel.as_str(), k.nodes)).collect();
        assert_eq!(rows, [("mix", 2), ("acc", 1), ("count", 1)]);
        assert!(lo.whole_us > 0.0 && lo.kernels.iter().all(|k| k.without_us > 0.0), "{lo:?}");

        let mut one = DecodeGraph::new();
        one.add_buffer("a", dev.upload(&data.a).unwrap()).unwrap();
        one.add_buffer("b", dev.upload(&data.b).unwrap()).unwrap();
        one.set_var("pos", 1u32);
        let args = NodeArgs::new().var("pos", "pos").buffer("a", "a").buffer("b", "b");
        one.add_node(&rt, "mix", args).unwrap();
        let lo = one.leave_out(&rt, 2, 0, 1).unwrap();
        assert_eq!(lo.kernels.len(), 1);
        assert_eq!(lo.kernels[0].without_us, 0.0);
        assert_eq!(lo.in_step_us(&lo.kernels[0]), lo.whole_us);
    }

    #[test]
    fn unset_variables_and_unknown_buffers_are_errors() {
        let dev = Device::cpu(Default::default());
        let (_d, pkg) = testing::package_for(&dev, &[testing::mix()]).unwrap();
        let rt = Runtime::load_with(&dev, &pkg, Overrides::none()).unwrap();
        let mut g = DecodeGraph::new();
        g.add_buffer("a", dev.alloc(ScalarType::F32, 64).unwrap()).unwrap();
        assert!(g.add_buffer("a", dev.alloc(ScalarType::F32, 1).unwrap()).is_err());
        let e =
            g.add_node(&rt, "mix", NodeArgs::new().buffer("a", "a").buffer("b", "zz")).unwrap_err();
        assert!(e.to_string().contains("no buffer `zz` in the graph"), "{e}");
        g.add_buffer("b", dev.alloc(ScalarType::F32, 64).unwrap()).unwrap();
        let e = g.add_node(&rt, "mix", NodeArgs::new().buffer("pos", "a")).unwrap_err();
        assert!(e.to_string().contains("`pos` is not a buffer parameter"), "{e}");
        g.add_node(&rt, "mix", NodeArgs::new().buffer("a", "a").buffer("b", "b").var("pos", "pos"))
            .unwrap();
        let e = g.run(&rt).unwrap_err();
        assert!(e.to_string().contains("variable `pos` (for `pos`) has no value"), "{e}");
    }

    /// A node whose written buffer parameter overlaps another of its buffer parameters (the
    /// same name twice, or two names for one buffer) is refused when it is added, naming the
    /// node, the kernel and both parameters; nothing is added.
    #[test]
    fn aliased_nodes_are_refused_when_added() {
        let dev = Device::cpu(Default::default());
        let (_d, pkg) = testing::package_for(&dev, &[testing::mix()]).unwrap();
        let rt = Runtime::load_with(&dev, &pkg, Overrides::none()).unwrap();
        let mut g = DecodeGraph::new();
        let x = dev.alloc(ScalarType::F32, 64).unwrap();
        g.add_buffer("x", x.clone()).unwrap();
        g.add_buffer("also_x", x).unwrap();
        g.add_buffer("y", dev.alloc(ScalarType::F32, 64).unwrap()).unwrap();
        for other in ["x", "also_x"] {
            let args = NodeArgs::new().buffer("a", "x").buffer("b", other).scalar("pos", 1u32);
            let e = g.add_node(&rt, "mix", args).unwrap_err();
            assert!(matches!(e, RuntimeError::Launch(crate::LaunchError::Aliased { .. })), "{e}");
            let text = e.to_string();
            assert!(
                text.contains(
                    "node 0 (mix): `a` and `b` are bound to overlapping memory and `a` is written"
                ),
                "{text}"
            );
        }
        assert_eq!(g.nodes().count(), 0, "a refused node was added");
        g.add_node(
            &rt,
            "mix",
            NodeArgs::new().buffer("a", "x").buffer("b", "y").scalar("pos", 1u32),
        )
        .unwrap();
    }
}
