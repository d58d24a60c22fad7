//! The cuda device: safe owners over the CUDA driver API.
//!
//! # How kiln maps onto the driver API
//! - Layers: `cudarc::driver::sys` is the raw FFI (libcuda is loaded at run time, so nothing
//!   links against it and the binary starts on machines without it); [`result`] is the thin
//!   `Result` layer; the types here own handles and free them in `Drop`.
//! - One device = the primary context of one GPU (`cuDevicePrimaryCtxRetain`), made current on
//!   the calling thread before every call, and one non-blocking stream. Every copy is issued on
//!   that stream and followed by a stream synchronize, so copies and launches keep issue order
//!   without touching the legacy default stream (which would break a capture on another thread).
//! - Memory: `cuMemAlloc`, or pinned host memory mapped into the device's address space
//!   (`cuMemHostAlloc` with `CU_MEMHOSTALLOC_DEVICEMAP`; kernels get its
//!   `cuMemHostGetDevicePointer` address; every context maps host memory since CUDA 3.2, so
//!   `CU_CTX_MAP_HOST` is not needed). Mapped memory is read and written through its host pointer
//!   after a stream synchronize, and freed after a context synchronize: a kernel may reach it
//!   through an address in a table.
//! - The arch is `sm_<major><minor>` from the compute capability. Objects are PTX; the driver
//!   JIT-compiles them (`cuModuleLoadDataEx`, with ptxas's log on failure).
//! - Errors in `Drop` (a failed `cuMemFree`, ...) are recorded on the context and returned by the
//!   next checked call on any object of that context.
//! - Graphs: a stream capture in thread-local mode; after each captured launch the capture's
//!   dependency set (`cuStreamGetCaptureInfo`) is exactly the new kernel node, which gives the
//!   node handle of each launch. A replay rewrites the parameters of the nodes whose arguments
//!   changed (`cuGraphExecKernelNodeSetParams`), then `cuGraphLaunch`es.
//! - Overlap (sm_90): an object that waits for its grid dependency is launched with
//!   programmatic stream serialization (`cuLaunchKernelEx`) unless one of the buffers it reads
//!   before that wait may still be written by work in flight on the stream ([`InFlight`],
//!   guarded by the issue lock); a graph's nodes are decided among themselves at capture.
//! - L2 (sm_80+): the device's window ([`super::L2Window`]) goes with every launch as
//!   `CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW` (a captured node keeps it), its persisting part
//!   set aside with `CU_LIMIT_PERSISTING_L2_CACHE_SIZE`. A group of buffers
//!   ([`CudaDevice::alloc_group`]) is one `cuMemAlloc` cut into disjoint parts.

mod result;

pub use result::CudaError;

use super::inflight::{InFlight, Range};
use super::{
    capture_nodes, foreign_code, slot_ptrs, DeviceError, DeviceKind, DeviceLimits, KernelArg,
    L2Access, L2Applied, L2Window, Memory, PreparedLaunch,
};
use crate::package::PackageObject;
use cudarc::driver::sys;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

const _: () = assert!(cfg!(target_endian = "little"), "kernel parameters are stored little-endian");

/// Where the buffers of a group start ([`CudaDevice::alloc_group`]): `cuMemAlloc`'s own
/// alignment, so a part is aligned as an allocation of its own would be.
pub(crate) const GROUP_ALIGN: usize = 256;

/// The primary context of one device, and the errors recorded in `Drop`s.
pub(crate) struct Context {
    dev: sys::CUdevice,
    raw: sys::CUcontext,
    deferred: Mutex<Vec<CudaError>>,
}

// SAFETY: a CUcontext is a driver handle usable from any thread once made current there, which
// `bind` does before every use; the deferred list is behind a mutex.
unsafe impl Send for Context {}
// SAFETY: as above; the raw handle is only read, and the rest is behind a mutex.
unsafe impl Sync for Context {}

impl Context {
    /// Makes the context current; first reports any error recorded in a `Drop` since the last
    /// checked call.
    fn bind(&self) -> Result<(), CudaError> {
        if let Some(e) = self.deferred.lock().unwrap_or_else(|p| p.into_inner()).drain(..).next() {
            return Err(e);
        }
        self.bind_quiet()
    }

    /// Makes the context current without reporting recorded errors (for `Drop`).
    fn bind_quiet(&self) -> Result<(), CudaError> {
        // SAFETY: `raw` is retained until `self` drops.
        unsafe { result::ctx_set_current(self.raw) }
    }

    fn defer(&self, r: Result<(), CudaError>) {
        if let Err(e) = r {
            self.deferred.lock().unwrap_or_else(|p| p.into_inner()).push(e);
        }
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // Nothing is left to report a failure to: the last owner is gone.
        // SAFETY: balances the retain in `CudaDevice::open`.
        let _ = unsafe { result::primary_ctx_release(self.dev) };
    }
}

pub(crate) struct CudaDevice {
    ctx: Arc<Context>,
    stream: sys::CUstream,
    /// Held while issuing to the stream: a capture must see only its own launches, and work
    /// from several threads goes to the stream one call at a time. It guards what the stream
    /// may still be writing ([`InFlight`]), which decides whether a launch may overlap.
    issue: Mutex<InFlight>,
    name: String,
    pub arch: String,
    pub limits: DeviceLimits,
    /// Launch objects that wait for their dependencies at entry with programmatic stream
    /// serialization (sm_90+: the next kernel's launch overlaps this one's tail). On unless
    /// `KILN_OVERLAP=0`, for comparing.
    overlap: bool,
    /// The L2 window every launch carries ([`super::L2Window`]), with the device's largest
    /// window and persisting part (bytes; 0 where it has none).
    l2: Mutex<Option<L2Window>>,
    max_l2_window: u64,
    max_l2_persisting: u64,
}

// SAFETY: the stream handle is used only with the context bound; the driver serializes work
// submitted to one stream from several threads.
unsafe impl Send for CudaDevice {}
// SAFETY: as above.
unsafe impl Sync for CudaDevice {}

fn unavailable(e: CudaError) -> DeviceError {
    DeviceError::Unavailable { kind: DeviceKind::Cuda, reason: e.to_string() }
}

impl CudaDevice {
    pub fn open(ordinal: usize) -> Result<CudaDevice, DeviceError> {
        result::init().map_err(unavailable)?;
        let count = result::device_count().map_err(unavailable)?;
        if ordinal as i32 >= count {
            return Err(DeviceError::Unavailable {
                kind: DeviceKind::Cuda,
                reason: format!("asked for device {ordinal}, the driver sees {count}"),
            });
        }
        let dev = result::device_get(ordinal as i32)?;
        use sys::CUdevice_attribute as A;
        let attr = |a| result::device_attribute(dev, a);
        let (major, minor) = (
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        );
        let arch = format!("sm_{major}{minor}");
        let max_vgprs = kiln_ir::Target::by_name(&arch).map(|t| t.max_vgprs).unwrap_or(255);
        let limits = DeviceLimits {
            wave_sizes: vec![attr(A::CU_DEVICE_ATTRIBUTE_WARP_SIZE)? as u32],
            lds_per_workgroup: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)? as u64,
            max_vgprs,
            max_sgprs: None,
            max_agprs: None,
            max_registers_per_workgroup: Some(
                attr(A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)? as u64,
            ),
            max_workgroup_lanes: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)? as u32,
        };
        let version = result::driver_version()?;
        let name = format!(
            "{} ({arch}, driver {}.{})",
            result::device_name(dev)?,
            version / 1000,
            version % 1000 / 10
        );
        let raw = result::primary_ctx_retain(dev)?;
        let ctx = Arc::new(Context { dev, raw, deferred: Mutex::new(vec![]) });
        ctx.bind()?;
        // SAFETY: the context is current; 1 = CU_STREAM_NON_BLOCKING.
        let stream = unsafe { result::stream_create(1)? };
        let overlap = std::env::var("KILN_OVERLAP").map_or(true, |v| v != "0");
        let max_l2_window =
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE)?.max(0) as u64;
        let max_l2_persisting =
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE)?.max(0) as u64;
        Ok(CudaDevice {
            ctx,
            stream,
            issue: Mutex::new(InFlight::default()),
            name,
            arch,
            limits,
            overlap,
            l2: Mutex::new(None),
            max_l2_window,
            max_l2_persisting,
        })
    }

    /// See [`super::Device::set_l2_window`]: the window cut to the device's largest, and the
    /// persisting part set aside (as much as the window's persisting share, up to the device's
    /// most) or given back.
    pub fn set_l2_window(&self, w: Option<L2Window>) -> Result<L2Applied, DeviceError> {
        if self.max_l2_window == 0 {
            return Ok(L2Applied::Ignored);
        }
        self.ctx.bind()?;
        let _issue = self.issue.lock().unwrap_or_else(|p| p.into_inner());
        let mut l2 = self.l2.lock().unwrap_or_else(|p| p.into_inner());
        let Some(mut w) = w else {
            if l2.take().is_some() {
                // SAFETY: the context is current.
                unsafe {
                    result::ctx_set_limit(sys::CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0)?;
                    result::ctx_reset_persisting_l2()?;
                }
            }
            return Ok(L2Applied::Cleared);
        };
        w.bytes = w.bytes.min(self.max_l2_window);
        // The persisting share, lowered to what the set-aside part holds (more would make the
        // persisting lines evict each other).
        let persisting = |w: &L2Window| {
            let r = f64::from(w.hit_ratio);
            let share = |a: L2Access, r: f64| if a == L2Access::Persisting { r } else { 0.0 };
            w.bytes as f64 * (share(w.hit, r) + share(w.miss, 1.0 - r))
        };
        if w.hit == L2Access::Persisting && persisting(&w) > self.max_l2_persisting as f64 {
            let most = self.max_l2_persisting as f64 / w.bytes as f64;
            w.hit_ratio = w.hit_ratio.min(most as f32);
        }
        let set_aside = (persisting(&w).ceil() as u64).min(self.max_l2_persisting);
        // SAFETY: the context is current.
        unsafe {
            result::ctx_set_limit(
                sys::CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE,
                set_aside as usize,
            )?
        };
        *l2 = Some(w);
        Ok(L2Applied::Applied { window: w, max_window: self.max_l2_window, set_aside })
    }

    pub fn name(&self) -> String {
        self.name.clone()
    }

    pub fn synchronize(&self) -> Result<(), DeviceError> {
        self.ctx.bind()?;
        let mut issue = self.issue.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: the stream lives as long as `self`.
        unsafe { result::stream_synchronize(self.stream)? };
        issue.finished();
        Ok(())
    }

    pub fn alloc_zeroed(&self, bytes: usize) -> Result<DeviceMemory, DeviceError> {
        self.ctx.bind()?;
        let mut issue = self.issue.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: the context is current; a zero-byte buffer still gets a distinct allocation.
        let ptr = unsafe { result::mem_alloc(bytes.max(1))? };
        let m = DeviceMemory { ctx: self.ctx.clone(), ptr, bytes, host: None, part_of: None };
        // SAFETY: `ptr` holds `bytes` bytes; the stream lives as long as `self`.
        unsafe { result::memset_d8_async(ptr, 0, bytes, self.stream)? };
        issue.wrote((ptr, bytes as u64));
        Ok(m)
    }

    /// Buffers of `sizes` bytes side by side in one zeroed allocation, each at a multiple of
    /// [`GROUP_ALIGN`] bytes: one address range holding them and nothing else (for an L2
    /// window). Each is a buffer of its own (disjoint from the others); the allocation is freed
    /// when the last of them drops.
    pub fn alloc_group(&self, sizes: &[usize]) -> Result<Vec<DeviceMemory>, DeviceError> {
        let mut offsets = Vec::with_capacity(sizes.len());
        let mut total = 0usize;
        for &b in sizes {
            offsets.push(total);
            total = total.checked_add(b.max(1).next_multiple_of(GROUP_ALIGN)).ok_or_else(|| {
                DeviceError::Unavailable {
                    kind: DeviceKind::Cuda,
                    reason: "a group of buffers larger than the address space".into(),
                }
            })?;
        }
        let whole = Arc::new(self.alloc_zeroed(total)?);
        Ok(sizes
            .iter()
            .zip(offsets)
            .map(|(&bytes, off)| DeviceMemory {
                ctx: self.ctx.clone(),
                ptr: whole.ptr + off as u64,
                bytes,
                host: None,
                part_of: Some(whole.clone()),
            })
            .collect())
    }

    /// Pinned host memory mapped into the device's address space, zeroed.
    pub fn alloc_host_mapped(&self, bytes: usize) -> Result<DeviceMemory, DeviceError> {
        self.ctx.bind()?;
        let _issue = self.issue.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: the context is current; a zero-byte buffer still gets a distinct allocation.
        let host = unsafe {
            result::mem_host_alloc(bytes.max(1), cudarc::driver::sys::CU_MEMHOSTALLOC_DEVICEMAP)?
        };
        // Owned from here, so an error below frees it.
        let mut m = DeviceMemory {
            ctx: self.ctx.clone(),
            ptr: 0,
            bytes,
            host: Some(MappedHost(host)),
            part_of: None,
        };
        // SAFETY: `host` holds at least `bytes` bytes, just allocated: no device work can touch it.
        unsafe { std::ptr::write_bytes(host as *mut u8, 0, bytes) };
        // SAFETY: the context is current; `host` was allocated with DEVICEMAP and is live.
        m.ptr = unsafe { result::mem_host_get_device_pointer(host)? };
        Ok(m)
    }

    pub fn write(&self, m: &DeviceMemory, data: &[u8]) -> Result<(), DeviceError> {
        self.ctx.bind()?;
        let mut issue = self.issue.lock().unwrap_or_else(|p| p.into_inner());
        debug_assert_eq!(data.len(), m.bytes);
        if let Some(host) = &m.host {
            // SAFETY: after the synchronize no issued work touches the memory; it holds
            // `data.len()` bytes and does not overlap `data` (a fresh pinned allocation).
            unsafe {
                result::stream_synchronize(self.stream)?;
                std::ptr::copy_nonoverlapping(data.as_ptr(), host.0 as *mut u8, data.len());
            }
            issue.finished();
            return Ok(());
        }
        // SAFETY: `m` holds `data.len()` bytes; the synchronize below keeps `data` alive for the
        // whole copy.
        unsafe {
            result::memcpy_htod_async(m.ptr, data, self.stream)?;
            result::stream_synchronize(self.stream)?;
        }
        issue.finished();
        Ok(())
    }

    pub fn read(&self, m: &DeviceMemory) -> Result<Vec<u8>, DeviceError> {
        self.ctx.bind()?;
        let mut issue = self.issue.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = vec![0u8; m.bytes];
        if let Some(host) = &m.host {
            // SAFETY: after the synchronize no issued work writes the memory; it holds
            // `out.len()` bytes.
            unsafe {
                result::stream_synchronize(self.stream)?;
                std::ptr::copy_nonoverlapping(host.0 as *const u8, out.as_mut_ptr(), out.len());
            }
            issue.finished();
            return Ok(out);
        }
        // SAFETY: `m` holds `out.len()` bytes; the synchronize below ends the copy before `out`
        // is touched.
        unsafe {
            result::memcpy_dtoh_async(&mut out, m.ptr, self.stream)?;
            result::stream_synchronize(self.stream)?;
        }
        issue.finished();
        Ok(out)
    }

    pub fn load(&self, obj: &PackageObject) -> Result<Function, DeviceError> {
        self.ctx.bind()?;
        let _issue = self.issue.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: the context is current.
        let (raw, _info_log) = unsafe { result::module_load_data_ex(obj.bytes())? };
        let module = Arc::new(Module { ctx: self.ctx.clone(), raw });
        // SAFETY: the module is live (held by `module`).
        let func = unsafe { result::module_get_function(raw, &obj.entry.symbol)? };
        use sys::CUfunction_attribute as F;
        // SAFETY: `func` belongs to the live module.
        let (max_lanes, registers) = unsafe {
            (
                result::func_attribute(func, F::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
                result::func_attribute(func, F::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
            )
        };
        Ok(Function {
            _module: module,
            raw: func,
            max_lanes: max_lanes as u32,
            registers: registers as u32,
        })
    }

    pub fn launch(&self, f: &Function, l: &PreparedLaunch) -> Result<(), DeviceError> {
        self.ctx.bind()?;
        let mut issue = self.issue.lock().unwrap_or_else(|p| p.into_inner());
        let overlap = self.decide(&mut issue, l);
        self.launch_locked(f, l, overlap)
    }

    /// Whether `l` may overlap the grids before it ([`InFlight`]); records its writes.
    fn decide(&self, issue: &mut InFlight, l: &PreparedLaunch) -> bool {
        let (may, early, writes) = overlap_terms(self.overlap, l);
        issue.launch(may, &early, &writes)
    }

    /// Issues a launch; the caller holds `issue` and has bound the context.
    fn launch_locked(
        &self,
        f: &Function,
        l: &PreparedLaunch,
        overlap: bool,
    ) -> Result<(), DeviceError> {
        let mut slots = param_slots(&l.args)?;
        let mut ptrs = slot_ptrs(&mut slots);
        // SAFETY: one pointer per parameter, each to an 8-byte slot holding the value in its low
        // bytes (little-endian), alive for the call; buffer pointers are allocations of this
        // context kept alive by the caller's launch record until the stream passes them. With
        // `overlap`, the object waits for the grids before it (`grid_dependency`) and reads
        // nothing before that wait that a grid still in flight writes (`InFlight`).
        let window = *self.l2.lock().unwrap_or_else(|p| p.into_inner());
        unsafe {
            result::launch_kernel(f.raw, l.grid, l.block, self.stream, &mut ptrs, overlap, window)?
        };
        Ok(())
    }

    pub fn record_event(&self) -> Result<Event, DeviceError> {
        self.ctx.bind()?;
        let _issue = self.issue.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: the context is current.
        let raw = unsafe { result::event_create()? };
        let e = Event { ctx: self.ctx.clone(), raw };
        // SAFETY: event and stream are live and of this context.
        unsafe { result::event_record(raw, self.stream)? };
        Ok(e)
    }

    /// Pinned host memory for [`Self::copy_to_pinned`] (not mapped: only copies reach it).
    pub fn alloc_pinned(&self, bytes: usize) -> Result<Pinned, DeviceError> {
        self.ctx.bind()?;
        let _issue = self.issue.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: the context is current; a zero-byte slot still gets a distinct allocation.
        let host = unsafe { result::mem_host_alloc(bytes.max(1), 0)? };
        Ok(Pinned { ctx: self.ctx.clone(), host: MappedHost(host), bytes })
    }

    /// Queues a copy of `src` into `dst` after the work issued so far and records an event
    /// after it; returns at once. `dst` must not be read before the event completes, nor given
    /// to another copy (the caller, `ReadBack`, keeps a slot for one copy at a time).
    pub fn copy_to_pinned(&self, src: &DeviceMemory, dst: &Pinned) -> Result<Event, DeviceError> {
        debug_assert_eq!(src.bytes, dst.bytes);
        self.ctx.bind()?;
        let _issue = self.issue.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: `dst` holds `bytes` bytes of pinned memory that only this copy writes and
        // nothing reads before the event below completes (the caller's contract); `src` holds
        // as many; the stream lives as long as `self`.
        let raw = unsafe {
            let out = std::slice::from_raw_parts_mut(dst.host.0 as *mut u8, dst.bytes);
            result::memcpy_dtoh_async(out, src.ptr, self.stream)?;
            result::event_create()?
        };
        let e = Event { ctx: self.ctx.clone(), raw };
        // SAFETY: event and stream are live and of this context.
        unsafe { result::event_record(raw, self.stream)? };
        Ok(e)
    }

    /// Waits for `done` (the event of the copy into `dst`) and returns `dst`'s bytes; work
    /// issued after the copy may still run.
    pub fn read_pinned(&self, dst: &Pinned, done: &Event) -> Result<Vec<u8>, DeviceError> {
        self.ctx.bind()?;
        let mut out = vec![0u8; dst.bytes];
        // SAFETY: the event is live; once it completes, the copy into `dst` is over and nothing
        // else writes it (the caller's contract); it holds `out.len()` bytes.
        unsafe {
            result::event_synchronize(done.raw)?;
            std::ptr::copy_nonoverlapping(dst.host.0 as *const u8, out.as_mut_ptr(), dst.bytes);
        }
        Ok(out)
    }

    /// Waits for `done` and returns the bytes `range` of host-mapped `m` as the work before
    /// `done` left them; work issued after it may still run (the caller keeps it off `range`).
    pub fn read_mapped(
        &self,
        m: &DeviceMemory,
        range: std::ops::Range<usize>,
        done: &Event,
    ) -> Result<Vec<u8>, DeviceError> {
        let host = m.host.as_ref().expect("in-place reads are of host-mapped memory");
        assert!(range.end <= m.bytes, "the caller checks the range");
        self.ctx.bind()?;
        let mut out = vec![0u8; range.len()];
        // SAFETY: the event is live; once it completes, the device's writes before it are
        // visible in the mapped memory, which holds `m.bytes >= range.end` bytes; nothing
        // writes `range` after it (the caller's contract).
        unsafe {
            result::event_synchronize(done.raw)?;
            std::ptr::copy_nonoverlapping(
                (host.0 as *const u8).add(range.start),
                out.as_mut_ptr(),
                range.len(),
            );
        }
        Ok(out)
    }

    pub fn capture(&self, launches: &[PreparedLaunch]) -> Result<CudaGraph, DeviceError> {
        self.ctx.bind()?;
        let _issue = self.issue.lock().unwrap_or_else(|p| p.into_inner());
        // A graph starts after everything issued before it on the stream: its nodes' overlaps
        // are decided among themselves (and nothing captured runs now, so the stream's own
        // list is left as it is).
        let overlaps = decide_graph(self.overlap, launches);
        // SAFETY: our stream is a created (not default) stream.
        unsafe { result::stream_begin_capture(self.stream)? };
        let mut at = 0;
        let (nodes, failed) = capture_nodes(launches, |l| match &l.code {
            super::Code::Cuda(f) => {
                let overlap = overlaps[at];
                at += 1;
                self.launch_locked(f, l, overlap).and_then(|()| {
                    // SAFETY: the stream is capturing, on this thread.
                    Ok(unsafe { result::stream_capture_last_node(self.stream)? })
                })
            }
            _ => Err(foreign_code("cuda")),
        });
        // Always end the capture, so the stream is usable again whatever happened.
        // SAFETY: the capture was begun on this thread.
        let graph = unsafe { result::stream_end_capture(self.stream) };
        if let Some(e) = failed {
            if let Ok(g) = graph {
                if !g.is_null() {
                    // SAFETY: the partial graph is ours and unused.
                    self.ctx.defer(unsafe { result::graph_destroy(g) });
                }
            }
            return Err(e);
        }
        let graph = graph?;
        // SAFETY: `graph` is the live graph just captured.
        let exec = match unsafe { result::graph_instantiate(graph) } {
            Ok(e) => e,
            Err(e) => {
                // SAFETY: as above; not instantiated, so nothing else refers to it.
                self.ctx.defer(unsafe { result::graph_destroy(graph) });
                return Err(e.into());
            }
        };
        let early = launches.iter().map(|l| l.early.clone()).collect();
        Ok(CudaGraph { ctx: self.ctx.clone(), graph, exec, nodes, overlaps, early })
    }

    pub fn replay(
        &self,
        g: &CudaGraph,
        launches: &[PreparedLaunch],
        changed: &[bool],
        launch: bool,
    ) -> Result<(), DeviceError> {
        self.ctx.bind()?;
        let mut issue = self.issue.lock().unwrap_or_else(|p| p.into_inner());
        // A changed node may be another variant, which may read other buffers before its wait:
        // a node captured to overlap must still be allowed to. (The buffers cannot change, so
        // only a changed early-read set asks again; a replay that moves `pos` does not.)
        let early_moved = launches.iter().zip(&g.early).any(|(l, e)| l.early != *e);
        if early_moved {
            let now = decide_graph(self.overlap, launches);
            if let Some(i) = (0..now.len()).find(|&i| g.overlaps[i] && !now[i]) {
                return Err(DeviceError::OverlapChanged {
                    node: i,
                    kernel: launches[i].label.to_string(),
                });
            }
        }
        for ((l, &node), _) in launches.iter().zip(&g.nodes).zip(changed).filter(|(_, &c)| c) {
            let super::Code::Cuda(f) = &l.code else {
                return Err(foreign_code("cuda"));
            };
            let mut slots = param_slots(&l.args)?;
            let mut ptrs = slot_ptrs(&mut slots);
            let p = sys::CUDA_KERNEL_NODE_PARAMS_v2 {
                func: f.raw,
                gridDimX: l.grid[0],
                gridDimY: l.grid[1],
                gridDimZ: l.grid[2],
                blockDimX: l.block[0],
                blockDimY: l.block[1],
                blockDimZ: l.block[2],
                sharedMemBytes: 0,
                kernelParams: ptrs.as_mut_ptr(),
                extra: std::ptr::null_mut(),
                kern: std::ptr::null_mut(),
                ctx: std::ptr::null_mut(),
            };
            // SAFETY: `node` is the kernel node captured for this launch in the graph `g.exec`
            // was instantiated from; `ptrs` holds one pointer per parameter, alive for the call
            // (the driver copies the values).
            unsafe { result::graph_exec_kernel_node_set_params(g.exec, node, &p)? };
        }
        if !launch {
            return Ok(());
        }
        // SAFETY: exec and stream are live and of this context.
        unsafe { result::graph_launch(g.exec, self.stream)? };
        // The graph started after everything before it had finished, so what may be in flight
        // now is what the graph writes.
        issue.finished();
        for l in launches {
            for r in l.ranges(&l.writes, memory_range) {
                issue.wrote(r);
            }
        }
        Ok(())
    }
}

/// A cuda buffer's byte range.
fn memory_range(m: &Memory) -> Option<Range> {
    match m {
        Memory::Cuda(d) => Some((d.ptr, d.bytes as u64)),
        _ => None,
    }
}

/// What [`InFlight::launch`] weighs for `l`: whether it may overlap at all, the ranges it reads
/// before its wait and the ranges it may write.
fn overlap_terms(enabled: bool, l: &PreparedLaunch) -> (bool, Vec<Range>, Vec<Range>) {
    let early = l.ranges(&l.early, memory_range).collect();
    (enabled && l.overlap, early, l.ranges(&l.writes, memory_range).collect())
}

/// The overlap of each launch of a graph, from an empty list ([`InFlight::decide_all`]).
fn decide_graph(enabled: bool, launches: &[PreparedLaunch]) -> Vec<bool> {
    let terms: Vec<_> = launches.iter().map(|l| overlap_terms(enabled, l)).collect();
    InFlight::decide_all(terms.iter().map(|(m, e, w)| (*m, e.as_slice(), w.as_slice())))
}

impl Drop for CudaDevice {
    fn drop(&mut self) {
        let r = self.ctx.bind_quiet().and_then(|()| {
            // SAFETY: the stream is ours; nothing is issued on it after this.
            unsafe {
                result::stream_synchronize(self.stream)?;
                result::stream_destroy(self.stream)
            }
        });
        self.ctx.defer(r);
    }
}

/// The launch arguments in 8-byte slots ([`super::param_slots`]); buffers must be cuda memory.
fn param_slots(args: &[KernelArg]) -> Result<Vec<u64>, DeviceError> {
    super::param_slots(args, "cuda", |m| match m {
        Memory::Cuda(m) => Some(m.ptr),
        _ => None,
    })
}

/// Device memory (`cuMemAlloc`) or mapped pinned host memory (`cuMemHostAlloc`), freed in
/// `Drop`.
pub(crate) struct DeviceMemory {
    ctx: Arc<Context>,
    /// The device address (for mapped host memory, its device pointer).
    ptr: sys::CUdeviceptr,
    bytes: usize,
    /// Mapped host memory: its host pointer. `None`: device memory.
    host: Option<MappedHost>,
    /// A part of one allocation shared by a group ([`CudaDevice::alloc_group`]): the whole,
    /// freed when its last part drops. `None`: this is an allocation of its own.
    part_of: Option<Arc<DeviceMemory>>,
}

impl DeviceMemory {
    /// Pinned host memory mapped into the device ([`CudaDevice::alloc_host_mapped`]).
    pub(crate) fn is_host_mapped(&self) -> bool {
        self.host.is_some()
    }
}

/// The host pointer of mapped pinned memory.
struct MappedHost(*mut c_void);

// SAFETY: pinned host memory is plain memory, reachable from any thread; every access goes
// through the device's issue lock after a stream synchronize.
unsafe impl Send for MappedHost {}
// SAFETY: as above.
unsafe impl Sync for MappedHost {}

impl DeviceMemory {
    pub fn device_address(&self) -> u64 {
        self.ptr
    }
}

impl Drop for DeviceMemory {
    fn drop(&mut self) {
        if self.part_of.is_some() {
            // The whole allocation frees itself when its last part drops.
            return;
        }
        let r = self.ctx.bind_quiet().and_then(|()| match &self.host {
            // A kernel may still reach it through an address in a table, which holds no handle:
            // wait for the context's work first, or the device could write into host memory
            // the process has reused.
            // SAFETY: the context is current; the pointer came from cuMemHostAlloc, this is its
            // only owner, and no work is left that could use it.
            Some(h) => unsafe {
                result::ctx_synchronize()?;
                result::mem_free_host(h.0)
            },
            // SAFETY: the pointer came from cuMemAlloc and this is its only owner.
            None => unsafe { result::mem_free(self.ptr) },
        });
        self.ctx.defer(r);
    }
}

/// Pinned host memory, the landing place of one queued copy at a time.
pub(crate) struct Pinned {
    ctx: Arc<Context>,
    host: MappedHost,
    bytes: usize,
}

impl Drop for Pinned {
    fn drop(&mut self) {
        let r = self.ctx.bind_quiet().and_then(|()| {
            // SAFETY: the pointer came from cuMemHostAlloc and this is its only owner; a copy
            // queued into it may still be in flight, so wait for the context's work first.
            unsafe {
                result::ctx_synchronize()?;
                result::mem_free_host(self.host.0)
            }
        });
        self.ctx.defer(r);
    }
}

/// A loaded module, unloaded in `Drop`.
pub(crate) struct Module {
    ctx: Arc<Context>,
    raw: sys::CUmodule,
}

// SAFETY: module handles are context-wide and used only with the context bound.
unsafe impl Send for Module {}
// SAFETY: as above.
unsafe impl Sync for Module {}

impl Drop for Module {
    fn drop(&mut self) {
        let r = self.ctx.bind_quiet().and_then(|()| {
            // SAFETY: every Function of this module holds an Arc to it, so none is left.
            unsafe { result::module_unload(self.raw) }
        });
        self.ctx.defer(r);
    }
}

/// A kernel of a loaded module.
pub(crate) struct Function {
    /// Keeps the module loaded while the function may run.
    _module: Arc<Module>,
    raw: sys::CUfunction,
    /// Most lanes per workgroup the driver allows for it (registers can lower it below 1024).
    pub max_lanes: u32,
    /// Registers per lane the JIT allocated.
    pub registers: u32,
}

// SAFETY: function handles are context-wide and used only with the context bound.
unsafe impl Send for Function {}
// SAFETY: as above.
unsafe impl Sync for Function {}

/// A timing event, destroyed in `Drop`.
pub(crate) struct Event {
    ctx: Arc<Context>,
    raw: sys::CUevent,
}

// SAFETY: event handles are context-wide and used only with the context bound.
unsafe impl Send for Event {}
// SAFETY: as above.
unsafe impl Sync for Event {}

impl Event {
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32, DeviceError> {
        self.ctx.bind()?;
        // SAFETY: both events are live; the synchronize completes `end`, which was recorded after
        // `self` on the same stream.
        unsafe {
            result::event_synchronize(end.raw)?;
            Ok(result::event_elapsed_ms(self.raw, end.raw)?)
        }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        let r = self.ctx.bind_quiet().and_then(|()| {
            // SAFETY: the event is ours.
            unsafe { result::event_destroy(self.raw) }
        });
        self.ctx.defer(r);
    }
}

/// A captured, instantiated graph and the node of each captured launch, in order.
pub(crate) struct CudaGraph {
    ctx: Arc<Context>,
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    nodes: Vec<sys::CUgraphNode>,
    /// Whether each node was captured to overlap the nodes before it.
    overlaps: Vec<bool>,
    /// Each node's early-read parameters at capture (a replay asks again only if they moved).
    early: Vec<Arc<[usize]>>,
}

// SAFETY: graph handles are used only with the context bound, by one replay at a time (the
// owning CapturedGraph takes `&mut self`).
unsafe impl Send for CudaGraph {}
// SAFETY: as above.
unsafe impl Sync for CudaGraph {}

impl Drop for CudaGraph {
    fn drop(&mut self) {
        let r = self.ctx.bind_quiet().and_then(|()| {
            // SAFETY: both are ours; a launched exec may still run, and the driver defers its
            // destruction until it completes.
            unsafe {
                result::graph_exec_destroy(self.exec)?;
                result::graph_destroy(self.graph)
            }
        });
        self.ctx.defer(r);
    }
}
