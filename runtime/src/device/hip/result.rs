//! The thin layer over [`super::sys`]: one function per HIP call, returning `Result`. Each links
//! the HIP runtime API reference, where the call is documented under its name.

use super::sys::{self, Handle};
use std::ffi::{c_void, CStr, CString};
use std::fmt;

/// A failed HIP call.
#[derive(Clone, Debug)]
pub struct HipError {
    /// The HIP function.
    pub call: &'static str,
    /// The result code (`None` when the library itself could not be loaded).
    pub code: Option<i32>,
    /// The runtime's name and description of the code.
    pub message: String,
}

impl fmt::Display for HipError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.code {
            Some(c) => write!(f, "{} failed with {c}: {}", self.call, self.message),
            None => write!(f, "{}: {}", self.call, self.message),
        }
    }
}

impl std::error::Error for HipError {}

fn api(call: &'static str) -> Result<&'static sys::Api, HipError> {
    sys::api().map_err(|message| HipError { call, code: None, message })
}

fn check(call: &'static str, r: sys::hipError_t) -> Result<(), HipError> {
    if r == sys::hipSuccess {
        return Ok(());
    }
    let a = api(call)?;
    // SAFETY: both return pointers to static NUL-terminated strings (or null).
    let text = |p: *const std::ffi::c_char| unsafe {
        if p.is_null() {
            String::from("?")
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    };
    // SAFETY: plain lookups of the code's name and description.
    let (name, desc) = unsafe { (text((a.hipGetErrorName)(r)), text((a.hipGetErrorString)(r))) };
    Err(HipError { call, code: Some(r), message: format!("{name} ({desc})") })
}

/// [hipInit](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
pub fn init() -> Result<(), HipError> {
    let a = api("dlopen(libamdhip64)")?;
    // SAFETY: flags must be 0.
    check("hipInit", unsafe { (a.hipInit)(0) })
}

/// [hipGetDeviceCount](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
pub fn device_count() -> Result<i32, HipError> {
    let mut n = 0;
    // SAFETY: writes one int.
    check("hipGetDeviceCount", unsafe { (api("hipGetDeviceCount")?.hipGetDeviceCount)(&mut n) })?;
    Ok(n)
}

/// [hipSetDevice](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html):
/// makes `d` the calling thread's device.
pub fn set_device(d: i32) -> Result<(), HipError> {
    // SAFETY: any ordinal is accepted and checked by the runtime.
    check("hipSetDevice", unsafe { (api("hipSetDevice")?.hipSetDevice)(d) })
}

/// [hipDeviceGetAttribute](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
pub fn device_attribute(d: i32, attr: i32) -> Result<i32, HipError> {
    let mut v = 0;
    // SAFETY: writes one int.
    check("hipDeviceGetAttribute", unsafe {
        (api("hipDeviceGetAttribute")?.hipDeviceGetAttribute)(&mut v, attr, d)
    })?;
    Ok(v)
}

/// [hipDeviceGetName](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
pub fn device_name(d: i32) -> Result<String, HipError> {
    let mut buf = [0 as std::ffi::c_char; 256];
    // SAFETY: the buffer holds 256 chars, as passed.
    check("hipDeviceGetName", unsafe {
        (api("hipDeviceGetName")?.hipDeviceGetName)(buf.as_mut_ptr(), 256, d)
    })?;
    // SAFETY: NUL-terminated within the buffer (it was zeroed and is longer than any name).
    Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned())
}

/// [hipDeviceGetPCIBusId](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html):
/// `dddd:bb:dd.f`.
pub fn pci_bus_id(d: i32) -> Result<String, HipError> {
    let mut buf = [0 as std::ffi::c_char; 64];
    // SAFETY: the buffer holds 64 chars, as passed.
    check("hipDeviceGetPCIBusId", unsafe {
        (api("hipDeviceGetPCIBusId")?.hipDeviceGetPCIBusId)(buf.as_mut_ptr(), 64, d)
    })?;
    buf[63] = 0;
    // SAFETY: NUL-terminated within the buffer (last byte forced to 0).
    Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned())
}

/// [hipMalloc](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
pub fn malloc(bytes: usize) -> Result<Handle, HipError> {
    let mut p = std::ptr::null_mut();
    // SAFETY: writes one pointer.
    check("hipMalloc", unsafe { (api("hipMalloc")?.hipMalloc)(&mut p, bytes) })?;
    Ok(p)
}

/// [hipFree](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
///
/// # Safety
/// `p` came from [`malloc`] and is not used again.
pub unsafe fn free(p: Handle) -> Result<(), HipError> {
    // SAFETY: per the caller's contract.
    check("hipFree", unsafe { (api("hipFree")?.hipFree)(p) })
}

/// [hipHostMalloc](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
/// with `hipHostMallocMapped`: pinned host memory mapped into the devices' address space.
pub fn host_malloc_mapped(bytes: usize) -> Result<Handle, HipError> {
    let mut p = std::ptr::null_mut();
    // SAFETY: writes one pointer.
    check("hipHostMalloc", unsafe {
        (api("hipHostMalloc")?.hipHostMalloc)(&mut p, bytes, sys::hipHostMallocMapped)
    })?;
    Ok(p)
}

/// [hipHostGetDevicePointer](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
///
/// # Safety
/// `p` came from [`host_malloc_mapped`] and is live.
pub unsafe fn host_get_device_pointer(p: Handle) -> Result<Handle, HipError> {
    let mut d = std::ptr::null_mut();
    // SAFETY: per the caller's contract; writes one pointer (flags must be 0).
    check("hipHostGetDevicePointer", unsafe {
        (api("hipHostGetDevicePointer")?.hipHostGetDevicePointer)(&mut d, p, 0)
    })?;
    Ok(d)
}

/// [hipHostFree](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
/// (it synchronizes the device first).
///
/// # Safety
/// `p` came from [`host_malloc_mapped`] and is not used again.
pub unsafe fn host_free(p: Handle) -> Result<(), HipError> {
    // SAFETY: per the caller's contract.
    check("hipHostFree", unsafe { (api("hipHostFree")?.hipHostFree)(p) })
}

/// [hipMemsetAsync](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
///
/// # Safety
/// `p` holds `bytes` bytes; `s` is live.
pub unsafe fn memset_async(p: Handle, v: u8, bytes: usize, s: Handle) -> Result<(), HipError> {
    // SAFETY: per the caller's contract.
    check("hipMemsetAsync", unsafe {
        (api("hipMemsetAsync")?.hipMemsetAsync)(p, v as i32, bytes, s)
    })
}

/// [hipMemcpyHtoDAsync](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
///
/// # Safety
/// `dst` holds `src.len()` bytes; `src` lives until `s` is synchronized.
pub unsafe fn memcpy_htod_async(dst: Handle, src: &[u8], s: Handle) -> Result<(), HipError> {
    // SAFETY: per the caller's contract; HIP does not write through `src`.
    check("hipMemcpyHtoDAsync", unsafe {
        (api("hipMemcpyHtoDAsync")?.hipMemcpyHtoDAsync)(
            dst,
            src.as_ptr() as *mut c_void,
            src.len(),
            s,
        )
    })
}

/// [hipMemcpyDtoHAsync](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
///
/// # Safety
/// `src` holds `dst.len()` bytes; `dst` is untouched until `s` is synchronized.
pub unsafe fn memcpy_dtoh_async(dst: &mut [u8], src: Handle, s: Handle) -> Result<(), HipError> {
    // SAFETY: per the caller's contract.
    check("hipMemcpyDtoHAsync", unsafe {
        (api("hipMemcpyDtoHAsync")?.hipMemcpyDtoHAsync)(
            dst.as_mut_ptr() as *mut c_void,
            src,
            dst.len(),
            s,
        )
    })
}

/// [hipStreamCreateWithFlags](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
pub fn stream_create_non_blocking() -> Result<Handle, HipError> {
    let mut s = std::ptr::null_mut();
    // SAFETY: writes one stream handle on the current device.
    check("hipStreamCreateWithFlags", unsafe {
        (api("hipStreamCreateWithFlags")?.hipStreamCreateWithFlags)(
            &mut s,
            sys::hipStreamNonBlocking,
        )
    })?;
    Ok(s)
}

/// [hipStreamDestroy](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
///
/// # Safety
/// `s` is live and not used again.
pub unsafe fn stream_destroy(s: Handle) -> Result<(), HipError> {
    // SAFETY: per the caller's contract.
    check("hipStreamDestroy", unsafe { (api("hipStreamDestroy")?.hipStreamDestroy)(s) })
}

/// [hipStreamSynchronize](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
///
/// # Safety
/// `s` is live.
pub unsafe fn stream_synchronize(s: Handle) -> Result<(), HipError> {
    // SAFETY: per the caller's contract.
    check("hipStreamSynchronize", unsafe { (api("hipStreamSynchronize")?.hipStreamSynchronize)(s) })
}

/// [hipModuleLoadData](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
pub fn module_load_data(image: &[u8]) -> Result<Handle, HipError> {
    let mut m = std::ptr::null_mut();
    // SAFETY: `image` is a code object in memory, alive for the call (HIP copies it).
    check("hipModuleLoadData", unsafe {
        (api("hipModuleLoadData")?.hipModuleLoadData)(&mut m, image.as_ptr() as *const c_void)
    })?;
    Ok(m)
}

/// [hipModuleUnload](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
///
/// # Safety
/// `m` is live and none of its functions runs again.
pub unsafe fn module_unload(m: Handle) -> Result<(), HipError> {
    // SAFETY: per the caller's contract.
    check("hipModuleUnload", unsafe { (api("hipModuleUnload")?.hipModuleUnload)(m) })
}

/// [hipModuleGetFunction](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
///
/// # Safety
/// `m` is live.
pub unsafe fn module_get_function(m: Handle, name: &str) -> Result<Handle, HipError> {
    let c = CString::new(name).map_err(|_| HipError {
        call: "hipModuleGetFunction",
        code: None,
        message: format!("symbol `{name}` contains a NUL byte"),
    })?;
    let mut f = std::ptr::null_mut();
    // SAFETY: `c` is NUL-terminated; writes one handle.
    check("hipModuleGetFunction", unsafe {
        (api("hipModuleGetFunction")?.hipModuleGetFunction)(&mut f, m, c.as_ptr())
    })?;
    Ok(f)
}

/// [hipFuncGetAttribute](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
///
/// # Safety
/// `f` belongs to a live module.
pub unsafe fn func_attribute(f: Handle, attr: i32) -> Result<i32, HipError> {
    let mut v = 0;
    // SAFETY: writes one int.
    check("hipFuncGetAttribute", unsafe {
        (api("hipFuncGetAttribute")?.hipFuncGetAttribute)(&mut v, attr, f)
    })?;
    Ok(v)
}

/// [hipModuleLaunchKernel](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
///
/// # Safety
/// `params` holds one pointer per kernel parameter to a value of its size; buffer values are
/// device pointers valid until the kernel ends.
pub unsafe fn launch_kernel(
    f: Handle,
    grid: [u32; 3],
    block: [u32; 3],
    s: Handle,
    params: &mut [*mut c_void],
) -> Result<(), HipError> {
    // SAFETY: per the caller's contract.
    check("hipModuleLaunchKernel", unsafe {
        (api("hipModuleLaunchKernel")?.hipModuleLaunchKernel)(
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

/// [hipEventCreate](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
/// followed by [hipEventRecord](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html) on `s`.
///
/// # Safety
/// `s` is live.
pub unsafe fn event_create_record(s: Handle) -> Result<Handle, HipError> {
    let a = api("hipEventCreate")?;
    let mut e = std::ptr::null_mut();
    // SAFETY: writes one handle; then records it on the live stream.
    unsafe {
        check("hipEventCreate", (a.hipEventCreate)(&mut e))?;
        if let Err(err) = check("hipEventRecord", (a.hipEventRecord)(e, s)) {
            (a.hipEventDestroy)(e);
            return Err(err);
        }
    }
    Ok(e)
}

/// [hipEventSynchronize](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
/// on `end`, then [hipEventElapsedTime](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html).
///
/// # Safety
/// Both events are live and were recorded.
pub unsafe fn event_elapsed_ms(start: Handle, end: Handle) -> Result<f32, HipError> {
    let a = api("hipEventElapsedTime")?;
    let mut ms = 0f32;
    // SAFETY: per the caller's contract.
    unsafe {
        check("hipEventSynchronize", (a.hipEventSynchronize)(end))?;
        check("hipEventElapsedTime", (a.hipEventElapsedTime)(&mut ms, start, end))?;
    }
    Ok(ms)
}

/// [hipEventDestroy](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
///
/// # Safety
/// `e` is live and not used again.
pub unsafe fn event_destroy(e: Handle) -> Result<(), HipError> {
    // SAFETY: per the caller's contract.
    check("hipEventDestroy", unsafe { (api("hipEventDestroy")?.hipEventDestroy)(e) })
}

/// [hipStreamBeginCapture](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html), thread-local mode.
///
/// # Safety
/// `s` is a live created stream.
pub unsafe fn stream_begin_capture(s: Handle) -> Result<(), HipError> {
    // SAFETY: per the caller's contract.
    check("hipStreamBeginCapture", unsafe {
        (api("hipStreamBeginCapture")?.hipStreamBeginCapture)(
            s,
            sys::hipStreamCaptureModeThreadLocal,
        )
    })
}

/// [hipStreamEndCapture](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
///
/// # Safety
/// `s` is capturing, begun on this thread.
pub unsafe fn stream_end_capture(s: Handle) -> Result<Handle, HipError> {
    let mut g = std::ptr::null_mut();
    // SAFETY: per the caller's contract; writes one graph handle.
    check("hipStreamEndCapture", unsafe {
        (api("hipStreamEndCapture")?.hipStreamEndCapture)(s, &mut g)
    })?;
    Ok(g)
}

/// The node of the last captured launch, from the capture's dependency set:
/// [hipStreamGetCaptureInfo_v2](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html).
///
/// # Safety
/// `s` is capturing.
pub unsafe fn stream_capture_last_node(s: Handle) -> Result<Handle, HipError> {
    let (mut status, mut id, mut graph) = (0i32, 0u64, std::ptr::null_mut());
    let (mut deps, mut n): (*const Handle, usize) = (std::ptr::null(), 0);
    // SAFETY: writes the status, id, graph, a pointer to the runtime's dependency array and its
    // length.
    check("hipStreamGetCaptureInfo_v2", unsafe {
        (api("hipStreamGetCaptureInfo_v2")?.hipStreamGetCaptureInfo_v2)(
            s,
            &mut status,
            &mut id,
            &mut graph,
            &mut deps,
            &mut n,
        )
    })?;
    if status != sys::hipStreamCaptureStatusActive || n != 1 || deps.is_null() {
        return Err(HipError {
            call: "hipStreamGetCaptureInfo_v2",
            code: None,
            message: format!("expected an active capture ending in one node, found status {status} with {n} nodes"),
        });
    }
    // SAFETY: `deps` points to `n == 1` handles.
    Ok(unsafe { *deps })
}

/// [hipGraphInstantiate](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
///
/// # Safety
/// `g` is a live graph.
pub unsafe fn graph_instantiate(g: Handle) -> Result<Handle, HipError> {
    let mut e = std::ptr::null_mut();
    // SAFETY: writes one handle; no error node or log requested.
    check("hipGraphInstantiate", unsafe {
        (api("hipGraphInstantiate")?.hipGraphInstantiate)(
            &mut e,
            g,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        )
    })?;
    Ok(e)
}

/// [hipGraphExecKernelNodeSetParams](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
///
/// # Safety
/// `node` is a kernel node of the graph `exec` came from; `p.kernelParams` holds one pointer per
/// parameter, alive for the call.
pub unsafe fn graph_exec_kernel_node_set_params(
    exec: Handle,
    node: Handle,
    p: &sys::hipKernelNodeParams,
) -> Result<(), HipError> {
    // SAFETY: per the caller's contract.
    check("hipGraphExecKernelNodeSetParams", unsafe {
        (api("hipGraphExecKernelNodeSetParams")?.hipGraphExecKernelNodeSetParams)(exec, node, p)
    })
}

/// [hipGraphLaunch](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
///
/// # Safety
/// `exec` and `s` are live.
pub unsafe fn graph_launch(exec: Handle, s: Handle) -> Result<(), HipError> {
    // SAFETY: per the caller's contract.
    check("hipGraphLaunch", unsafe { (api("hipGraphLaunch")?.hipGraphLaunch)(exec, s) })
}

/// [hipGraphExecDestroy](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html)
/// and [hipGraphDestroy](https://rocm.docs.amd.com/projects/HIP/en/latest/reference/hip_runtime_api_reference.html).
///
/// # Safety
/// Both are live and not used again (`exec` may be null).
pub unsafe fn graph_destroy(exec: Handle, g: Handle) -> Result<(), HipError> {
    let a = api("hipGraphDestroy")?;
    // SAFETY: per the caller's contract.
    unsafe {
        if !exec.is_null() {
            check("hipGraphExecDestroy", (a.hipGraphExecDestroy)(exec))?;
        }
        check("hipGraphDestroy", (a.hipGraphDestroy)(g))
    }
}
