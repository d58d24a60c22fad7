//! The thin layer: one function per CUDA driver call kiln uses, returning `Result`. The raw FFI
//! is `cudarc::driver::sys` (loaded from libcuda at run time); nothing here owns anything.
//!
//! Every function links the driver API page of the call it wraps.

use crate::device::{L2Access, L2Window};
use cudarc::driver::sys::{self, CUresult};
use std::ffi::{c_void, CStr, CString};
use std::fmt;
use std::sync::OnceLock;

/// A failed CUDA driver call.
#[derive(Clone, Debug)]
pub struct CudaError {
    /// The driver function.
    pub call: &'static str,
    /// The result code (`None` when the driver library itself could not be loaded).
    pub code: Option<CUresult>,
    /// The driver's description.
    pub message: String,
    /// The PTX JIT's error log, for a failed module load.
    pub log: Option<String>,
}

impl fmt::Display for CudaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.code {
            Some(c) => write!(f, "{} failed: {:?} ({})", self.call, c, self.message)?,
            None => write!(f, "{}: {}", self.call, self.message)?,
        }
        if let Some(log) = self.log.as_deref().filter(|l| !l.trim().is_empty()) {
            write!(f, "\nptxas says:\n{}", log.trim_end())?;
        }
        Ok(())
    }
}

impl std::error::Error for CudaError {}

fn check(call: &'static str, r: CUresult) -> Result<(), CudaError> {
    if r == CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    let mut p: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: the driver is loaded (we hold a result from it); cuGetErrorString writes a pointer
    // to a static NUL-terminated string, or leaves it null for an unknown code.
    let message = unsafe {
        if sys::cuGetErrorString(r, &mut p) == CUresult::CUDA_SUCCESS && !p.is_null() {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        } else {
            "unknown error".to_string()
        }
    };
    Err(CudaError { call, code: Some(r), message, log: None })
}

/// Loads libcuda once. cudarc's loader panics when the library is missing, so probe for it
/// first with the names a driver installs, and turn any remaining panic (a missing symbol) into
/// an error.
pub fn load_driver() -> Result<(), CudaError> {
    static LOADED: OnceLock<Result<(), String>> = OnceLock::new();
    let r = LOADED.get_or_init(|| {
        let names = ["libcuda.so.1", "libcuda.so", "nvcuda.dll"];
        let mut why = vec![];
        let found = names.iter().any(|n| {
            // SAFETY: loading the CUDA driver library runs its initializers, which is what the
            // driver expects of every client; the handle is dropped again at once (cudarc keeps
            // its own).
            match unsafe { libloading::Library::new(n) } {
                Ok(_) => true,
                Err(e) => {
                    why.push(e.to_string());
                    false
                }
            }
        });
        if !found {
            return Err(format!("the CUDA driver library is not installed ({})", why.join("; ")));
        }
        // SAFETY: culib() loads libcuda and resolves its symbols; it has no preconditions.
        std::panic::catch_unwind(|| unsafe {
            sys::culib();
        })
        .map_err(|p| {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            format!("libcuda is present but could not be loaded: {msg}")
        })
    });
    r.clone().map_err(|message| CudaError {
        call: "dlopen(libcuda)",
        code: None,
        message,
        log: None,
    })
}

/// [cuInit](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__INITIALIZE.html)
pub fn init() -> Result<(), CudaError> {
    load_driver()?;
    // SAFETY: the driver is loaded; cuInit takes flags only (must be 0).
    check("cuInit", unsafe { sys::cuInit(0) })
}

/// [cuDriverGetVersion](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__VERSION.html)
pub fn driver_version() -> Result<i32, CudaError> {
    let mut v = 0;
    // SAFETY: writes one int.
    check("cuDriverGetVersion", unsafe { sys::cuDriverGetVersion(&mut v) })?;
    Ok(v)
}

/// [cuDeviceGetCount](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__DEVICE.html)
pub fn device_count() -> Result<i32, CudaError> {
    let mut n = 0;
    // SAFETY: writes one int.
    check("cuDeviceGetCount", unsafe { sys::cuDeviceGetCount(&mut n) })?;
    Ok(n)
}

/// [cuDeviceGet](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__DEVICE.html)
pub fn device_get(ordinal: i32) -> Result<sys::CUdevice, CudaError> {
    let mut d = 0;
    // SAFETY: writes one device handle.
    check("cuDeviceGet", unsafe { sys::cuDeviceGet(&mut d, ordinal) })?;
    Ok(d)
}

/// [cuDeviceGetName](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__DEVICE.html)
pub fn device_name(d: sys::CUdevice) -> Result<String, CudaError> {
    let mut buf = [0 as std::ffi::c_char; 256];
    // SAFETY: the buffer holds 256 chars and the driver writes at most that, NUL included.
    check("cuDeviceGetName", unsafe { sys::cuDeviceGetName(buf.as_mut_ptr(), 256, d) })?;
    // SAFETY: the driver NUL-terminated the name inside the buffer.
    Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned())
}

/// [cuDeviceGetAttribute](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__DEVICE.html)
pub fn device_attribute(d: sys::CUdevice, a: sys::CUdevice_attribute) -> Result<i32, CudaError> {
    let mut v = 0;
    // SAFETY: writes one int.
    check("cuDeviceGetAttribute", unsafe { sys::cuDeviceGetAttribute(&mut v, a, d) })?;
    Ok(v)
}

/// [cuDevicePrimaryCtxRetain](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__PRIMARY__CTX.html)
pub fn primary_ctx_retain(d: sys::CUdevice) -> Result<sys::CUcontext, CudaError> {
    let mut c = std::ptr::null_mut();
    // SAFETY: writes one context handle; `d` came from cuDeviceGet.
    check("cuDevicePrimaryCtxRetain", unsafe { sys::cuDevicePrimaryCtxRetain(&mut c, d) })?;
    Ok(c)
}

/// [cuDevicePrimaryCtxRelease](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__PRIMARY__CTX.html)
///
/// # Safety
/// Balances one successful [`primary_ctx_retain`] of `d`.
pub unsafe fn primary_ctx_release(d: sys::CUdevice) -> Result<(), CudaError> {
    // SAFETY: per the caller's contract.
    check("cuDevicePrimaryCtxRelease", unsafe { sys::cuDevicePrimaryCtxRelease_v2(d) })
}

/// [cuCtxSetCurrent](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__CTX.html)
///
/// # Safety
/// `c` is a live context.
pub unsafe fn ctx_set_current(c: sys::CUcontext) -> Result<(), CudaError> {
    // SAFETY: per the caller's contract.
    check("cuCtxSetCurrent", unsafe { sys::cuCtxSetCurrent(c) })
}

/// [cuCtxSynchronize](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__CTX.html):
/// waits for all work of the current context.
///
/// # Safety
/// A context is current on this thread.
pub unsafe fn ctx_synchronize() -> Result<(), CudaError> {
    // SAFETY: per the caller's contract.
    check("cuCtxSynchronize", unsafe { sys::cuCtxSynchronize() })
}

/// [cuStreamCreate](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__STREAM.html)
///
/// # Safety
/// A context is current on this thread.
pub unsafe fn stream_create(flags: u32) -> Result<sys::CUstream, CudaError> {
    let mut s = std::ptr::null_mut();
    // SAFETY: writes one stream handle into the current context.
    check("cuStreamCreate", unsafe { sys::cuStreamCreate(&mut s, flags) })?;
    Ok(s)
}

/// [cuStreamDestroy](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__STREAM.html)
///
/// # Safety
/// `s` is a live stream no longer used.
pub unsafe fn stream_destroy(s: sys::CUstream) -> Result<(), CudaError> {
    // SAFETY: per the caller's contract.
    check("cuStreamDestroy", unsafe { sys::cuStreamDestroy_v2(s) })
}

/// [cuStreamSynchronize](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__STREAM.html)
///
/// # Safety
/// `s` is a live stream.
pub unsafe fn stream_synchronize(s: sys::CUstream) -> Result<(), CudaError> {
    // SAFETY: per the caller's contract.
    check("cuStreamSynchronize", unsafe { sys::cuStreamSynchronize(s) })
}

/// [cuMemAlloc](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__MEM.html)
///
/// # Safety
/// A context is current on this thread.
pub unsafe fn mem_alloc(bytes: usize) -> Result<sys::CUdeviceptr, CudaError> {
    let mut p = 0;
    // SAFETY: writes one device pointer; a zero-byte request is rounded up by the caller.
    check("cuMemAlloc", unsafe { sys::cuMemAlloc_v2(&mut p, bytes) })?;
    Ok(p)
}

/// [cuMemFree](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__MEM.html)
///
/// # Safety
/// `p` came from [`mem_alloc`] and nothing uses it any more.
pub unsafe fn mem_free(p: sys::CUdeviceptr) -> Result<(), CudaError> {
    // SAFETY: per the caller's contract.
    check("cuMemFree", unsafe { sys::cuMemFree_v2(p) })
}

/// [cuMemHostAlloc](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__MEM.html):
/// pinned host memory; with `CU_MEMHOSTALLOC_DEVICEMAP` in `flags`, mapped into the device's
/// address space.
///
/// # Safety
/// A context is current on this thread.
pub unsafe fn mem_host_alloc(bytes: usize, flags: u32) -> Result<*mut c_void, CudaError> {
    let mut p = std::ptr::null_mut();
    // SAFETY: writes one host pointer; a zero-byte request is rounded up by the caller.
    check("cuMemHostAlloc", unsafe { sys::cuMemHostAlloc(&mut p, bytes, flags) })?;
    Ok(p)
}

/// [cuMemHostGetDevicePointer](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__MEM.html):
/// the device address of mapped host memory.
///
/// # Safety
/// A context is current on this thread; `p` came from [`mem_host_alloc`] with
/// `CU_MEMHOSTALLOC_DEVICEMAP` and is live.
pub unsafe fn mem_host_get_device_pointer(p: *mut c_void) -> Result<sys::CUdeviceptr, CudaError> {
    let mut d = 0;
    // SAFETY: per the caller's contract; writes one device pointer (flags must be 0).
    check("cuMemHostGetDevicePointer", unsafe { sys::cuMemHostGetDevicePointer_v2(&mut d, p, 0) })?;
    Ok(d)
}

/// [cuMemFreeHost](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__MEM.html)
///
/// # Safety
/// `p` came from [`mem_host_alloc`] and nothing, host or device, uses it any more.
pub unsafe fn mem_free_host(p: *mut c_void) -> Result<(), CudaError> {
    // SAFETY: per the caller's contract.
    check("cuMemFreeHost", unsafe { sys::cuMemFreeHost(p) })
}

/// [cuMemsetD8Async](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__MEM.html)
///
/// # Safety
/// `p..p+bytes` is device memory of the current context; `s` is a live stream.
pub unsafe fn memset_d8_async(
    p: sys::CUdeviceptr,
    v: u8,
    bytes: usize,
    s: sys::CUstream,
) -> Result<(), CudaError> {
    // SAFETY: per the caller's contract.
    check("cuMemsetD8Async", unsafe { sys::cuMemsetD8Async(p, v, bytes, s) })
}

/// [cuMemcpyHtoDAsync](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__MEM.html)
///
/// # Safety
/// `dst` holds `src.len()` bytes; `src` stays alive and unchanged until `s` is synchronized.
pub unsafe fn memcpy_htod_async(
    dst: sys::CUdeviceptr,
    src: &[u8],
    s: sys::CUstream,
) -> Result<(), CudaError> {
    // SAFETY: per the caller's contract.
    check("cuMemcpyHtoDAsync", unsafe {
        sys::cuMemcpyHtoDAsync_v2(dst, src.as_ptr() as *const c_void, src.len(), s)
    })
}

/// [cuMemcpyDtoHAsync](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__MEM.html)
///
/// # Safety
/// `src` holds `dst.len()` bytes; `dst` stays alive and untouched until `s` is synchronized.
pub unsafe fn memcpy_dtoh_async(
    dst: &mut [u8],
    src: sys::CUdeviceptr,
    s: sys::CUstream,
) -> Result<(), CudaError> {
    // SAFETY: per the caller's contract.
    check("cuMemcpyDtoHAsync", unsafe {
        sys::cuMemcpyDtoHAsync_v2(dst.as_mut_ptr() as *mut c_void, src, dst.len(), s)
    })
}

/// [cuModuleLoadDataEx](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__MODULE.html),
/// with the JIT's error and info logs captured: a PTX that ptxas refuses comes back with
/// ptxas's message in [`CudaError::log`]. Returns the module and the info log.
///
/// # Safety
/// A context is current on this thread.
pub unsafe fn module_load_data_ex(image: &[u8]) -> Result<(sys::CUmodule, String), CudaError> {
    use sys::CUjit_option as O;
    const LOG: usize = 16 * 1024;
    let mut text = image.to_vec();
    if text.last() != Some(&0) {
        text.push(0);
    }
    let mut err_log = vec![0u8; LOG];
    let mut info_log = vec![0u8; LOG];
    let mut opts = [
        O::CU_JIT_ERROR_LOG_BUFFER,
        O::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        O::CU_JIT_INFO_LOG_BUFFER,
        O::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
        O::CU_JIT_LOG_VERBOSE,
    ];
    // Option values travel as pointers; sizes and flags are integers in pointer-sized slots.
    let int = std::ptr::without_provenance_mut::<c_void>;
    let mut vals: [*mut c_void; 5] = [
        err_log.as_mut_ptr() as *mut c_void,
        int(LOG),
        info_log.as_mut_ptr() as *mut c_void,
        int(LOG),
        int(1),
    ];
    let mut m = std::ptr::null_mut();
    // SAFETY: `text` is NUL-terminated PTX (or a cubin); both log buffers hold LOG bytes, as the
    // size options say; all three arrays outlive the call.
    let r = unsafe {
        sys::cuModuleLoadDataEx(
            &mut m,
            text.as_ptr() as *const c_void,
            opts.len() as u32,
            opts.as_mut_ptr(),
            vals.as_mut_ptr(),
        )
    };
    let cstr = |b: &[u8]| {
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        String::from_utf8_lossy(&b[..end]).into_owned()
    };
    match check("cuModuleLoadDataEx", r) {
        Ok(()) => Ok((m, cstr(&info_log))),
        Err(mut e) => {
            e.log = Some(cstr(&err_log));
            Err(e)
        }
    }
}

/// [cuModuleUnload](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__MODULE.html)
///
/// # Safety
/// `m` is a live module none of whose functions will run again.
pub unsafe fn module_unload(m: sys::CUmodule) -> Result<(), CudaError> {
    // SAFETY: per the caller's contract.
    check("cuModuleUnload", unsafe { sys::cuModuleUnload(m) })
}

/// [cuModuleGetFunction](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__MODULE.html)
///
/// # Safety
/// `m` is a live module.
pub unsafe fn module_get_function(
    m: sys::CUmodule,
    name: &str,
) -> Result<sys::CUfunction, CudaError> {
    let c = CString::new(name).map_err(|_| CudaError {
        call: "cuModuleGetFunction",
        code: None,
        message: format!("symbol `{name}` contains a NUL byte"),
        log: None,
    })?;
    let mut f = std::ptr::null_mut();
    // SAFETY: `c` is NUL-terminated; writes one function handle.
    check("cuModuleGetFunction", unsafe { sys::cuModuleGetFunction(&mut f, m, c.as_ptr()) })
        .map_err(|mut e| {
            e.message = format!("{} (symbol `{name}`)", e.message);
            e
        })?;
    Ok(f)
}

/// [cuFuncGetAttribute](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__EXEC.html)
///
/// # Safety
/// `f` belongs to a live module.
pub unsafe fn func_attribute(
    f: sys::CUfunction,
    a: sys::CUfunction_attribute,
) -> Result<i32, CudaError> {
    let mut v = 0;
    // SAFETY: writes one int.
    check("cuFuncGetAttribute", unsafe { sys::cuFuncGetAttribute(&mut v, a, f) })?;
    Ok(v)
}

/// [cuLaunchKernel](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__EXEC.html), or
/// with `overlap` or an L2 `window`
/// [cuLaunchKernelEx](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__EXEC.html) with
/// `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION` (a programmatic edge in a captured
/// graph) and `CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW` (kept by a captured node).
///
/// # Safety
/// `params` holds one pointer per kernel parameter, each to a value of that parameter's size,
/// alive for the call; buffer values are device pointers that stay valid until the kernel ends.
/// With `overlap`, the kernel waits (`griddepcontrol.wait`) before touching memory.
pub unsafe fn launch_kernel(
    f: sys::CUfunction,
    grid: [u32; 3],
    block: [u32; 3],
    s: sys::CUstream,
    params: &mut [*mut c_void],
    overlap: bool,
    window: Option<L2Window>,
) -> Result<(), CudaError> {
    if overlap || window.is_some() {
        let mut attrs: Vec<sys::CUlaunchAttribute> = Vec::with_capacity(2);
        if overlap {
            // SAFETY: a zeroed attribute is a valid plain-data value; the union's member is set.
            let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
            attr.id =
                sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
            attr.value.programmaticStreamSerializationAllowed = 1;
            attrs.push(attr);
        }
        if let Some(w) = window {
            let prop = |a: L2Access| match a {
                L2Access::Normal => sys::CUaccessProperty::CU_ACCESS_PROPERTY_NORMAL,
                L2Access::Streaming => sys::CUaccessProperty::CU_ACCESS_PROPERTY_STREAMING,
                L2Access::Persisting => sys::CUaccessProperty::CU_ACCESS_PROPERTY_PERSISTING,
            };
            // SAFETY: as above.
            let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
            attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
            attr.value.accessPolicyWindow = sys::CUaccessPolicyWindow {
                base_ptr: w.base as *mut c_void,
                num_bytes: w.bytes as usize,
                hitRatio: w.hit_ratio,
                hitProp: prop(w.hit),
                missProp: prop(w.miss),
            };
            attrs.push(attr);
        }
        let config = sys::CUlaunchConfig {
            gridDimX: grid[0],
            gridDimY: grid[1],
            gridDimZ: grid[2],
            blockDimX: block[0],
            blockDimY: block[1],
            blockDimZ: block[2],
            sharedMemBytes: 0,
            hStream: s,
            attrs: attrs.as_mut_ptr(),
            numAttrs: attrs.len() as u32,
        };
        // SAFETY: per the caller's contract; `config` and `attrs` outlive the call.
        return check("cuLaunchKernelEx", unsafe {
            sys::cuLaunchKernelEx(&config, f, params.as_mut_ptr(), std::ptr::null_mut())
        });
    }
    // SAFETY: per the caller's contract; no dynamic shared memory, no `extra`.
    check("cuLaunchKernel", unsafe {
        sys::cuLaunchKernel(
            f,
            grid[0],
            grid[1],
            grid[2],
            block[0],
            block[1],
            block[2],
            0,
            s,
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    })
}

/// [cuCtxSetLimit](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__CTX.html).
///
/// # Safety
/// A context is current.
pub unsafe fn ctx_set_limit(limit: sys::CUlimit, value: usize) -> Result<(), CudaError> {
    // SAFETY: per the caller's contract.
    check("cuCtxSetLimit", unsafe { sys::cuCtxSetLimit(limit, value) })
}

/// [cuCtxResetPersistingL2Cache](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__CTX.html):
/// every persisting line back to normal.
///
/// # Safety
/// A context is current.
pub unsafe fn ctx_reset_persisting_l2() -> Result<(), CudaError> {
    // SAFETY: per the caller's contract.
    check("cuCtxResetPersistingL2Cache", unsafe { sys::cuCtxResetPersistingL2Cache() })
}

/// [cuEventCreate](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__EVENT.html)
///
/// # Safety
/// A context is current on this thread.
pub unsafe fn event_create() -> Result<sys::CUevent, CudaError> {
    let mut e = std::ptr::null_mut();
    // SAFETY: writes one event handle; default flags (timing enabled).
    check("cuEventCreate", unsafe { sys::cuEventCreate(&mut e, 0) })?;
    Ok(e)
}

/// [cuEventRecord](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__EVENT.html)
///
/// # Safety
/// `e` and `s` are live and of the same context.
pub unsafe fn event_record(e: sys::CUevent, s: sys::CUstream) -> Result<(), CudaError> {
    // SAFETY: per the caller's contract.
    check("cuEventRecord", unsafe { sys::cuEventRecord(e, s) })
}

/// [cuEventSynchronize](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__EVENT.html)
///
/// # Safety
/// `e` is live.
pub unsafe fn event_synchronize(e: sys::CUevent) -> Result<(), CudaError> {
    // SAFETY: per the caller's contract.
    check("cuEventSynchronize", unsafe { sys::cuEventSynchronize(e) })
}

/// [cuEventElapsedTime](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__EVENT.html)
///
/// # Safety
/// Both events are live and have completed.
pub unsafe fn event_elapsed_ms(start: sys::CUevent, end: sys::CUevent) -> Result<f32, CudaError> {
    let mut ms = 0f32;
    // SAFETY: per the caller's contract; writes one float.
    check("cuEventElapsedTime", unsafe { sys::cuEventElapsedTime(&mut ms, start, end) })?;
    Ok(ms)
}

/// [cuEventDestroy](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__EVENT.html)
///
/// # Safety
/// `e` is live and not used again.
pub unsafe fn event_destroy(e: sys::CUevent) -> Result<(), CudaError> {
    // SAFETY: per the caller's contract.
    check("cuEventDestroy", unsafe { sys::cuEventDestroy_v2(e) })
}

/// [cuStreamBeginCapture](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__STREAM.html),
/// thread-local mode: other threads may allocate and copy while this one captures.
///
/// # Safety
/// `s` is a live stream that is not the legacy default stream.
pub unsafe fn stream_begin_capture(s: sys::CUstream) -> Result<(), CudaError> {
    // SAFETY: per the caller's contract.
    check("cuStreamBeginCapture", unsafe {
        sys::cuStreamBeginCapture_v2(
            s,
            sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
        )
    })
}

/// [cuStreamEndCapture](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__STREAM.html)
///
/// # Safety
/// `s` is capturing, begun on this thread.
pub unsafe fn stream_end_capture(s: sys::CUstream) -> Result<sys::CUgraph, CudaError> {
    let mut g = std::ptr::null_mut();
    // SAFETY: per the caller's contract; writes one graph handle (null if capture failed).
    check("cuStreamEndCapture", unsafe { sys::cuStreamEndCapture(s, &mut g) })?;
    Ok(g)
}

/// The node the last captured operation on `s` became: after one kernel launch on a stream
/// capturing alone, the capture's dependency set is exactly that kernel's node.
/// [cuStreamGetCaptureInfo](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__STREAM.html)
///
/// # Safety
/// `s` is capturing.
pub unsafe fn stream_capture_last_node(s: sys::CUstream) -> Result<sys::CUgraphNode, CudaError> {
    let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    let mut id = 0;
    let mut graph = std::ptr::null_mut();
    let mut deps: *const sys::CUgraphNode = std::ptr::null();
    let mut n = 0usize;
    // SAFETY: writes the status, id, graph, a pointer to the driver's dependency array (valid
    // until the next capture call on `s`) and its length.
    check("cuStreamGetCaptureInfo", unsafe {
        sys::cuStreamGetCaptureInfo_v2(s, &mut status, &mut id, &mut graph, &mut deps, &mut n)
    })?;
    if status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE || n != 1 {
        return Err(CudaError {
            call: "cuStreamGetCaptureInfo",
            code: None,
            message: format!(
                "expected an active capture ending in one node, found {status:?} with {n} nodes"
            ),
            log: None,
        });
    }
    // SAFETY: `deps` points to `n == 1` node handles.
    Ok(unsafe { *deps })
}

/// [cuGraphInstantiateWithFlags](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__GRAPH.html)
///
/// # Safety
/// `g` is a live graph.
pub unsafe fn graph_instantiate(g: sys::CUgraph) -> Result<sys::CUgraphExec, CudaError> {
    let mut e = std::ptr::null_mut();
    // SAFETY: writes one executable graph handle.
    check("cuGraphInstantiateWithFlags", unsafe {
        sys::cuGraphInstantiateWithFlags(&mut e, g, 0)
    })?;
    Ok(e)
}

/// [cuGraphExecKernelNodeSetParams](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__GRAPH.html):
/// the next launches of `exec` run `node` with these parameters (the driver copies them).
///
/// # Safety
/// `node` is a kernel node of the graph `exec` was instantiated from; `p.kernelParams` points
/// to one value per kernel parameter, alive for the call.
pub unsafe fn graph_exec_kernel_node_set_params(
    exec: sys::CUgraphExec,
    node: sys::CUgraphNode,
    p: &sys::CUDA_KERNEL_NODE_PARAMS_v2,
) -> Result<(), CudaError> {
    // SAFETY: per the caller's contract.
    check("cuGraphExecKernelNodeSetParams", unsafe {
        sys::cuGraphExecKernelNodeSetParams_v2(exec, node, p)
    })
}

/// [cuGraphLaunch](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__GRAPH.html)
///
/// # Safety
/// `exec` and `s` are live, of one context.
pub unsafe fn graph_launch(exec: sys::CUgraphExec, s: sys::CUstream) -> Result<(), CudaError> {
    // SAFETY: per the caller's contract.
    check("cuGraphLaunch", unsafe { sys::cuGraphLaunch(exec, s) })
}

/// [cuGraphExecDestroy](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__GRAPH.html)
///
/// # Safety
/// `exec` is live and not launched again.
pub unsafe fn graph_exec_destroy(exec: sys::CUgraphExec) -> Result<(), CudaError> {
    // SAFETY: per the caller's contract.
    check("cuGraphExecDestroy", unsafe { sys::cuGraphExecDestroy(exec) })
}

/// [cuGraphDestroy](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__GRAPH.html)
///
/// # Safety
/// `g` is live and not used again.
pub unsafe fn graph_destroy(g: sys::CUgraph) -> Result<(), CudaError> {
    // SAFETY: per the caller's contract.
    check("cuGraphDestroy", unsafe { sys::cuGraphDestroy(g) })
}
