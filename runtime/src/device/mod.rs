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

mod buffer;
pub(crate) mod cpu;
pub(crate) mod cuda;
mod error;
mod event;
#[cfg(feature = "hip")]
pub(crate) mod hip;
pub(crate) mod inflight;
mod l2;
mod limits;
mod readback;
mod work;

pub use buffer::Buffer;
pub(crate) use buffer::Memory;
pub use error::DeviceError;
pub use event::Event;
use event::EventInner;
pub use l2::{L2Access, L2Applied, L2Window};
pub use limits::DeviceLimits;
pub use readback::{ReadBack, Ticket};
pub(crate) use work::{
    capture_nodes, foreign_code, param_slots, slot_ptrs, Code, GraphExec, KernelArg, PreparedLaunch,
};

use crate::package::LoadError;
use crate::value::Element;
use kiln_ir::{ScalarType, Target};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub use cuda::CudaError;
#[cfg(feature = "hip")]
pub use hip::HipError;

/// What a command line prints (stderr) when it opens `--device hip`: the hip device has not yet
/// launched a kernel on AMD hardware, so its results are unproven until an AMD machine runs
/// the runtime's hip tests and `kiln parity --device hip`.
pub const HIP_UNTESTED_NOTICE: &str = "kiln: note: the hip device is untested on AMD hardware: \
     no kernel has been launched through it on an AMD GPU yet; check results against \
     `--device cpu` (kiln parity) before trusting them";

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
        let bytes = alloc_bytes(dtype, len)?;
        let mem = match self.backend() {
            Backend::Cpu(c) => c.alloc(bytes)?,
            Backend::Cuda(c) => Arc::new(Memory::Cuda(c.alloc_zeroed(bytes)?)),
            #[cfg(feature = "hip")]
            Backend::Hip(h) => Arc::new(Memory::Hip(h.alloc_zeroed(bytes)?)),
        };
        Ok(Buffer { dtype, len, mem, device: self.clone() })
    }

    /// Allocates zeroed buffers of `(dtype, len)` each, side by side in one address range that
    /// holds them and nothing else (cuda: one `cuMemAlloc`, each buffer at a multiple of 256
    /// bytes; freed when the last of them drops), so that one L2 window ([`L2Window`]) covers
    /// exactly them. Each is a buffer of its own: disjoint from the others and from every
    /// other buffer. cpu: consecutive fresh fake addresses (no other buffer between them);
    /// hip: one by one (no L2 window there).
    pub fn alloc_group(&self, specs: &[(ScalarType, usize)]) -> Result<Vec<Buffer>, DeviceError> {
        let bytes = specs
            .iter()
            .map(|&(dtype, len)| alloc_bytes(dtype, len))
            .collect::<Result<Vec<usize>, _>>()?;
        let mems: Vec<Arc<Memory>> = match self.backend() {
            Backend::Cpu(c) => c.alloc_group(&bytes)?,
            Backend::Cuda(c) => {
                c.alloc_group(&bytes)?.into_iter().map(|m| Arc::new(Memory::Cuda(m))).collect()
            }
            #[cfg(feature = "hip")]
            Backend::Hip(_) => {
                return specs.iter().map(|&(dtype, len)| self.alloc(dtype, len)).collect()
            }
        };
        Ok(specs
            .iter()
            .zip(mems)
            .map(|(&(dtype, len), mem)| Buffer { dtype, len, mem, device: self.clone() })
            .collect())
    }

    /// Allocates `len` zeroed elements of `dtype` in pinned host memory mapped into the device's
    /// address space: kernels reach it through [`Buffer::device_address`] (over the bus), as an
    /// engine stages a decode step's small inputs for `copy_from_mapped_multi`. It reads, writes
    /// and launches like any buffer of the device, and is freed when the last handle drops.
    /// cuda: `cuMemHostAlloc(CU_MEMHOSTALLOC_DEVICEMAP)` and `cuMemHostGetDevicePointer`; hip:
    /// `hipHostMalloc(hipHostMallocMapped)` and `hipHostGetDevicePointer`; cpu: an ordinary
    /// buffer (all of its memory is host memory).
    pub fn alloc_host_mapped(&self, dtype: ScalarType, len: usize) -> Result<Buffer, DeviceError> {
        let bytes = alloc_bytes(dtype, len)?;
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

    /// Sets the L2 window that every launch issued from now on carries (graphs captured from
    /// now on included; a graph keeps the window it was captured with), or clears it with
    /// `None`. See [`L2Window`]: only the cuda device applies one; the others answer
    /// [`L2Applied::Ignored`]. Results never depend on it.
    pub fn set_l2_window(&self, w: Option<L2Window>) -> Result<L2Applied, DeviceError> {
        if let Some(w) = &w {
            w.check()?;
        }
        match self.backend() {
            Backend::Cpu(_) => Ok(L2Applied::Ignored),
            Backend::Cuda(c) => c.set_l2_window(w),
            #[cfg(feature = "hip")]
            Backend::Hip(_) => Ok(L2Applied::Ignored),
        }
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

    fn foreign(&self, what: &str) -> DeviceError {
        DeviceError::ForeignBuffer {
            expected: format!("{self:?}"),
            found: format!("a {what} of another kind of device"),
        }
    }
}

/// The bytes of `len` elements of `dtype`, refused up front when that overflows or is beyond
/// what any device allocates (2^48 bytes), with the size in the message.
fn alloc_bytes(dtype: ScalarType, len: usize) -> Result<usize, DeviceError> {
    const MAX_BYTES: u128 = 1 << 48;
    let bytes = len as u128 * dtype.bytes() as u128;
    if bytes > MAX_BYTES {
        return Err(DeviceError::TooLarge { len, dtype, bytes, max: MAX_BYTES as u64 });
    }
    Ok(bytes as usize)
}
