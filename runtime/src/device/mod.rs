//! Devices: where kernels run. Three kinds share one API:
//!
//! | kind   | runs                                   | memory (host-mapped)        | graph                          |
//! |--------|----------------------------------------|-----------------------------|--------------------------------|
//! | `cpu`  | the IR file, in the reference interpreter, emulating one arch of the package | host `Vec<u8>` at a fake address (the same) | the node list, replayed |
//! | `cuda` | PTX, JIT-compiled by the driver (loaded at run time) | `cuMemAlloc` (`cuMemHostAlloc`, `DEVICEMAP`) | stream capture, `cuGraphLaunch` |
//! | `hip`  | HSACO (feature `hip`; libamdhip64 loaded at run time) | `hipMalloc` (`hipHostMalloc`, mapped) | stream capture, `hipGraphLaunch` |
//!
//! A [`Device`] is a cheap handle (an `Arc`). Work goes to one in-order stream per device, so
//! launches, copies and graph replays on one device happen in the order they were issued.
//! [`Buffer`]s know their element type and length, so the launch checks can compare them with
//! the ABI, and their [`Buffer::device_address`], for kernels that follow a table of addresses.
//! Host-mapped buffers ([`Device::alloc_host_mapped`]) read and write like the others: after a
//! stream synchronize, straight through their host pointer.

pub(crate) mod cpu;
pub(crate) mod cuda;
#[cfg(feature = "hip")]
pub(crate) mod hip;

use crate::package::{LoadError, PackageObject};
use crate::value::{self, Element, Scalar};
use kiln_ir::package::ObjectFormat;
use kiln_ir::{ScalarType, Target};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub use cuda::CudaError;
#[cfg(feature = "hip")]
pub use hip::HipError;

/// Which kind of device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    /// The reference interpreter.
    Cpu,
    /// An NVIDIA GPU through the CUDA driver API.
    Cuda,
    /// An AMD GPU through HIP.
    Hip,
}

impl DeviceKind {
    /// `cpu`, `cuda` or `hip`.
    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Cpu => "cpu",
            DeviceKind::Cuda => "cuda",
            DeviceKind::Hip => "hip",
        }
    }
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for DeviceKind {
    type Err = DeviceError;
    fn from_str(s: &str) -> Result<DeviceKind, DeviceError> {
        match s {
            "cpu" => Ok(DeviceKind::Cpu),
            "cuda" => Ok(DeviceKind::Cuda),
            "hip" => Ok(DeviceKind::Hip),
            _ => Err(DeviceError::UnknownKind(s.to_string())),
        }
    }
}

/// Errors of the device layer.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// No such device here.
    #[error("no {kind} device: {reason}")]
    Unavailable {
        /// The kind asked for.
        kind: DeviceKind,
        /// Why (no driver, no GPU, feature not built...).
        reason: String,
    },
    /// A device kind name that is not `cpu`, `cuda` or `hip`.
    #[error("unknown device `{0}`; devices: cpu, cuda, hip")]
    UnknownKind(String),
    /// The CUDA driver failed.
    #[error(transparent)]
    Cuda(#[from] CudaError),
    /// HIP failed.
    #[cfg(feature = "hip")]
    #[error(transparent)]
    Hip(#[from] HipError),
    /// The interpreter stopped (sanitizer finding, division by zero, ...).
    #[error("{kernel} on the cpu device: {source}")]
    Interp {
        /// `kernel/variant`.
        kernel: String,
        /// The interpreter's error.
        source: Box<kiln_ir::interp::InterpError>,
    },
    /// A buffer from another device.
    #[error("buffer belongs to {found}, not to this device ({expected})")]
    ForeignBuffer {
        /// This device.
        expected: String,
        /// The buffer's device.
        found: String,
    },
    /// The cpu device cannot pass one buffer twice (each parameter gets its own copy there).
    #[error("{kernel}: the cpu device cannot pass one buffer as both `{first}` and `{second}`")]
    Aliased {
        /// The kernel.
        kernel: String,
        /// First parameter.
        first: String,
        /// Second parameter.
        second: String,
    },
    /// A host read or write with the wrong element type or size.
    #[error("{what}: expected {expected}, found {found}")]
    Mismatch {
        /// What was being done.
        what: &'static str,
        /// Expected.
        expected: String,
        /// Found.
        found: String,
    },
    /// The cpu device cannot give a buffer a fake device address: over 16 million buffers are
    /// alive, or one is larger than the 1 TiB between two addresses.
    #[error("cpu device: {0}")]
    CpuAddressSpace(String),
    /// The device has no arch to emulate (cpu device before a package chose one).
    #[error("the cpu device has no arch: set CpuOptions::arch, or load it through a Runtime")]
    NoArch,
}

/// What the device can hold; objects beyond these are refused at load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    /// Wave sizes the device runs.
    pub wave_sizes: Vec<u32>,
    /// Static LDS (shared memory) per workgroup, bytes.
    pub lds_per_workgroup: u64,
    /// VGPRs per lane (NVIDIA: registers per thread).
    pub max_vgprs: u32,
    /// SGPRs per wave (AMD).
    pub max_sgprs: Option<u32>,
    /// AGPRs per lane (CDNA).
    pub max_agprs: Option<u32>,
    /// Registers per workgroup (NVIDIA: registers per block).
    pub max_registers_per_workgroup: Option<u64>,
    /// Lanes per workgroup.
    pub max_workgroup_lanes: u32,
}

impl DeviceLimits {
    /// The limits of a target from the target table.
    pub fn of_target(t: &Target) -> DeviceLimits {
        let amd = t.vendor == kiln_ir::target::Vendor::Amd;
        DeviceLimits {
            wave_sizes: t.wave_sizes.to_vec(),
            lds_per_workgroup: t.lds_per_workgroup as u64,
            max_vgprs: t.max_vgprs,
            max_sgprs: amd.then_some(t.sgprs),
            max_agprs: amd.then_some(t.agprs),
            max_registers_per_workgroup: (!amd).then_some(t.vgpr_file as u64),
            max_workgroup_lanes: 1024,
        }
    }
}

/// Options of the cpu device.
#[derive(Clone, Debug)]
pub struct CpuOptions {
    /// The arch to emulate. `None`: the first wave-32 arch of the package (else its first arch).
    pub arch: Option<String>,
    /// Run the interpreter's sanitizer (out-of-bounds, LDS races, ...) on every launch.
    pub sanitize: bool,
    /// Let the interpreter run workgroups in parallel.
    pub parallel: bool,
}

impl Default for CpuOptions {
    fn default() -> CpuOptions {
        CpuOptions { arch: None, sanitize: true, parallel: true }
    }
}

impl CpuOptions {
    /// Emulates `arch` (e.g. `gfx906` for wave 64).
    pub fn arch(arch: impl Into<String>) -> CpuOptions {
        CpuOptions { arch: Some(arch.into()), ..CpuOptions::default() }
    }
}

pub(crate) enum Backend {
    Cpu(cpu::CpuDevice),
    Cuda(cuda::CudaDevice),
    #[cfg(feature = "hip")]
    Hip(hip::HipDevice),
}

struct DeviceInner {
    id: u64,
    backend: Backend,
}

/// A device: cpu, cuda or hip. Clone it freely (it is a handle).
#[derive(Clone)]
pub struct Device {
    inner: Arc<DeviceInner>,
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Device({} #{}: {})", self.kind(), self.inner.id, self.name())
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl Device {
    fn wrap(backend: Backend) -> Device {
        Device {
            inner: Arc::new(DeviceInner { id: NEXT_ID.fetch_add(1, Ordering::Relaxed), backend }),
        }
    }

    /// The cpu device (always there).
    pub fn cpu(opts: CpuOptions) -> Device {
        Device::wrap(Backend::Cpu(cpu::CpuDevice::new(opts)))
    }

    /// The CUDA device `ordinal`. Loads libcuda now; without it (or without a GPU) this says so.
    pub fn cuda(ordinal: usize) -> Result<Device, DeviceError> {
        Ok(Device::wrap(Backend::Cuda(cuda::CudaDevice::open(ordinal)?)))
    }

    /// The HIP device `ordinal`. Loads libamdhip64 now; without it (or without an AMD GPU) this
    /// says so. Without the `hip` feature it always says that.
    pub fn hip(ordinal: usize) -> Result<Device, DeviceError> {
        #[cfg(feature = "hip")]
        {
            Ok(Device::wrap(Backend::Hip(hip::HipDevice::open(ordinal)?)))
        }
        #[cfg(not(feature = "hip"))]
        {
            let _ = ordinal;
            Err(DeviceError::Unavailable {
                kind: DeviceKind::Hip,
                reason: "this build of kiln-runtime has no `hip` feature".into(),
            })
        }
    }

    /// Opens a device by kind (`ordinal` is ignored for cpu, which uses default options).
    pub fn open(kind: DeviceKind, ordinal: usize) -> Result<Device, DeviceError> {
        match kind {
            DeviceKind::Cpu => Ok(Device::cpu(CpuOptions::default())),
            DeviceKind::Cuda => Device::cuda(ordinal),
            DeviceKind::Hip => Device::hip(ordinal),
        }
    }

    pub(crate) fn backend(&self) -> &Backend {
        &self.inner.backend
    }

    /// A number unique to this handle's device instance (buffers carry it).
    pub fn id(&self) -> u64 {
        self.inner.id
    }

    /// Its kind.
    pub fn kind(&self) -> DeviceKind {
        match self.backend() {
            Backend::Cpu(_) => DeviceKind::Cpu,
            Backend::Cuda(_) => DeviceKind::Cuda,
            #[cfg(feature = "hip")]
            Backend::Hip(_) => DeviceKind::Hip,
        }
    }

    /// A readable name (`cpu (interpreter)`, `NVIDIA H200 (sm_90)`, ...).
    pub fn name(&self) -> String {
        match self.backend() {
            Backend::Cpu(c) => c.name(),
            Backend::Cuda(c) => c.name(),
            #[cfg(feature = "hip")]
            Backend::Hip(h) => h.name(),
        }
    }

    /// The hardware arch (`sm_90`, `gfx1100`); for the cpu device the arch set in its options.
    pub fn arch(&self) -> Option<String> {
        match self.backend() {
            Backend::Cpu(c) => c.opts.arch.clone(),
            Backend::Cuda(c) => Some(c.arch.clone()),
            #[cfg(feature = "hip")]
            Backend::Hip(h) => Some(h.arch.clone()),
        }
    }

    /// The limits objects are checked against when loaded for `arch`.
    pub fn limits(&self, arch: &str) -> Result<DeviceLimits, LoadError> {
        match self.backend() {
            Backend::Cpu(_) => {
                let t = Target::by_name(arch)
                    .map_err(|source| LoadError::UnknownArch { arch: arch.to_string(), source })?;
                Ok(DeviceLimits::of_target(t))
            }
            Backend::Cuda(c) => Ok(c.limits.clone()),
            #[cfg(feature = "hip")]
            Backend::Hip(h) => Ok(h.limits.clone()),
        }
    }

    /// Allocates `len` zeroed elements of `dtype`.
    pub fn alloc(&self, dtype: ScalarType, len: usize) -> Result<Buffer, DeviceError> {
        let bytes = len * dtype.bytes() as usize;
        let mem = match self.backend() {
            Backend::Cpu(c) => c.alloc(bytes)?,
            Backend::Cuda(c) => Arc::new(Memory::Cuda(c.alloc_zeroed(bytes)?)),
            #[cfg(feature = "hip")]
            Backend::Hip(h) => Arc::new(Memory::Hip(h.alloc_zeroed(bytes)?)),
        };
        Ok(Buffer { dtype, len, mem, device: self.clone() })
    }

    /// Allocates `len` zeroed elements of `dtype` in pinned host memory mapped into the device's
    /// address space: kernels reach it through [`Buffer::device_address`] (over the bus), as an
    /// engine stages a decode step's small inputs for `copy_from_mapped_multi`. It reads, writes
    /// and launches like any buffer of the device, and is freed when the last handle drops.
    /// cuda: `cuMemHostAlloc(CU_MEMHOSTALLOC_DEVICEMAP)` and `cuMemHostGetDevicePointer`; hip:
    /// `hipHostMalloc(hipHostMallocMapped)` and `hipHostGetDevicePointer`; cpu: an ordinary
    /// buffer (all of its memory is host memory).
    pub fn alloc_host_mapped(&self, dtype: ScalarType, len: usize) -> Result<Buffer, DeviceError> {
        let bytes = len * dtype.bytes() as usize;
        let mem = match self.backend() {
            Backend::Cpu(c) => c.alloc(bytes)?,
            Backend::Cuda(c) => Arc::new(Memory::Cuda(c.alloc_host_mapped(bytes)?)),
            #[cfg(feature = "hip")]
            Backend::Hip(h) => Arc::new(Memory::Hip(h.alloc_host_mapped(bytes)?)),
        };
        Ok(Buffer { dtype, len, mem, device: self.clone() })
    }

    /// Allocates a buffer holding `data`.
    pub fn upload<T: Element>(&self, data: &[T]) -> Result<Buffer, DeviceError> {
        let b = self.alloc(T::DTYPE, data.len())?;
        b.write(data)?;
        Ok(b)
    }

    /// Waits for everything issued so far; reports errors recorded since the last checked call.
    pub fn synchronize(&self) -> Result<(), DeviceError> {
        match self.backend() {
            Backend::Cpu(_) => Ok(()),
            Backend::Cuda(c) => c.synchronize(),
            #[cfg(feature = "hip")]
            Backend::Hip(h) => h.synchronize(),
        }
    }

    /// Records an event on the device's stream (cpu: reads the clock).
    pub fn record_event(&self) -> Result<Event, DeviceError> {
        let inner = match self.backend() {
            Backend::Cpu(_) => EventInner::Cpu(std::time::Instant::now()),
            Backend::Cuda(c) => EventInner::Cuda(c.record_event()?),
            #[cfg(feature = "hip")]
            Backend::Hip(h) => EventInner::Hip(h.record_event()?),
        };
        Ok(Event { inner })
    }

    /// Checks that an object can run here, as `arch`, and loads it.
    pub(crate) fn load_object(&self, obj: &PackageObject, arch: &str) -> Result<Code, LoadError> {
        let limits = self.limits(arch)?;
        let formats: &[ObjectFormat] = match self.kind() {
            // The cpu device runs the IR file; the object's own format does not matter.
            DeviceKind::Cpu => &[ObjectFormat::Hsaco, ObjectFormat::Ptx],
            DeviceKind::Cuda => &[ObjectFormat::Ptx],
            DeviceKind::Hip => &[ObjectFormat::Hsaco],
        };
        check_capability(obj, arch, &limits, self.kind(), formats)?;
        let driver = |e: DeviceError| {
            let (kernel, variant, arch) = obj.who();
            LoadError::Driver { kernel, variant, arch, source: Box::new(e) }
        };
        match self.backend() {
            Backend::Cpu(c) => c.load(obj, arch),
            Backend::Cuda(c) => {
                let f = c.load(obj).map_err(driver)?;
                // The JIT allocates registers itself: check what it allocated too.
                let lanes = obj.entry.workgroup_size.iter().product::<u32>();
                let after_jit = [
                    ("registers per lane (allocated by the JIT)", f.registers, limits.max_vgprs),
                    (
                        "lanes per workgroup (after the JIT's register allocation)",
                        lanes,
                        f.max_lanes,
                    ),
                ];
                for (resource, found, limit) in after_jit {
                    if found > limit {
                        let (kernel, variant, arch) = obj.who();
                        return Err(LoadError::Resource {
                            kernel,
                            variant,
                            arch,
                            resource,
                            limit: limit as u64,
                            found: found as u64,
                        });
                    }
                }
                Ok(Code::Cuda(Arc::new(f)))
            }
            #[cfg(feature = "hip")]
            Backend::Hip(h) => Ok(Code::Hip(Arc::new(h.load(obj).map_err(driver)?))),
        }
    }

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

    /// Replays a captured graph with new arguments for the nodes marked `changed`.
    pub(crate) fn replay(
        &self,
        g: &GraphExec,
        launches: &[PreparedLaunch],
        changed: &[bool],
    ) -> Result<(), DeviceError> {
        match (self.backend(), g) {
            (Backend::Cpu(_), GraphExec::Cpu) => {
                for l in launches {
                    self.launch(l)?;
                }
                Ok(())
            }
            (Backend::Cuda(c), GraphExec::Cuda(g)) => c.replay(g, launches, changed),
            #[cfg(feature = "hip")]
            (Backend::Hip(h), GraphExec::Hip(g)) => h.replay(g, launches, changed),
            _ => Err(self.foreign("graph")),
        }
    }

    fn foreign(&self, what: &str) -> DeviceError {
        DeviceError::ForeignBuffer {
            expected: format!("{self:?}"),
            found: format!("a {what} of another kind of device"),
        }
    }
}

/// Device memory of one buffer.
pub(crate) enum Memory {
    Host(cpu::HostMemory),
    Cuda(cuda::DeviceMemory),
    #[cfg(feature = "hip")]
    Hip(hip::DeviceMemory),
}

/// A typed buffer in a device's memory.
#[derive(Clone)]
pub struct Buffer {
    dtype: ScalarType,
    len: usize,
    mem: Arc<Memory>,
    device: Device,
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Buffer({} x {} on {:?})", self.len, self.dtype, self.device)
    }
}

impl Buffer {
    /// Element type.
    pub fn dtype(&self) -> ScalarType {
        self.dtype
    }

    /// Length in elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.len * self.dtype.bytes() as usize
    }

    /// The device it lives on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    pub(crate) fn memory(&self) -> &Arc<Memory> {
        &self.mem
    }

    /// The address kernels see for its first byte: what goes into a table of addresses that a
    /// kernel follows (`copy_from_mapped_multi`'s `(src, dst, bytes)` triples). cuda: the
    /// `CUdeviceptr` (for host-mapped memory, its device pointer); hip: the device pointer; cpu:
    /// a fake address, unique among live buffers and stable while this one lives, which the cpu
    /// device's launches resolve to this buffer.
    pub fn device_address(&self) -> u64 {
        match &*self.mem {
            Memory::Host(h) => h.address,
            Memory::Cuda(m) => m.device_address(),
            #[cfg(feature = "hip")]
            Memory::Hip(m) => m.device_address(),
        }
    }

    /// True when both handles are the same allocation.
    pub fn same_memory(&self, other: &Buffer) -> bool {
        Arc::ptr_eq(&self.mem, &other.mem)
    }

    /// Copies `data` in (after the work already issued on the device).
    pub fn write<T: Element>(&self, data: &[T]) -> Result<(), DeviceError> {
        self.check_type::<T>("write")?;
        self.write_bytes(&value::to_bytes(data))
    }

    /// Copies the whole buffer out (after the work already issued on the device).
    pub fn read<T: Element>(&self) -> Result<Vec<T>, DeviceError> {
        self.check_type::<T>("read")?;
        Ok(value::from_bytes(&self.read_bytes()?))
    }

    /// Copies raw bytes in; their count must be the buffer's size.
    pub fn write_bytes(&self, data: &[u8]) -> Result<(), DeviceError> {
        if data.len() != self.bytes() {
            return Err(DeviceError::Mismatch {
                what: "buffer write",
                expected: format!("{} bytes", self.bytes()),
                found: format!("{} bytes", data.len()),
            });
        }
        match (self.device.backend(), &*self.mem) {
            (Backend::Cpu(c), Memory::Host(m)) => {
                c.write(m, data);
                Ok(())
            }
            (Backend::Cuda(c), Memory::Cuda(m)) => c.write(m, data),
            #[cfg(feature = "hip")]
            (Backend::Hip(h), Memory::Hip(m)) => h.write(m, data),
            _ => Err(self.device.foreign("buffer")),
        }
    }

    /// Copies the raw bytes out.
    pub fn read_bytes(&self) -> Result<Vec<u8>, DeviceError> {
        match (self.device.backend(), &*self.mem) {
            (Backend::Cpu(c), Memory::Host(m)) => Ok(c.read(m)),
            (Backend::Cuda(c), Memory::Cuda(m)) => c.read(m),
            #[cfg(feature = "hip")]
            (Backend::Hip(h), Memory::Hip(m)) => h.read(m),
            _ => Err(self.device.foreign("buffer")),
        }
    }

    fn check_type<T: Element>(&self, what: &'static str) -> Result<(), DeviceError> {
        if T::DTYPE == self.dtype {
            Ok(())
        } else {
            Err(DeviceError::Mismatch {
                what,
                expected: format!("a {} buffer", T::DTYPE),
                found: format!("a {} buffer", self.dtype),
            })
        }
    }
}

/// A point in a device's stream, for timing.
pub struct Event {
    inner: EventInner,
}

enum EventInner {
    Cpu(std::time::Instant),
    Cuda(cuda::Event),
    #[cfg(feature = "hip")]
    Hip(hip::Event),
}

impl Event {
    /// Milliseconds from this event to `end` (waits for `end`).
    pub fn elapsed_ms(&self, end: &Event) -> Result<f64, DeviceError> {
        match (&self.inner, &end.inner) {
            (EventInner::Cpu(a), EventInner::Cpu(b)) => {
                Ok(b.saturating_duration_since(*a).as_secs_f64() * 1e3)
            }
            (EventInner::Cuda(a), EventInner::Cuda(b)) => Ok(a.elapsed_ms(b)? as f64),
            #[cfg(feature = "hip")]
            (EventInner::Hip(a), EventInner::Hip(b)) => Ok(a.elapsed_ms(b)? as f64),
            _ => Err(DeviceError::Mismatch {
                what: "event timing",
                expected: "two events of one device".into(),
                found: "events of different devices".into(),
            }),
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
    pub param_names: Arc<[String]>,
    pub code: Code,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub args: Vec<KernelArg>,
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

/// The device-side checks of an object: exact arch, wave size, format, LDS and registers.
pub(crate) fn check_capability(
    obj: &PackageObject,
    arch: &str,
    limits: &DeviceLimits,
    kind: DeviceKind,
    formats: &[ObjectFormat],
) -> Result<(), LoadError> {
    let e = &obj.entry;
    let (kernel, variant, oarch) = obj.who();
    if e.arch != arch {
        return Err(LoadError::WrongArch {
            kernel,
            variant,
            expected: arch.to_string(),
            found: oarch,
        });
    }
    if !limits.wave_sizes.contains(&e.wave_size) {
        return Err(LoadError::WrongWave {
            kernel,
            variant,
            arch: oarch,
            expected: limits.wave_sizes.clone(),
            found: e.wave_size,
        });
    }
    if !formats.contains(&e.format) {
        return Err(LoadError::WrongFormat {
            kernel,
            variant,
            arch: oarch,
            device: kind.to_string(),
            found: format!("{:?}", e.format).to_lowercase(),
        });
    }
    let lanes: u64 = e.workgroup_size.iter().map(|&d| d as u64).product();
    let lds = (e.resources.lds_bytes as u64).max(obj.ir().lds_bytes() as u64);
    let mut checks: Vec<(&'static str, u64, Option<u64>)> = vec![
        ("LDS bytes per workgroup", lds, Some(limits.lds_per_workgroup)),
        ("lanes per workgroup", lanes, Some(limits.max_workgroup_lanes as u64)),
    ];
    if let Some(v) = e.resources.vgprs {
        checks.push(("VGPRs per lane", v as u64, Some(limits.max_vgprs as u64)));
        checks.push((
            "registers per workgroup",
            v as u64 * lanes,
            limits.max_registers_per_workgroup,
        ));
    }
    if let Some(s) = e.resources.sgprs {
        checks.push(("SGPRs per wave", s as u64, limits.max_sgprs.map(u64::from)));
    }
    if let Some(a) = e.resources.agprs {
        checks.push(("AGPRs per lane", a as u64, limits.max_agprs.map(u64::from)));
    }
    for (resource, found, limit) in checks {
        if let Some(limit) = limit {
            if found > limit {
                return Err(LoadError::Resource {
                    kernel,
                    variant,
                    arch: oarch,
                    resource,
                    limit,
                    found,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{self, testgen};
    use crate::{Args, Overrides, Runtime, RuntimeError};
    use rand::Rng;

    fn host_mapped_buffers_read_and_write(dev: &Device) {
        let mut r = rand::thread_rng();
        let m = dev.alloc_host_mapped(ScalarType::U8, 1000).unwrap();
        assert_eq!(m.read_bytes().unwrap(), vec![0; 1000], "not zeroed");
        let data: Vec<u8> = (0..1000).map(|_| r.gen()).collect();
        m.write_bytes(&data).unwrap();
        assert_eq!(m.read_bytes().unwrap(), data);
        let f = dev.alloc_host_mapped(ScalarType::F32, 7).unwrap();
        f.write(&[1.5f32; 7]).unwrap();
        assert_eq!(f.read::<f32>().unwrap(), vec![1.5; 7]);
        let empty = dev.alloc_host_mapped(ScalarType::U32, 0).unwrap();
        assert!(empty.read_bytes().unwrap().is_empty());
        let d = dev.alloc(ScalarType::U8, 1000).unwrap();
        let mut addrs: Vec<u64> = [&m, &f, &empty, &d].iter().map(|b| b.device_address()).collect();
        assert!(addrs.iter().all(|&a| a != 0), "{addrs:x?}");
        addrs.sort_unstable();
        addrs.dedup();
        assert_eq!(addrs.len(), 4, "two live buffers share an address");
        assert_eq!(m.clone().device_address(), m.device_address(), "a handle moved the buffer");
    }

    /// One launch of `copy_from_mapped_multi`: 16 copies, every alignment class and ragged sizes,
    /// from host-mapped sources into device buffers, each at an offset into its buffer with
    /// random bytes around it, through a table of device addresses. Every destination buffer
    /// must equal a host memcpy into it (so the bytes around each copy are untouched), and
    /// every source must be unchanged.
    fn copies_from_host_mapped_memory(dev: &Device) {
        let Some((_dir, pkg)) = testing::package_for(dev, &[testing::copy_from_mapped_multi()])
        else {
            return;
        };
        let rt = Runtime::load_with(dev, &pkg, Overrides::none()).unwrap();
        let mut r = rand::thread_rng();
        // (source offset, destination offset, bytes); buffers start at least 256-byte aligned.
        let copies: [(usize, usize, usize); 16] = [
            (0, 0, 4096),
            (16, 32, 4096 + 5),
            (8, 8, 1000),
            (8, 0, 64),
            (4, 12, 4 * 77),
            (4, 4, 4 * 77 + 3),
            (1, 3, 999),
            (2, 2, 4097),
            (0, 0, 0),
            (0, 0, 1),
            (2, 2, 15),
            (0, 0, 16 * 9000 + 15),
            (5, 5, 4097),
            (12, 4, 777),
            (3, 0, 16),
            (64, 128, 1 << 16),
        ];
        const GUARD: usize = 64;
        let (mut srcs, mut dsts, mut table) = (vec![], vec![], vec![]);
        for &(so, dof, n) in &copies {
            let src: Vec<u8> = (0..so + n + GUARD).map(|_| r.gen()).collect();
            let before: Vec<u8> = (0..GUARD + dof + n + GUARD).map(|_| r.gen()).collect();
            let s = dev.alloc_host_mapped(ScalarType::U8, src.len()).unwrap();
            s.write_bytes(&src).unwrap();
            let d = dev.upload(&before).unwrap();
            table.extend([
                s.device_address() + so as u64,
                d.device_address() + (GUARD + dof) as u64,
                n as u64,
            ]);
            let mut want = before;
            want[GUARD + dof..][..n].copy_from_slice(&src[so..so + n]);
            srcs.push((s, src));
            dsts.push((d, want));
        }
        let t = dev.upload(&table).unwrap();
        let args = Args::new().buffer("table", &t).scalar("count", copies.len() as u32);
        rt.launch("copy_from_mapped_multi", &args).unwrap();
        rt.synchronize().unwrap();
        for (i, ((d, want), &(so, dof, n))) in dsts.iter().zip(&copies).enumerate() {
            let got = d.read_bytes().unwrap();
            if let Some(b) = (0..want.len()).find(|&b| got[b] != want[b]) {
                let copy = GUARD + dof..GUARD + dof + n;
                let place = if copy.contains(&b) { "inside the copy" } else { "outside the copy" };
                panic!(
                    "{}: copy {i} (src +{so}, dst +{dof}, {n} bytes): byte {b} ({place}, copy at \
                     {copy:?}) is {:#04x}, expected {:#04x}",
                    dev.kind(),
                    got[b],
                    want[b]
                );
            }
        }
        for (i, (s, src)) in srcs.iter().enumerate() {
            assert_eq!(&s.read_bytes().unwrap(), src, "{}: source {i} changed", dev.kind());
        }
    }

    testgen!(host_mapped_buffers_read_and_write, copies_from_host_mapped_memory);

    #[test]
    fn cpu_addresses_are_unique_among_live_buffers() {
        let (a, b) = (Device::cpu(CpuOptions::default()), Device::cpu(CpuOptions::default()));
        let bufs: Vec<Buffer> =
            (0..100).map(|i| [&a, &b][i % 2].alloc(ScalarType::U8, i).unwrap()).collect();
        let mut addrs: Vec<u64> = bufs.iter().map(Buffer::device_address).collect();
        assert!(addrs.iter().all(|&x| x >= 1 << 48 && x % (1 << 40) == 0), "{addrs:x?}");
        addrs.sort_unstable();
        addrs.dedup();
        assert_eq!(addrs.len(), 100, "two live buffers of two cpu devices share an address");
    }

    /// On the cpu device a table may point into any live buffer, a parameter included, and an
    /// address into a freed buffer is the interpreter's out-of-bounds error.
    #[test]
    fn cpu_launches_see_every_live_buffer() {
        let dev = Device::cpu(CpuOptions::default());
        let (_dir, pkg) = testing::package_for(&dev, &[testing::copy_from_mapped_multi()]).unwrap();
        let rt = Runtime::load_with(&dev, &pkg, Overrides::none()).unwrap();
        // A table with one spare entry at the end, past the 2 triples the kernel reads.
        let t = dev.alloc(ScalarType::U64, 7).unwrap();
        let src = dev.upload(&(0..64u8).collect::<Vec<_>>()).unwrap();
        let dst = dev.alloc(ScalarType::U8, 64).unwrap();
        // Copy 0: 16 bytes of `src` into `dst`; copy 1: 8 bytes of `src` into `t`'s spare entry.
        let s = src.device_address();
        let table = [s + 3, dst.device_address() + 1, 16, s + 8, t.device_address() + 48, 8, 0];
        t.write(&table).unwrap();
        let args = Args::new().buffer("table", &t).scalar("count", 2u32);
        rt.launch("copy_from_mapped_multi", &args).unwrap();
        let mut want = vec![0u8; 64];
        want[1..17].copy_from_slice(&(3..19).collect::<Vec<u8>>());
        assert_eq!(dst.read::<u8>().unwrap(), want);
        let spare = u64::from_le_bytes(std::array::from_fn(|i| 8 + i as u8));
        assert_eq!(t.read::<u64>().unwrap()[..], [&table[..6], &[spare]].concat());

        let gone = dev.alloc(ScalarType::U8, 64).unwrap();
        let at = gone.device_address();
        drop(gone);
        t.write(&[s, at, 16, s, dst.device_address(), 0, 0]).unwrap();
        let e = rt.launch("copy_from_mapped_multi", &args).unwrap_err();
        assert!(matches!(e, RuntimeError::Device(DeviceError::Interp { .. })), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains(&format!("store of 16 bytes at address {at:#x}, in no buffer or region")),
            "{msg}"
        );
    }
}
