// Device glue for the GPU runtimes that this build includes (CONVBWD_HAVE_CUDA / _OPENCL /
// _AMDGPU; amdgpu: HIP device addresses, runtime/src/amdgpu/halide_glue.h).
// CUDA: Halide's context and stream hooks return the caller's current context and the stream
// of the call (exec.stream). OpenCL: the command queue of the call and its context.
#include "device_glue.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

#ifdef CONVBWD_HAVE_CUDA
#include "HalideRuntimeCuda.h"
#endif
#ifdef CONVBWD_HAVE_OPENCL
#include "HalideRuntimeOpenCL.h"
#endif
#ifdef CONVBWD_HAVE_AMDGPU
#include "runtime/src/amdgpu/halide_glue.h"
#endif

namespace convbwd {

namespace {

void *load_symbol(const char *const *libs, const char *name) {
    for (const char *const *lib = libs; *lib; ++lib)
        if (void *h = dlopen(*lib, RTLD_LAZY | RTLD_GLOBAL))
            if (void *f = dlsym(h, name)) return f;
    return nullptr;
}

#ifdef CONVBWD_HAVE_CUDA
const char *const kCudaLibs[] = {"libcuda.so.1", "libcuda.so", nullptr};

// The caller's current CUDA context (the runtime API's primary context after cudaSetDevice or
// any allocation); if the thread has none, device 0's primary context is made current.
int acquire_cuda_context(void *user_context, void **ctx, bool) {
    using GetCurrent = int (*)(void **);
    using Retain = int (*)(void **, int);
    using SetCurrent = int (*)(void *);
    static auto get_current = (GetCurrent)load_symbol(kCudaLibs, "cuCtxGetCurrent");
    static auto retain = (Retain)load_symbol(kCudaLibs, "cuDevicePrimaryCtxRetain");
    static auto set_current = (SetCurrent)load_symbol(kCudaLibs, "cuCtxSetCurrent");
    auto *call = static_cast<CallContext *>(user_context);
    if (!get_current || !retain || !set_current) {
        if (call) call->error += "libcuda.so.1 not found (no NVIDIA driver)";
        return -1;
    }
    if (get_current(ctx) != 0) return -1;
    if (*ctx) return 0;
    if (retain(ctx, 0) != 0 || set_current(*ctx) != 0) {
        if (call) call->error += "no CUDA context and device 0's primary context could not be retained";
        return -1;
    }
    return 0;
}
int release_cuda_context(void *) { return 0; }
int cuda_stream(void *user_context, void *, void **stream) {
    auto *call = static_cast<CallContext *>(user_context);
    *stream = call ? call->stream : nullptr;
    return 0;
}

struct InstallCudaHooks {
    InstallCudaHooks() {
        // Halide's CUDA runtime reads HL_CUDA_JIT_MAX_REGISTERS each time it JIT-compiles a
        // kernel's PTX (first call per context) and caps registers at 64 without it, which made
        // the larger register tiles spill (ncu: the 7x7 stem's backward-weight at 64 registers,
        // 72% memory throughput). Set at load time, before any kernel runs, and never over a
        // value the process chose (CMake option CONVBWD_CUDA_MAX_REGISTERS; 0 = leave it).
#if defined(CONVBWD_CUDA_MAX_REGISTERS) && CONVBWD_CUDA_MAX_REGISTERS > 0
        setenv("HL_CUDA_JIT_MAX_REGISTERS", std::to_string(CONVBWD_CUDA_MAX_REGISTERS).c_str(), /*overwrite=*/0);
#endif
        halide_set_cuda_acquire_context(&acquire_cuda_context);
        halide_set_cuda_release_context(&release_cuda_context);
        halide_set_cuda_get_stream(&cuda_stream);
    }
} g_install_cuda_hooks;
// Kernel modules built by convbwd-tune (matrix-fragment candidates) call this from the program;
// the reference keeps it linked into every program of a CUDA build.
extern "C" int convbwd_cuda_fragments_initialize_kernels(void *, void **, const char *, int);
[[maybe_unused]] static int (*const g_keep_cuda_fragments)(void *, void **, const char *, int) =
    &convbwd_cuda_fragments_initialize_kernels;
#endif

}  // namespace

void *opencl_symbol(const char *name) {
    static const char *const libs[] = {"libOpenCL.so.1", "libOpenCL.so", nullptr};
    return load_symbol(libs, name);
}

#ifdef CONVBWD_HAVE_OPENCL
// Replaces the Halide OpenCL runtime's weak halide_acquire_cl_context: the call's command
// queue (exec.stream, required) and the context it belongs to.
extern "C" int halide_acquire_cl_context(void *user_context, void **ctx, void **queue, bool) {
    using QueueInfo = int (*)(void *, unsigned, size_t, void *, size_t *);
    static auto info = (QueueInfo)opencl_symbol("clGetCommandQueueInfo");
    auto *call = static_cast<CallContext *>(user_context);
    if (!call || !call->stream) {
        if (call) call->error += "exec.stream must be the cl_command_queue to run on";
        return -1;
    }
    if (!info) {
        call->error += "libOpenCL.so.1 not found";
        return -1;
    }
    const unsigned kQueueContext = 0x1090;  // CL_QUEUE_CONTEXT
    if (info(call->stream, kQueueContext, sizeof(void *), ctx, nullptr) != 0) {
        call->error += "clGetCommandQueueInfo(CL_QUEUE_CONTEXT) failed";
        return -1;
    }
    *queue = call->stream;
    return 0;
}
extern "C" int halide_release_cl_context(void *) { return 0; }
// Kernel modules built by convbwd-tune (matrix-fragment candidates) call this from the program;
// the reference keeps it linked into every program of an OpenCL build.
extern "C" int convbwd_opencl_fragments_initialize_kernels(void *, void **, const char *, int);
[[maybe_unused]] static int (*const g_keep_fragments)(void *, void **, const char *, int) =
    &convbwd_opencl_fragments_initialize_kernels;
#endif

bool device_compiled(Device d) {
    switch (d) {
    case Device::Host: return true;
#ifdef CONVBWD_HAVE_CUDA
    case Device::Cuda: return true;
#endif
#ifdef CONVBWD_HAVE_OPENCL
    case Device::OpenCL: return true;
#endif
#ifdef CONVBWD_HAVE_AMDGPU
    case Device::AmdGpu: return true;
#endif
    default: return false;
    }
}

Status wrap_device(Device d, CallContext *ctx, halide_buffer_t *buf, void *ptr) {
    buf->host = nullptr;
    int rc = -1;
#ifdef CONVBWD_HAVE_CUDA
    if (d == Device::Cuda) rc = halide_cuda_wrap_device_ptr(ctx, buf, (uint64_t)(uintptr_t)ptr);
#endif
#ifdef CONVBWD_HAVE_OPENCL
    if (d == Device::OpenCL) rc = halide_opencl_wrap_cl_mem(ctx, buf, (uint64_t)(uintptr_t)ptr);
#endif
#ifdef CONVBWD_HAVE_AMDGPU
    // A HIP device address (halide_glue.h); fails cleanly without libamdhip64 or an AMD GPU.
    if (d == Device::AmdGpu) {
        std::string why;
        rc = amdgpu::hip_wrap_device_ptr(buf, (uint64_t)(uintptr_t)ptr, &why);
        if (rc != 0) ctx->error += why;
    }
#endif
    (void)ctx, (void)ptr;
    if (rc != 0) return fail(CONVBWD_DEVICE_ERROR, std::string("cannot wrap device memory for ") + to_string(d));
    return {};
}

void detach_device(Device d, CallContext *ctx, halide_buffer_t *buf) {
#ifdef CONVBWD_HAVE_CUDA
    if (d == Device::Cuda) halide_cuda_detach_device_ptr(ctx, buf);
#endif
#ifdef CONVBWD_HAVE_OPENCL
    if (d == Device::OpenCL) halide_opencl_detach_cl_mem(ctx, buf);
#endif
#ifdef CONVBWD_HAVE_AMDGPU
    if (d == Device::AmdGpu) amdgpu::hip_detach_device_ptr(buf);
#endif
    (void)d, (void)ctx, (void)buf;
}

}  // namespace convbwd
