//! The hip device (feature `hip`): safe owners over the HIP runtime.
//!
//! # How kiln maps onto HIP
//! - Layers: [`sys`] is hand-written raw FFI to libamdhip64, loaded at run time (the `hip-sys`
//!   crate builds against Debian's ROCm 5.2 with `HIP_PATH=/usr`, but links libamdhip64 at link
//!   time, so a binary built with it would not even start on a machine without ROCm); [`result`]
//!   is the thin `Result` layer; the types here own handles and free them in `Drop`.
//! - One device = one ordinal, made the thread's device (`hipSetDevice`) before every call, and
//!   one non-blocking stream; copies are issued on it and followed by a stream synchronize.
//! - Memory: `hipMalloc`, or pinned host memory mapped into the device's address space
//!   (`hipHostMalloc` with `hipHostMallocMapped`; kernels get its `hipHostGetDevicePointer`
//!   address), read and written through its host pointer after a stream synchronize, freed by
//!   `hipHostFree` (which synchronizes the device first).
//! - The arch is the HSA agent's name (`hsa_agent_get_info(HSA_AGENT_INFO_NAME)`, see [`hsa`])
//!   without its feature suffix, found by the device's PCI bus id: no `hipDeviceProp_t`, whose
//!   layout changes between ROCm versions. Objects are HSACO, loaded as they are
//!   (`hipModuleLoadData`): nothing is compiled.
//! - Errors in `Drop` are recorded on the device and returned by its next checked call.
//! - Graphs work as on CUDA: thread-local stream capture, the node of each launch from
//!   `hipStreamGetCaptureInfo_v2`, `hipGraphExecKernelNodeSetParams` for changed nodes, then
//!   `hipGraphLaunch`.

mod hsa;
mod result;
mod sys;

pub use result::HipError;

use super::{
    capture_nodes, foreign_code, slot_ptrs, Code, DeviceError, DeviceKind, DeviceLimits, KernelArg,
    Memory, PreparedLaunch,
};
use crate::package::PackageObject;
use std::sync::{Arc, Mutex};

/// The device ordinal and the errors recorded in `Drop`s.
pub(crate) struct Shared {
    ordinal: i32,
    deferred: Mutex<Vec<HipError>>,
}

impl Shared {
    fn bind(&self) -> Result<(), HipError> {
        if let Some(e) = self.deferred.lock().unwrap_or_else(|p| p.into_inner()).drain(..).next() {
            return Err(e);
        }
        result::set_device(self.ordinal)
    }

    fn defer(&self, r: Result<(), HipError>) {
        if let Err(e) = r {
            self.deferred.lock().unwrap_or_else(|p| p.into_inner()).push(e);
        }
    }

    /// Runs a release in `Drop`, recording its error.
    fn release(&self, f: impl FnOnce() -> Result<(), HipError>) {
        let r = result::set_device(self.ordinal).and_then(|()| f());
        self.defer(r);
    }
}

pub(crate) struct HipDevice {
    shared: Arc<Shared>,
    stream: sys::Handle,
    /// Held while issuing to the stream: a capture must see only its own launches, and work
    /// from several threads goes to the stream one call at a time.
    issue: Mutex<()>,
    name: String,
    pub arch: String,
    pub limits: DeviceLimits,
}

// SAFETY: the stream handle is used only after binding the device on the calling thread; HIP
// serializes work submitted to one stream from several threads.
unsafe impl Send for HipDevice {}
// SAFETY: as above.
unsafe impl Sync for HipDevice {}

fn unavailable(reason: String) -> DeviceError {
    DeviceError::Unavailable { kind: DeviceKind::Hip, reason }
}

impl HipDevice {
    pub fn open(ordinal: usize) -> Result<HipDevice, DeviceError> {
        result::init().map_err(|e| match e.code {
            Some(sys::hipErrorNoDevice | sys::hipErrorInvalidDevice) => {
                unavailable(format!("the HIP runtime is installed but finds no AMD GPU ({e})"))
            }
            _ => unavailable(e.to_string()),
        })?;
        let count = match result::device_count() {
            Ok(n) => n,
            Err(e) if e.code == Some(sys::hipErrorNoDevice) => 0,
            Err(e) => return Err(unavailable(e.to_string())),
        };
        if count == 0 {
            return Err(unavailable("the HIP runtime is installed but sees no AMD GPU".into()));
        }
        if ordinal as i32 >= count {
            return Err(unavailable(format!("asked for device {ordinal}, HIP sees {count}")));
        }
        let d = ordinal as i32;
        result::set_device(d)?;
        let arch = hsa::arch(&result::pci_bus_id(d)?)?;
        let target = kiln_ir::Target::by_name(&arch).ok();
        let warp = result::device_attribute(d, sys::hipDeviceAttributeWarpSize)? as u32;
        let limits = DeviceLimits {
            // The hardware runs every wave size the target table lists, whatever the default.
            wave_sizes: target.map(|t| t.wave_sizes.to_vec()).unwrap_or(vec![warp]),
            lds_per_workgroup: result::device_attribute(
                d,
                sys::hipDeviceAttributeMaxSharedMemoryPerBlock,
            )? as u64,
            max_vgprs: target.map(|t| t.max_vgpr_count()).unwrap_or(256),
            max_sgprs: target.map(|t| t.sgprs),
            max_agprs: target.map(|t| t.agprs),
            max_registers_per_workgroup: None,
            max_workgroup_lanes: result::device_attribute(
                d,
                sys::hipDeviceAttributeMaxThreadsPerBlock,
            )? as u32,
        };
        let name = format!("{} ({arch})", result::device_name(d)?);
        let stream = result::stream_create_non_blocking()?;
        let shared = Arc::new(Shared { ordinal: d, deferred: Mutex::new(vec![]) });
        Ok(HipDevice { shared, stream, issue: Mutex::new(()), name, arch, limits })
    }

    pub fn name(&self) -> String {
        self.name.clone()
    }

    pub fn synchronize(&self) -> Result<(), DeviceError> {
        self.shared.bind()?;
        let _issue = self.issue.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: the stream lives as long as `self`.
        unsafe { result::stream_synchronize(self.stream)? };
        Ok(())
    }

    pub fn alloc_zeroed(&self, bytes: usize) -> Result<DeviceMemory, DeviceError> {
        self.shared.bind()?;
        let _issue = self.issue.lock().unwrap_or_else(|p| p.into_inner());
        let ptr = result::malloc(bytes.max(1))?;
        let m = DeviceMemory { shared: self.shared.clone(), ptr, bytes, host: None };
        // SAFETY: `ptr` holds `bytes` bytes; the stream is live.
        unsafe { result::memset_async(ptr, 0, bytes, self.stream)? };
        Ok(m)
    }

    /// Pinned host memory mapped into the device's address space, zeroed.
    pub fn alloc_host_mapped(&self, bytes: usize) -> Result<DeviceMemory, DeviceError> {
        self.shared.bind()?;
        let _issue = self.issue.lock().unwrap_or_else(|p| p.into_inner());
        let host = result::host_malloc_mapped(bytes.max(1))?;
        // Owned from here, so an error below frees it.
        let mut m = DeviceMemory {
            shared: self.shared.clone(),
            ptr: std::ptr::null_mut(),
            bytes,
            host: Some(host),
        };
        // SAFETY: `host` holds at least `bytes` bytes, just allocated: no device work can touch it.
        unsafe { std::ptr::write_bytes(host as *mut u8, 0, bytes) };
        // SAFETY: `host` came from hipHostMalloc with the mapped flag and is live.
        m.ptr = unsafe { result::host_get_device_pointer(host)? };
        Ok(m)
    }

    pub fn write(&self, m: &DeviceMemory, data: &[u8]) -> Result<(), DeviceError> {
        self.shared.bind()?;
        let _issue = self.issue.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(host) = m.host {
            // SAFETY: after the synchronize no issued work touches the memory; it holds
            // `data.len()` bytes and does not overlap `data` (a pinned allocation of its own).
            unsafe {
                result::stream_synchronize(self.stream)?;
                std::ptr::copy_nonoverlapping(data.as_ptr(), host as *mut u8, data.len());
            }
            return Ok(());
        }
        // SAFETY: `m` holds `data.len()` bytes; the synchronize keeps `data` alive for the copy.
        unsafe {
            result::memcpy_htod_async(m.ptr, data, self.stream)?;
            result::stream_synchronize(self.stream)?;
        }
        Ok(())
    }

    pub fn read(&self, m: &DeviceMemory) -> Result<Vec<u8>, DeviceError> {
        self.shared.bind()?;
        let _issue = self.issue.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = vec![0u8; m.bytes];
        if let Some(host) = m.host {
            // SAFETY: after the synchronize no issued work writes the memory; it holds
            // `out.len()` bytes.
            unsafe {
                result::stream_synchronize(self.stream)?;
                std::ptr::copy_nonoverlapping(host as *const u8, out.as_mut_ptr(), out.len());
            }
            return Ok(out);
        }
        // SAFETY: `m` holds `out.len()` bytes; the synchronize ends the copy before `out` is used.
        unsafe {
            result::memcpy_dtoh_async(&mut out, m.ptr, self.stream)?;
            result::stream_synchronize(self.stream)?;
        }
        Ok(out)
    }

    pub fn load(&self, obj: &PackageObject) -> Result<Function, DeviceError> {
        self.shared.bind()?;
        let _issue = self.issue.lock().unwrap_or_else(|p| p.into_inner());
        let raw = result::module_load_data(obj.bytes())?;
        let module = Arc::new(Module { shared: self.shared.clone(), raw });
        // SAFETY: the module is live (held by `module`).
        let func = unsafe { result::module_get_function(raw, &obj.entry.symbol)? };
        // SAFETY: `func` belongs to the live module.
        let max_lanes =
            unsafe { result::func_attribute(func, sys::HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)? };
        let lanes: u32 = obj.entry.workgroup_size.iter().product();
        if (max_lanes as u32) < lanes {
            return Err(HipError {
                call: "hipFuncGetAttribute",
                code: None,
                message: format!(
                    "the function allows {max_lanes} lanes per workgroup, the object uses {lanes}"
                ),
            }
            .into());
        }
        Ok(Function { _module: module, raw: func })
    }

    pub fn launch(&self, f: &Function, l: &PreparedLaunch) -> Result<(), DeviceError> {
        self.shared.bind()?;
        let _issue = self.issue.lock().unwrap_or_else(|p| p.into_inner());
        self.launch_locked(f, l)
    }

    /// Issues a launch; the caller holds `issue` and has bound the device.
    fn launch_locked(&self, f: &Function, l: &PreparedLaunch) -> Result<(), DeviceError> {
        let mut slots = param_slots(&l.args)?;
        let mut ptrs = slot_ptrs(&mut slots);
        // SAFETY: one pointer per parameter to an 8-byte slot holding the value in its low bytes
        // (little-endian); buffers are live allocations of this device.
        unsafe { result::launch_kernel(f.raw, l.grid, l.block, self.stream, &mut ptrs)? };
        Ok(())
    }

    pub fn record_event(&self) -> Result<Event, DeviceError> {
        self.shared.bind()?;
        let _issue = self.issue.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: the stream is live.
        let raw = unsafe { result::event_create_record(self.stream)? };
        Ok(Event { shared: self.shared.clone(), raw })
    }

    pub fn capture(&self, launches: &[PreparedLaunch]) -> Result<HipGraph, DeviceError> {
        self.shared.bind()?;
        let _issue = self.issue.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: a created stream.
        unsafe { result::stream_begin_capture(self.stream)? };
        let (nodes, failed) = capture_nodes(launches, |l| match &l.code {
            Code::Hip(f) => self.launch_locked(f, l).and_then(|()| {
                // SAFETY: capturing on this thread.
                Ok(unsafe { result::stream_capture_last_node(self.stream)? })
            }),
            _ => Err(foreign_code("hip")),
        });
        // SAFETY: begun on this thread; always ended so the stream stays usable.
        let graph = unsafe { result::stream_end_capture(self.stream) };
        if let Some(e) = failed {
            if let Ok(g) = graph {
                if !g.is_null() {
                    // SAFETY: the partial graph is ours and unused.
                    self.shared.defer(unsafe { result::graph_destroy(std::ptr::null_mut(), g) });
                }
            }
            return Err(e);
        }
        let graph = graph?;
        // SAFETY: the graph just captured.
        let exec = match unsafe { result::graph_instantiate(graph) } {
            Ok(e) => e,
            Err(e) => {
                // SAFETY: not instantiated; nothing else refers to it.
                self.shared.defer(unsafe { result::graph_destroy(std::ptr::null_mut(), graph) });
                return Err(e.into());
            }
        };
        Ok(HipGraph { shared: self.shared.clone(), graph, exec, nodes })
    }

    pub fn replay(
        &self,
        g: &HipGraph,
        launches: &[PreparedLaunch],
        changed: &[bool],
        launch: bool,
    ) -> Result<(), DeviceError> {
        self.shared.bind()?;
        let _issue = self.issue.lock().unwrap_or_else(|p| p.into_inner());
        for ((l, &node), _) in launches.iter().zip(&g.nodes).zip(changed).filter(|(_, &c)| c) {
            let Code::Hip(f) = &l.code else {
                return Err(foreign_code("hip"));
            };
            let mut slots = param_slots(&l.args)?;
            let mut ptrs = slot_ptrs(&mut slots);
            let dim = |d: [u32; 3]| sys::dim3 { x: d[0], y: d[1], z: d[2] };
            let p = sys::hipKernelNodeParams {
                blockDim: dim(l.block),
                extra: std::ptr::null_mut(),
                func: f.raw,
                gridDim: dim(l.grid),
                kernelParams: ptrs.as_mut_ptr(),
                sharedMemBytes: 0,
            };
            // SAFETY: `node` is this launch's kernel node in the graph `exec` came from; `ptrs`
            // holds one pointer per parameter, alive for the call.
            unsafe { result::graph_exec_kernel_node_set_params(g.exec, node, &p)? };
        }
        if !launch {
            return Ok(());
        }
        // SAFETY: exec and stream are live.
        unsafe { result::graph_launch(g.exec, self.stream)? };
        Ok(())
    }
}

impl Drop for HipDevice {
    fn drop(&mut self) {
        let s = self.stream;
        // SAFETY: the stream is ours; nothing is issued on it after this.
        self.shared.release(|| unsafe {
            result::stream_synchronize(s)?;
            result::stream_destroy(s)
        });
    }
}

/// The launch arguments in 8-byte slots ([`super::param_slots`]); buffers must be hip memory.
fn param_slots(args: &[KernelArg]) -> Result<Vec<u64>, DeviceError> {
    super::param_slots(args, "hip", |m| match m {
        Memory::Hip(m) => Some(m.ptr as u64),
        _ => None,
    })
}

/// Device memory (`hipMalloc`) or mapped pinned host memory (`hipHostMalloc`), freed in `Drop`.
pub(crate) struct DeviceMemory {
    shared: Arc<Shared>,
    /// The device address (for mapped host memory, its device pointer).
    ptr: sys::Handle,
    bytes: usize,
    /// Mapped host memory: its host pointer. `None`: device memory.
    host: Option<sys::Handle>,
}

impl DeviceMemory {
    pub fn device_address(&self) -> u64 {
        self.ptr as u64
    }
}

// SAFETY: a device pointer is plain data usable from any thread with the device bound.
unsafe impl Send for DeviceMemory {}
// SAFETY: as above.
unsafe impl Sync for DeviceMemory {}

impl Drop for DeviceMemory {
    fn drop(&mut self) {
        let (p, host) = (self.ptr, self.host);
        self.shared.release(|| match host {
            // SAFETY: from hipHostMalloc; this is its only owner. hipHostFree synchronizes the
            // device first, so no kernel still reaches it through an address in a table.
            Some(h) => unsafe { result::host_free(h) },
            // SAFETY: from hipMalloc; this is its only owner.
            None => unsafe { result::free(p) },
        });
    }
}

/// A loaded module, unloaded in `Drop`.
pub(crate) struct Module {
    shared: Arc<Shared>,
    raw: sys::Handle,
}

// SAFETY: module handles are process-wide and used with the device bound.
unsafe impl Send for Module {}
// SAFETY: as above.
unsafe impl Sync for Module {}

impl Drop for Module {
    fn drop(&mut self) {
        let m = self.raw;
        // SAFETY: every Function holds an Arc to its module, so none is left.
        self.shared.release(|| unsafe { result::module_unload(m) });
    }
}

/// A kernel of a loaded module.
pub(crate) struct Function {
    /// Keeps the module loaded while the function may run.
    _module: Arc<Module>,
    raw: sys::Handle,
}

// SAFETY: function handles are process-wide and used with the device bound.
unsafe impl Send for Function {}
// SAFETY: as above.
unsafe impl Sync for Function {}

/// A timing event, destroyed in `Drop`.
pub(crate) struct Event {
    shared: Arc<Shared>,
    raw: sys::Handle,
}

// SAFETY: event handles are process-wide and used with the device bound.
unsafe impl Send for Event {}
// SAFETY: as above.
unsafe impl Sync for Event {}

impl Event {
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32, DeviceError> {
        self.shared.bind()?;
        // SAFETY: both events are live and recorded.
        Ok(unsafe { result::event_elapsed_ms(self.raw, end.raw)? })
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        let e = self.raw;
        // SAFETY: the event is ours.
        self.shared.release(|| unsafe { result::event_destroy(e) });
    }
}

/// A captured, instantiated graph and the node of each captured launch.
pub(crate) struct HipGraph {
    shared: Arc<Shared>,
    graph: sys::Handle,
    exec: sys::Handle,
    nodes: Vec<sys::Handle>,
}

// SAFETY: graph handles are used with the device bound, one replay at a time.
unsafe impl Send for HipGraph {}
// SAFETY: as above.
unsafe impl Sync for HipGraph {}

impl Drop for HipGraph {
    fn drop(&mut self) {
        let (e, g) = (self.exec, self.graph);
        // SAFETY: both are ours.
        self.shared.release(|| unsafe { result::graph_destroy(e, g) });
    }
}
