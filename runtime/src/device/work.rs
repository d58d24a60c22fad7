//! Work for a device: loaded code, checked launches, and captured graphs, and the helpers the
//! GPU devices share to pass a launch's arguments.

#[cfg(feature = "hip")]
use super::hip;
use super::{cuda, inflight, Backend, Device, DeviceError, Memory};
use crate::value::Scalar;
use std::sync::Arc;

impl Device {
    /// Launches `code` on the device's stream. Arguments are in ABI order, workspaces included.
    pub(crate) fn launch(&self, l: &PreparedLaunch) -> Result<(), DeviceError> {
        match (self.backend(), &l.code) {
            (Backend::Cpu(c), Code::Cpu(k)) => c.launch(k, l),
            (Backend::Cuda(c), Code::Cuda(f)) => c.launch(f, l),
            #[cfg(feature = "hip")]
            (Backend::Hip(h), Code::Hip(f)) => h.launch(f, l),
            _ => Err(self.foreign("code")),
        }
    }

    /// Captures the launches, in order, into a replayable graph.
    pub(crate) fn capture(&self, launches: &[PreparedLaunch]) -> Result<GraphExec, DeviceError> {
        match self.backend() {
            Backend::Cpu(_) => Ok(GraphExec::Cpu),
            Backend::Cuda(c) => Ok(GraphExec::Cuda(c.capture(launches)?)),
            #[cfg(feature = "hip")]
            Backend::Hip(h) => Ok(GraphExec::Hip(h.capture(launches)?)),
        }
    }

    /// Gives the nodes marked `changed` their new arguments, then, when `launch`, replays the
    /// graph. A rewrite without a launch leaves the launches already issued as they were (the
    /// driver's rule for an instantiated graph), so it may run while the device works.
    pub(crate) fn replay(
        &self,
        g: &GraphExec,
        launches: &[PreparedLaunch],
        changed: &[bool],
        launch: bool,
    ) -> Result<(), DeviceError> {
        match (self.backend(), g) {
            (Backend::Cpu(_), GraphExec::Cpu) => {
                // The node list is the graph: nothing to rewrite.
                if launch {
                    for l in launches {
                        self.launch(l)?;
                    }
                }
                Ok(())
            }
            (Backend::Cuda(c), GraphExec::Cuda(g)) => c.replay(g, launches, changed, launch),
            #[cfg(feature = "hip")]
            (Backend::Hip(h), GraphExec::Hip(g)) => h.replay(g, launches, changed, launch),
            _ => Err(self.foreign("graph")),
        }
    }
}

/// Loaded code, as the device runs it.
#[derive(Clone)]
pub(crate) enum Code {
    Cpu(Arc<kiln_ir::Kernel>),
    Cuda(Arc<cuda::Function>),
    #[cfg(feature = "hip")]
    Hip(Arc<hip::Function>),
}

/// One kernel argument, in ABI order.
#[derive(Clone)]
pub(crate) enum KernelArg {
    Buffer(Arc<Memory>),
    Scalar(Scalar),
}

/// A launch whose arguments were checked: ready to go to the device.
#[derive(Clone)]
pub(crate) struct PreparedLaunch {
    /// `kernel/variant`, for messages.
    pub label: Arc<str>,
    pub variant: Arc<str>,
    pub code: Code,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub args: Vec<KernelArg>,
    /// The object waits for the grids it depends on at entry (`ObjectEntry::grid_dependency`):
    /// a GPU device may let its launch overlap the previous kernel's tail.
    pub overlap: bool,
    /// The buffer parameters (indices) the object loads from before that wait
    /// (`kiln_ir::Kernel::reads_before_grid_wait`): the launch overlaps only where no grid
    /// that may still be running writes them ([`super::inflight`]).
    pub early: Arc<[usize]>,
    /// The buffer parameters (indices) the object may write, workspaces included.
    pub writes: Arc<[usize]>,
}

impl PreparedLaunch {
    /// The byte ranges of the buffer arguments at `params`, through `range`.
    pub fn ranges<'a>(
        &'a self,
        params: &'a [usize],
        range: impl Fn(&Memory) -> Option<inflight::Range> + 'a,
    ) -> impl Iterator<Item = inflight::Range> + 'a {
        params.iter().filter_map(move |&i| match self.args.get(i) {
            Some(KernelArg::Buffer(m)) => range(m),
            _ => None,
        })
    }
}

/// One value per parameter, in 8-byte slots, as the GPU devices pass them (through
/// [`slot_ptrs`]): device pointers and scalar bit patterns. `ptr` gives a buffer's device
/// pointer, or `None` for memory of another kind of device, which is refused as not `a {device}
/// buffer`.
pub(crate) fn param_slots(
    args: &[KernelArg],
    device: &str,
    ptr: impl Fn(&Memory) -> Option<u64>,
) -> Result<Vec<u64>, DeviceError> {
    args.iter()
        .map(|a| match a {
            KernelArg::Scalar(s) => Ok(s.bits()),
            KernelArg::Buffer(m) => ptr(m).ok_or_else(|| DeviceError::ForeignBuffer {
                expected: format!("a {device} buffer"),
                found: "a buffer of another kind of device".into(),
            }),
        })
        .collect()
}

/// One pointer per slot of [`param_slots`]: the `kernelParams` array of `cuLaunchKernel`,
/// `hipModuleLaunchKernel` and their graph kernel nodes.
pub(crate) fn slot_ptrs(slots: &mut [u64]) -> Vec<*mut std::ffi::c_void> {
    slots.iter_mut().map(|s| s as *mut u64 as *mut std::ffi::c_void).collect()
}

/// A launch of code loaded on another kind of device than the `device` it was issued to.
pub(crate) fn foreign_code(device: &str) -> DeviceError {
    DeviceError::ForeignBuffer {
        expected: format!("{device} code"),
        found: "code of another device".into(),
    }
}

/// Stream capture on the GPU devices: `step` issues one launch on the capturing stream and
/// returns the graph node it made. Stops at the first error and returns the nodes made so far
/// with that error, so the caller can still end the capture.
pub(crate) fn capture_nodes<N>(
    launches: &[PreparedLaunch],
    mut step: impl FnMut(&PreparedLaunch) -> Result<N, DeviceError>,
) -> (Vec<N>, Option<DeviceError>) {
    let mut nodes = Vec::with_capacity(launches.len());
    for l in launches {
        match step(l) {
            Ok(n) => nodes.push(n),
            Err(e) => return (nodes, Some(e)),
        }
    }
    (nodes, None)
}

/// A captured graph, as the device replays it.
pub(crate) enum GraphExec {
    Cpu,
    Cuda(cuda::CudaGraph),
    #[cfg(feature = "hip")]
    Hip(hip::HipGraph),
}
