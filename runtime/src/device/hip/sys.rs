//! Raw FFI to the HIP runtime (libamdhip64), loaded at run time: the few functions kiln uses,
//! declared by hand. Values and layouts are checked against Debian's ROCm 5.2 headers
//! (`libamdhip64-dev`); the symbols used have kept their ABI since.
#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals)]

use std::ffi::{c_char, c_void};
use std::sync::OnceLock;

/// `hipError_t`.
pub type hipError_t = i32;
/// Any opaque HIP handle (stream, module, function, event, graph, node) or device pointer.
pub type Handle = *mut c_void;

/// `hipSuccess`.
pub const hipSuccess: hipError_t = 0;
/// `hipErrorNoDevice`.
pub const hipErrorNoDevice: hipError_t = 100;
/// `hipErrorInvalidDevice` (what `hipInit` returns on a machine without an AMD GPU).
pub const hipErrorInvalidDevice: hipError_t = 101;
/// `hipDeviceAttributeMaxThreadsPerBlock`.
pub const hipDeviceAttributeMaxThreadsPerBlock: i32 = 56;
/// `hipDeviceAttributeMaxSharedMemoryPerBlock`.
pub const hipDeviceAttributeMaxSharedMemoryPerBlock: i32 = 74;
/// `hipDeviceAttributeWarpSize`.
pub const hipDeviceAttributeWarpSize: i32 = 87;
/// `HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`.
pub const HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: i32 = 0;
/// `hipStreamNonBlocking`.
pub const hipStreamNonBlocking: u32 = 1;
/// `hipStreamCaptureModeThreadLocal`.
pub const hipStreamCaptureModeThreadLocal: i32 = 1;
/// `hipStreamCaptureStatusActive`.
pub const hipStreamCaptureStatusActive: i32 = 1;
/// `hipHostMallocMapped`.
pub const hipHostMallocMapped: u32 = 0x2;
/// `dim3`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dim3 {
    /// x
    pub x: u32,
    /// y
    pub y: u32,
    /// z
    pub z: u32,
}

/// `hipKernelNodeParams` (64 bytes: blockDim 0, extra 16, func 24, gridDim 32,
/// kernelParams 48, sharedMemBytes 56).
#[repr(C)]
#[derive(Debug)]
pub struct hipKernelNodeParams {
    /// Workgroup size.
    pub blockDim: dim3,
    /// Unused (null).
    pub extra: *mut *mut c_void,
    /// The function.
    pub func: *mut c_void,
    /// Grid in workgroups.
    pub gridDim: dim3,
    /// One pointer per parameter.
    pub kernelParams: *mut *mut c_void,
    /// Dynamic LDS bytes.
    pub sharedMemBytes: u32,
}

const _: () = assert!(std::mem::size_of::<hipKernelNodeParams>() == 64);
const _: () = assert!(std::mem::offset_of!(hipKernelNodeParams, func) == 24);
const _: () = assert!(std::mem::offset_of!(hipKernelNodeParams, kernelParams) == 48);

macro_rules! api {
    ($($name:ident: fn($($arg:ty),*) -> $ret:ty;)*) => {
        /// The resolved entry points; the library stays loaded while this lives (forever).
        pub struct Api {
            _lib: libloading::Library,
            $(
                #[doc = concat!("`", stringify!($name), "`")]
                pub $name: unsafe extern "C" fn($($arg),*) -> $ret,
            )*
        }

        impl Api {
            /// # Safety
            /// `lib` is a HIP runtime whose symbols have the signatures declared here.
            unsafe fn resolve(lib: libloading::Library) -> Result<Api, String> {
                $(
                    // SAFETY: per the caller's contract the symbol has this signature; the
                    // pointer stays valid while `_lib` keeps the library loaded.
                    let $name = unsafe {
                        *lib.get::<unsafe extern "C" fn($($arg),*) -> $ret>(
                            concat!(stringify!($name), "\0").as_bytes(),
                        )
                        .map_err(|e| format!("{}: {e}", stringify!($name)))?
                    };
                )*
                Ok(Api { _lib: lib, $($name,)* })
            }
        }
    };
}

api! {
    hipInit: fn(u32) -> hipError_t;
    hipGetDeviceCount: fn(*mut i32) -> hipError_t;
    hipSetDevice: fn(i32) -> hipError_t;
    hipDeviceGetAttribute: fn(*mut i32, i32, i32) -> hipError_t;
    hipDeviceGetName: fn(*mut c_char, i32, i32) -> hipError_t;
    hipDeviceGetPCIBusId: fn(*mut c_char, i32, i32) -> hipError_t;
    hipGetErrorName: fn(hipError_t) -> *const c_char;
    hipGetErrorString: fn(hipError_t) -> *const c_char;
    hipMalloc: fn(*mut Handle, usize) -> hipError_t;
    hipFree: fn(Handle) -> hipError_t;
    hipHostMalloc: fn(*mut Handle, usize, u32) -> hipError_t;
    hipHostGetDevicePointer: fn(*mut Handle, Handle, u32) -> hipError_t;
    hipHostFree: fn(Handle) -> hipError_t;
    hipMemsetAsync: fn(Handle, i32, usize, Handle) -> hipError_t;
    hipMemcpyHtoDAsync: fn(Handle, *mut c_void, usize, Handle) -> hipError_t;
    hipMemcpyDtoHAsync: fn(*mut c_void, Handle, usize, Handle) -> hipError_t;
    hipStreamCreateWithFlags: fn(*mut Handle, u32) -> hipError_t;
    hipStreamDestroy: fn(Handle) -> hipError_t;
    hipStreamSynchronize: fn(Handle) -> hipError_t;
    hipModuleLoadData: fn(*mut Handle, *const c_void) -> hipError_t;
    hipModuleUnload: fn(Handle) -> hipError_t;
    hipModuleGetFunction: fn(*mut Handle, Handle, *const c_char) -> hipError_t;
    hipFuncGetAttribute: fn(*mut i32, i32, Handle) -> hipError_t;
    hipModuleLaunchKernel: fn(
        Handle, u32, u32, u32, u32, u32, u32, u32, Handle, *mut *mut c_void, *mut *mut c_void
    ) -> hipError_t;
    hipEventCreate: fn(*mut Handle) -> hipError_t;
    hipEventRecord: fn(Handle, Handle) -> hipError_t;
    hipEventSynchronize: fn(Handle) -> hipError_t;
    hipEventElapsedTime: fn(*mut f32, Handle, Handle) -> hipError_t;
    hipEventDestroy: fn(Handle) -> hipError_t;
    hipStreamBeginCapture: fn(Handle, i32) -> hipError_t;
    hipStreamEndCapture: fn(Handle, *mut Handle) -> hipError_t;
    hipStreamGetCaptureInfo_v2: fn(
        Handle, *mut i32, *mut u64, *mut Handle, *mut *const Handle, *mut usize
    ) -> hipError_t;
    hipGraphInstantiate: fn(*mut Handle, Handle, *mut Handle, *mut c_char, usize) -> hipError_t;
    hipGraphLaunch: fn(Handle, Handle) -> hipError_t;
    hipGraphExecKernelNodeSetParams: fn(Handle, Handle, *const hipKernelNodeParams) -> hipError_t;
    hipGraphExecDestroy: fn(Handle) -> hipError_t;
    hipGraphDestroy: fn(Handle) -> hipError_t;
}

/// The HIP runtime, loaded once; `Err` says why it is not there.
pub fn api() -> Result<&'static Api, String> {
    static API: OnceLock<Result<Api, String>> = OnceLock::new();
    API.get_or_init(|| {
        let mut why = vec![];
        for name in ["libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"] {
            // SAFETY: loading the HIP runtime runs its initializers, as for any HIP program.
            match unsafe { libloading::Library::new(name) } {
                // SAFETY: a libamdhip64 exports these functions with these C signatures.
                Ok(lib) => return unsafe { Api::resolve(lib) },
                Err(e) => why.push(e.to_string()),
            }
        }
        Err(format!("the HIP runtime (libamdhip64) is not installed ({})", why.join("; ")))
    })
    .as_ref()
    .map_err(Clone::clone)
}
