//! Launch-cost measurements, for `kiln bench` on a GPU: the cost of one eager launch and of one
//! node of a replayed graph, in microseconds, timed with device events (`cuEventRecord` /
//! `cuEventElapsedTime` on cuda; the host clock on the cpu device).
//!
//! [`trivial_package`] gives a kernel that does almost nothing (lane 0 stores a scalar), so what
//! is measured is the launch path itself; [`eager_us_per_launch`] and [`graph_us_per_node`] time
//! any kernel or graph of a loaded package.

use super::{built_in_package, median_us_per_unit};
use kiln_ir::package::ObjectFormat;
use kiln_ir::{Access, KernelBuilder, ScalarType, ShapeExpr};
use kiln_runtime::{
    Args, DecodeGraph, Device, DeviceError, DeviceKind, NodeArgs, Package, Runtime, RuntimeError,
    Scalar,
};

/// The trivial kernel's name.
pub const TRIVIAL: &str = "kiln_touch";

pub const TRIVIAL_PTX: &str = r#"
.version 7.8
.target {target}
.address_size 64
.visible .entry kiln_touch(.param .u64 p_out, .param .u32 p_v)
{
    .reg .pred %p<2>;
    .reg .b32 %r<3>;
    .reg .b64 %rd<3>;
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra DONE;
    ld.param.u64 %rd1, [p_out];
    ld.param.u32 %r2, [p_v];
    cvta.to.global.u64 %rd2, %rd1;
    st.global.u32 [%rd2], %r2;
DONE:
    ret;
}
"#;

/// The trivial kernel's IR (the ABI of [`TRIVIAL_PTX`]).
pub(crate) fn trivial_ir() -> kiln_ir::Kernel {
    let mut b = KernelBuilder::new(TRIVIAL, 32);
    let out = b.buffer_with_len("out", ScalarType::U32, Access::Write, ShapeExpr::constant(1));
    let v = b.scalar_param("v", ScalarType::U32);
    let lane = b.local_id();
    let zero = b.u32(0);
    let first = b.eq(lane, zero);
    b.if_then(first, |b| {
        let x = b.arg(v);
        b.store(out, zero, x);
    });
    b.finish()
}

/// A package holding [`TRIVIAL`] (`out[0] = v` by lane 0 of one 32-lane workgroup) for the
/// device: PTX for its arch on cuda, the IR on the cpu device. HIP has no built-in trivial
/// kernel (an HSACO needs LLVM): time a kernel of a built package there.
pub fn trivial_package(device: &Device) -> Result<Package, RuntimeError> {
    let ir = trivial_ir();
    let (arch, format, bytes) = match device.kind() {
        DeviceKind::Cpu => (
            "gfx1100".to_string(),
            ObjectFormat::Hsaco,
            kiln_runtime::package::cpu_only_hsaco("gfx1100", TRIVIAL),
        ),
        DeviceKind::Cuda => {
            let arch = device.arch().unwrap_or_default();
            let ptx = TRIVIAL_PTX.replace("{target}", &arch);
            (arch, ObjectFormat::Ptx, ptx.into_bytes())
        }
        DeviceKind::Hip => {
            return Err(DeviceError::Unavailable {
                kind: DeviceKind::Hip,
                reason: "no built-in trivial kernel for hip (an HSACO needs LLVM); time a kernel \
                         of a built package with eager_us_per_launch / graph_us_per_node"
                    .into(),
            }
            .into())
        }
    };
    built_in_package(&ir, &arch, format, bytes)
}

/// Times `launches` eager launches of `kernel` between two device events; the median over
/// `samples` runs, in microseconds per launch (after one warm-up launch).
pub fn eager_us_per_launch(
    rt: &Runtime,
    kernel: &str,
    args: &Args<'_>,
    launches: usize,
    samples: usize,
) -> Result<f64, RuntimeError> {
    let launches = launches.max(1);
    rt.launch(kernel, args)?;
    rt.synchronize()?;
    median_us_per_unit(rt, samples, launches, || {
        for _ in 0..launches {
            rt.launch(kernel, args)?;
        }
        Ok(())
    })
}

/// Like [`eager_us_per_launch`], but routes and checks the call once and then only issues it:
/// the device layer's own cost per launch (driver included), without the runtime's checks.
pub fn prepared_us_per_launch(
    rt: &Runtime,
    kernel: &str,
    args: &Args<'_>,
    launches: usize,
    samples: usize,
) -> Result<f64, RuntimeError> {
    let launches = launches.max(1);
    let p = rt.prepare_call(kernel, args)?;
    p.issue()?;
    rt.synchronize()?;
    median_us_per_unit(rt, samples, launches, || {
        for _ in 0..launches {
            p.issue()?;
        }
        Ok(())
    })
}

/// Captures `graph`, replays it once to warm up, then times `replays` replays between two
/// device events; the median over `samples` runs, in microseconds per node. With `update`, the
/// variable it names is set to a new value before every replay (`update.1(i)` for replay `i`),
/// so the per-node cost includes rewriting the scalar arguments of the captured nodes.
pub fn graph_us_per_node(
    rt: &Runtime,
    graph: &DecodeGraph,
    replays: usize,
    samples: usize,
    update: Option<(&str, &dyn Fn(usize) -> Scalar)>,
) -> Result<f64, RuntimeError> {
    let replays = replays.max(1);
    let mut cap = graph.capture(rt)?;
    cap.replay()?;
    rt.synchronize()?;
    let nodes = cap.len().max(1);
    let mut i = 0;
    median_us_per_unit(rt, samples, replays * nodes, || {
        for _ in 0..replays {
            if let Some((var, f)) = update {
                cap.set_var(var, f(i))?;
                i += 1;
            }
            cap.replay()?;
        }
        Ok(())
    })
}

/// The launch costs of the trivial kernel on a device.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchCost {
    /// The device.
    pub device: String,
    /// Nodes per graph (and launches per eager sample).
    pub nodes: usize,
    /// Replays per sample.
    pub replays: usize,
    /// One eager launch, us.
    pub eager_us_per_node: f64,
    /// One eager launch of a call routed and checked once beforehand, us: the part of
    /// `eager_us_per_node` that is the driver's and the device layer's.
    pub prepared_us_per_node: f64,
    /// One node of a replayed graph with the same arguments, us.
    pub graph_us_per_node: f64,
    /// One node of a replayed graph whose scalar argument changes every replay, us.
    pub graph_update_us_per_node: f64,
}

/// Measures [`LaunchCost`] with the trivial kernel: `nodes` eager launches against a graph of
/// `nodes` trivial nodes replayed `replays` times (median of 5 samples each).
pub fn launch_cost(
    device: &Device,
    nodes: usize,
    replays: usize,
) -> Result<LaunchCost, RuntimeError> {
    let pkg = trivial_package(device)?;
    let rt = Runtime::load_with(device, &pkg, kiln_runtime::Overrides::none())?;
    let out = device.alloc(ScalarType::U32, 1)?;
    let args = Args::new().buffer("out", &out).scalar("v", 1u32);
    let eager = eager_us_per_launch(&rt, TRIVIAL, &args, nodes, 5)?;
    let prepared = prepared_us_per_launch(&rt, TRIVIAL, &args, nodes, 5)?;
    let mut g = DecodeGraph::new();
    g.add_buffer("out", out.clone())?;
    g.set_var("v", 1u32);
    for _ in 0..nodes.max(1) {
        g.add_node(&rt, TRIVIAL, NodeArgs::new().buffer("out", "out").var("v", "v"))?;
    }
    let fixed = graph_us_per_node(&rt, &g, replays, 5, None)?;
    let next = |i: usize| Scalar::from(i as u32 + 2);
    let updated = graph_us_per_node(&rt, &g, replays, 5, Some(("v", &next)))?;
    Ok(LaunchCost {
        device: device.name(),
        nodes: nodes.max(1),
        replays: replays.max(1),
        eager_us_per_node: eager,
        prepared_us_per_node: prepared,
        graph_us_per_node: fixed,
        graph_update_us_per_node: updated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_runtime::CpuOptions;

    /// Every figure is a positive time, and a replay with a scalar update writes the new value
    /// (the updates reach the device).
    fn measures_launch_cost(dev: &Device) {
        let c = launch_cost(dev, 8, 4).unwrap();
        for v in [
            c.eager_us_per_node,
            c.prepared_us_per_node,
            c.graph_us_per_node,
            c.graph_update_us_per_node,
        ] {
            assert!(v.is_finite() && v > 0.0, "{c:?}");
        }
        let pkg = trivial_package(dev).unwrap();
        let rt = Runtime::load_with(dev, &pkg, kiln_runtime::Overrides::none()).unwrap();
        let out = dev.alloc(ScalarType::U32, 1).unwrap();
        let mut g = DecodeGraph::new();
        g.add_buffer("out", out.clone()).unwrap();
        g.set_var("v", 3u32);
        g.add_node(&rt, TRIVIAL, NodeArgs::new().buffer("out", "out").var("v", "v")).unwrap();
        let mut cap = g.capture(&rt).unwrap();
        let x = 0x9e37_79b9u32 ^ std::process::id();
        cap.set_var("v", x).unwrap();
        cap.replay().unwrap();
        assert_eq!(out.read::<u32>().unwrap(), vec![x]);
    }

    #[test]
    fn measures_launch_cost_on_cpu() {
        measures_launch_cost(&Device::cpu(CpuOptions::default()));
    }

    #[test]
    #[ignore = "needs a CUDA GPU: cargo test -p kiln -- --ignored"]
    fn measures_launch_cost_on_cuda() {
        measures_launch_cost(&Device::cuda(0).expect("a CUDA device"));
    }
}
