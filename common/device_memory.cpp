#include "common/device_memory.h"

#include <chrono>
#include <cstring>
#include <mutex>
#include <vector>

#ifdef CONVBWD_WITH_CUDA
#include <cuda_runtime_api.h>
#endif
#include <dlfcn.h>
#include <type_traits>
#ifdef CONVBWD_WITH_OPENCL
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <dlfcn.h>
#endif

namespace convbwd {

namespace {

[[maybe_unused]] constexpr char kNoCuda[] = "this build has no CUDA support (CONVBWD_WITH_CUDA)";
[[maybe_unused]] constexpr char kNoOpenCL[] = "this build has no OpenCL support (CONVBWD_WITH_OPENCL)";

void set(std::string *out, const std::string &msg) {
    if (out) *out = msg;
}

// ---- HIP, bound with dlopen (no ROCm headers or link-time dependency) ----------------------
struct HipLib {
    void *handle = nullptr;
    std::string error;  // why it is unusable; empty when usable
    int (*GetDeviceCount)(int *) = nullptr;
    int (*Malloc)(void **, size_t) = nullptr;
    int (*Free)(void *) = nullptr;
    int (*Memcpy)(void *, const void *, size_t, int) = nullptr;  // kinds: 1 host->device, 2 device->host
    int (*Memset)(void *, int, size_t) = nullptr;
    int (*DeviceSynchronize)() = nullptr;
    int (*DeviceGetName)(char *, int, int) = nullptr;
    const char *(*GetErrorName)(int) = nullptr;
};

HipLib &hip() {
    static HipLib lib;
    static std::once_flag once;
    std::call_once(once, [] {
        for (const char *n : {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"})
            if ((lib.handle = dlopen(n, RTLD_NOW | RTLD_LOCAL))) break;
        if (!lib.handle) {
            lib.error = "HIP unavailable: libamdhip64 could not be loaded";
            return;
        }
        auto bind = [&](auto &fn, const char *name) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib.handle, name));
            if (!fn) lib.error += std::string(lib.error.empty() ? "libamdhip64 lacks " : ", ") + name;
        };
        bind(lib.GetDeviceCount, "hipGetDeviceCount");
        bind(lib.Malloc, "hipMalloc");
        bind(lib.Free, "hipFree");
        bind(lib.Memcpy, "hipMemcpy");
        bind(lib.Memset, "hipMemset");
        bind(lib.DeviceSynchronize, "hipDeviceSynchronize");
        bind(lib.DeviceGetName, "hipDeviceGetName");
        bind(lib.GetErrorName, "hipGetErrorName");
        if (!lib.error.empty()) return;
        int n = 0;
        int e = lib.GetDeviceCount(&n);
        if (e != 0 || n == 0)
            lib.error = "no AMD GPU: hipGetDeviceCount returned " + std::string(lib.GetErrorName(e)) + ", " +
                        std::to_string(n) + " devices";
    });
    return lib;
}

std::string hip_msg(const std::string &what, int e) {
    return what + ": " + (hip().GetErrorName ? hip().GetErrorName(e) : "hipError") + " (" + std::to_string(e) + ")";
}

[[maybe_unused]] double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

#ifdef CONVBWD_WITH_CUDA
// "cudaMalloc(4096 bytes): out of memory (cudaErrorMemoryAllocation)"
std::string cuda_msg(const std::string &what, cudaError_t e) {
    return what + ": " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")";
}
#endif

#ifdef CONVBWD_WITH_OPENCL
const char *cl_error_name(cl_int e) {
    switch (e) {
    case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
    case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
    case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
    case CL_INVALID_PLATFORM: return "CL_INVALID_PLATFORM";
    case CL_INVALID_DEVICE: return "CL_INVALID_DEVICE";
    case CL_INVALID_CONTEXT: return "CL_INVALID_CONTEXT";
    case CL_INVALID_COMMAND_QUEUE: return "CL_INVALID_COMMAND_QUEUE";
    case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
    case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
    case CL_INVALID_OPERATION: return "CL_INVALID_OPERATION";
    case CL_INVALID_EVENT_WAIT_LIST: return "CL_INVALID_EVENT_WAIT_LIST";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR (no OpenCL platform: no ICD file in /etc/OpenCL/vendors?)";
    default: return nullptr;
    }
}
std::string cl_msg(const std::string &what, cl_int e) {
    const char *name = cl_error_name(e);
    return what + ": " + (name ? name : "OpenCL error") + " (" + std::to_string(e) + ")";
}

// The OpenCL entry points, from libOpenCL.so.1 (the ICD loader) opened at run time, so that a
// build with OpenCL starts, and reports OpenCL unavailable, where no loader is installed.
#define CONVBWD_CL_FUNCTIONS(X)                                                                          \
    X(clGetPlatformIDs) X(clGetDeviceIDs) X(clGetDeviceInfo) X(clCreateContext) X(clReleaseContext)      \
    X(clCreateCommandQueue) X(clFinish) X(clCreateBuffer) X(clReleaseMemObject) X(clEnqueueWriteBuffer) \
    X(clEnqueueReadBuffer) X(clEnqueueFillBuffer)

struct ClApi {
#define CONVBWD_CL_MEMBER(f) decltype(&::f) f = nullptr;
    CONVBWD_CL_FUNCTIONS(CONVBWD_CL_MEMBER)
#undef CONVBWD_CL_MEMBER
};
ClApi g_cl;  // filled once, by opencl_state(), before any use

bool load_opencl(std::string *error) {
    void *lib = nullptr;
    for (const char *name : {"libOpenCL.so.1", "libOpenCL.so"})
        if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
        const char *e = dlerror();
        *error = std::string("cannot load libOpenCL.so.1 (no OpenCL ICD loader installed?)") + (e ? ": " : "") +
                 (e ? e : "");
        return false;
    }
#define CONVBWD_CL_LOAD(f)                                              \
    if (!(g_cl.f = reinterpret_cast<decltype(g_cl.f)>(dlsym(lib, #f)))) { \
        *error = "libOpenCL.so.1 has no " #f;                           \
        return false;                                                   \
    }
    CONVBWD_CL_FUNCTIONS(CONVBWD_CL_LOAD)
#undef CONVBWD_CL_LOAD
    return true;
}

// The process-wide OpenCL state. Created once, never released: the ICD and its drivers may be
// torn down before static destructors run, and the process exits anyway.
struct OpenCLState {
    std::once_flag once;
    std::string error;  // set if creation failed
    cl_device_id device = nullptr;
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    std::string name;
    cl_ulong max_alloc = 0;  // CL_DEVICE_MAX_MEM_ALLOC_SIZE (0 = unknown)
};

OpenCLState &opencl_state() {
    static OpenCLState *s = new OpenCLState;
    std::call_once(s->once, [] {
        OpenCLState &st = *s;
        if (!load_opencl(&st.error)) return;
        cl_uint np = 0;
        cl_int e = g_cl.clGetPlatformIDs(0, nullptr, &np);
        if (e != CL_SUCCESS || np == 0) {
            st.error = e != CL_SUCCESS ? cl_msg("clGetPlatformIDs", e) : "no OpenCL platform found";
            return;
        }
        std::vector<cl_platform_id> platforms(np);
        if ((e = g_cl.clGetPlatformIDs(np, platforms.data(), nullptr)) != CL_SUCCESS) {
            st.error = cl_msg("clGetPlatformIDs", e);
            return;
        }
        // First GPU of any platform, else the first device of any type.
        cl_device_id chosen = nullptr;
        cl_platform_id chosen_platform = nullptr;
        for (cl_device_type type : {(cl_device_type)CL_DEVICE_TYPE_GPU, (cl_device_type)CL_DEVICE_TYPE_ALL}) {
            for (cl_platform_id pl : platforms) {
                cl_device_id d = nullptr;
                cl_uint nd = 0;
                if (g_cl.clGetDeviceIDs(pl, type, 1, &d, &nd) == CL_SUCCESS && nd > 0 && d) {
                    chosen = d;
                    chosen_platform = pl;
                    break;
                }
            }
            if (chosen) break;
        }
        if (!chosen) {
            st.error = "no OpenCL device found on " + std::to_string(np) + " platform(s)";
            return;
        }
        cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)chosen_platform, 0};
        cl_context ctx = g_cl.clCreateContext(props, 1, &chosen, nullptr, nullptr, &e);
        if (e != CL_SUCCESS || !ctx) {
            st.error = cl_msg("clCreateContext", e);
            return;
        }
        cl_command_queue q = g_cl.clCreateCommandQueue(ctx, chosen, 0, &e);
        if (e != CL_SUCCESS || !q) {
            st.error = cl_msg("clCreateCommandQueue", e);
            g_cl.clReleaseContext(ctx);
            return;
        }
        char name[256] = {0};
        if (g_cl.clGetDeviceInfo(chosen, CL_DEVICE_NAME, sizeof(name) - 1, name, nullptr) == CL_SUCCESS) st.name = name;
        if (g_cl.clGetDeviceInfo(chosen, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(st.max_alloc), &st.max_alloc, nullptr) !=
            CL_SUCCESS)
            st.max_alloc = 0;
        st.device = chosen;
        st.context = ctx;
        st.queue = q;
    });
    return *s;
}
#endif

}  // namespace

// ---- availability, synchronization, OpenCL accessors --------------------------------------

bool device_available(DeviceKind kind, std::string *why) {
    if (kind == DeviceKind::Hip) {
        set(why, hip().error);
        return hip().error.empty();
    }
    if (kind == DeviceKind::Cuda) {
#ifdef CONVBWD_WITH_CUDA
        int n = 0;
        cudaError_t e = cudaGetDeviceCount(&n);
        if (e != cudaSuccess) {
            cudaGetLastError();  // reset this thread's last (non-sticky) error
            set(why, cuda_msg("cudaGetDeviceCount", e));
            return false;
        }
        if (n == 0) {
            set(why, "no CUDA device");
            return false;
        }
        return true;
#else
        set(why, kNoCuda);
        return false;
#endif
    }
#ifdef CONVBWD_WITH_OPENCL
    OpenCLState &st = opencl_state();
    if (!st.queue) {
        set(why, st.error);
        return false;
    }
    return true;
#else
    set(why, kNoOpenCL);
    return false;
#endif
}

std::string device_name(DeviceKind kind) {
    if (kind == DeviceKind::Hip) {
        char name[256] = {0};
        if (!hip().error.empty() || hip().DeviceGetName(name, sizeof(name) - 1, 0) != 0) return "";
        return name;
    }
    if (kind == DeviceKind::Cuda) {
#ifdef CONVBWD_WITH_CUDA
        int dev = 0;
        cudaDeviceProp prop;
        if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
            cudaGetLastError();
            return "";
        }
        return prop.name;
#else
        return "";
#endif
    }
#ifdef CONVBWD_WITH_OPENCL
    return opencl_state().name;
#else
    return "";
#endif
}

bool device_synchronize(DeviceKind kind, std::string *error) {
    if (kind == DeviceKind::Hip) {
        if (!hip().error.empty()) return set(error, hip().error), false;
        int e = hip().DeviceSynchronize();
        if (e != 0) return set(error, hip_msg("hipDeviceSynchronize", e)), false;
        return true;
    }
    if (kind == DeviceKind::Cuda) {
#ifdef CONVBWD_WITH_CUDA
        cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess) {
            cudaGetLastError();
            set(error, cuda_msg("cudaDeviceSynchronize", e));
            return false;
        }
        return true;
#else
        set(error, kNoCuda);
        return false;
#endif
    }
#ifdef CONVBWD_WITH_OPENCL
    OpenCLState &st = opencl_state();
    if (!st.queue) {
        set(error, st.error);
        return false;
    }
    cl_int e = g_cl.clFinish(st.queue);
    if (e != CL_SUCCESS) {
        set(error, cl_msg("clFinish", e));
        return false;
    }
    return true;
#else
    set(error, kNoOpenCL);
    return false;
#endif
}

void *opencl_context() {
#ifdef CONVBWD_WITH_OPENCL
    return opencl_state().context;
#else
    return nullptr;
#endif
}
void *opencl_queue() {
#ifdef CONVBWD_WITH_OPENCL
    return opencl_state().queue;
#else
    return nullptr;
#endif
}
void *opencl_device() {
#ifdef CONVBWD_WITH_OPENCL
    return opencl_state().device;
#else
    return nullptr;
#endif
}

// ---- DeviceBuffer ----------------------------------------------------------------------------

std::unique_ptr<DeviceBuffer> DeviceBuffer::create(DeviceKind kind, size_t bytes, std::string *error) {
    [[maybe_unused]] const size_t alloc = bytes ? bytes : 1;
    if (kind == DeviceKind::Hip) {
        if (!hip().error.empty()) return set(error, hip().error), nullptr;
        void *p = nullptr;
        int e = hip().Malloc(&p, alloc);
        if (e != 0 || !p) return set(error, hip_msg("hipMalloc(" + std::to_string(bytes) + " bytes)", e)), nullptr;
        return std::unique_ptr<DeviceBuffer>(new DeviceBuffer(kind, p, bytes));
    }
    if (kind == DeviceKind::Cuda) {
#ifdef CONVBWD_WITH_CUDA
        void *p = nullptr;
        cudaError_t e = cudaMalloc(&p, alloc);
        if (e != cudaSuccess || !p) {
            cudaGetLastError();
            set(error, cuda_msg("cudaMalloc(" + std::to_string(bytes) + " bytes)", e));
            return nullptr;
        }
        return std::unique_ptr<DeviceBuffer>(new DeviceBuffer(kind, p, bytes));
#else
        set(error, kNoCuda);
        return nullptr;
#endif
    }
#ifdef CONVBWD_WITH_OPENCL
    OpenCLState &st = opencl_state();
    if (!st.context) {
        set(error, st.error);
        return nullptr;
    }
    // Some drivers (NVIDIA's) accept any size here and fail at first use: refuse what the spec
    // says clCreateBuffer must refuse.
    if (st.max_alloc && alloc > st.max_alloc) {
        set(error, "clCreateBuffer(" + std::to_string(bytes) + " bytes): over the device's CL_DEVICE_MAX_MEM_ALLOC_SIZE (" +
                       std::to_string(st.max_alloc) + " bytes)");
        return nullptr;
    }
    cl_int e = CL_SUCCESS;
    cl_mem m = g_cl.clCreateBuffer(st.context, CL_MEM_READ_WRITE, alloc, nullptr, &e);
    if (e != CL_SUCCESS || !m) {
        set(error, cl_msg("clCreateBuffer(" + std::to_string(bytes) + " bytes)", e));
        return nullptr;
    }
    return std::unique_ptr<DeviceBuffer>(new DeviceBuffer(kind, (void *)m, bytes));
#else
    set(error, kNoOpenCL);
    return nullptr;
#endif
}

DeviceBuffer::~DeviceBuffer() {
    if (!handle_) return;
    if (kind_ == DeviceKind::Hip) hip().Free(handle_);
#ifdef CONVBWD_WITH_CUDA
    if (kind_ == DeviceKind::Cuda) {
        if (cudaFree(handle_) != cudaSuccess) cudaGetLastError();
    }
#endif
#ifdef CONVBWD_WITH_OPENCL
    if (kind_ == DeviceKind::OpenCL) g_cl.clReleaseMemObject((cl_mem)handle_);
#endif
}

bool DeviceBuffer::upload(const void *src, size_t bytes) {
    if (bytes > bytes_) {
        error_ = "upload of " + std::to_string(bytes) + " bytes into a buffer of " + std::to_string(bytes_);
        return false;
    }
    if (bytes == 0) return true;
    if (!src) {
        error_ = "upload from a null pointer";
        return false;
    }
    if (kind_ == DeviceKind::Hip) {
        int e = hip().Memcpy(handle_, src, bytes, 1);
        if (e != 0) error_ = hip_msg("hipMemcpy(host to device, " + std::to_string(bytes) + " bytes)", e);
        return e == 0;
    }
#ifdef CONVBWD_WITH_CUDA
    if (kind_ == DeviceKind::Cuda) {
        cudaError_t e = cudaMemcpy(handle_, src, bytes, cudaMemcpyHostToDevice);
        if (e != cudaSuccess) {
            cudaGetLastError();
            error_ = cuda_msg("cudaMemcpy(host to device, " + std::to_string(bytes) + " bytes)", e);
            return false;
        }
        return true;
    }
#endif
#ifdef CONVBWD_WITH_OPENCL
    if (kind_ == DeviceKind::OpenCL) {
        cl_int e = g_cl.clEnqueueWriteBuffer(opencl_state().queue, (cl_mem)handle_, CL_TRUE, 0, bytes, src, 0, nullptr,
                                        nullptr);
        if (e != CL_SUCCESS) {
            error_ = cl_msg("clEnqueueWriteBuffer(" + std::to_string(bytes) + " bytes)", e);
            return false;
        }
        return true;
    }
#endif
    error_ = "backend not built in";
    return false;
}

bool DeviceBuffer::download(void *dst, size_t bytes) const {
    if (bytes > bytes_) {
        error_ = "download of " + std::to_string(bytes) + " bytes from a buffer of " + std::to_string(bytes_);
        return false;
    }
    if (bytes == 0) return true;
    if (!dst) {
        error_ = "download into a null pointer";
        return false;
    }
    if (kind_ == DeviceKind::Hip) {
        int e = hip().Memcpy(dst, handle_, bytes, 2);
        if (e != 0) error_ = hip_msg("hipMemcpy(device to host, " + std::to_string(bytes) + " bytes)", e);
        return e == 0;
    }
#ifdef CONVBWD_WITH_CUDA
    if (kind_ == DeviceKind::Cuda) {
        cudaError_t e = cudaMemcpy(dst, handle_, bytes, cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) {
            cudaGetLastError();
            error_ = cuda_msg("cudaMemcpy(device to host, " + std::to_string(bytes) + " bytes)", e);
            return false;
        }
        return true;
    }
#endif
#ifdef CONVBWD_WITH_OPENCL
    if (kind_ == DeviceKind::OpenCL) {
        cl_int e = g_cl.clEnqueueReadBuffer(opencl_state().queue, (cl_mem)handle_, CL_TRUE, 0, bytes, dst, 0, nullptr,
                                       nullptr);
        if (e != CL_SUCCESS) {
            error_ = cl_msg("clEnqueueReadBuffer(" + std::to_string(bytes) + " bytes)", e);
            return false;
        }
        return true;
    }
#endif
    error_ = "backend not built in";
    return false;
}

bool DeviceBuffer::fill_bytes(unsigned char value) {
    if (kind_ == DeviceKind::Hip) {
        int e = hip().Memset(handle_, value, bytes_ ? bytes_ : 1);
        if (e == 0) e = hip().DeviceSynchronize();
        if (e != 0) error_ = hip_msg("hipMemset", e);
        return e == 0;
    }
    const size_t alloc = bytes_ ? bytes_ : 1;
#ifdef CONVBWD_WITH_CUDA
    if (kind_ == DeviceKind::Cuda) {
        cudaError_t e = cudaMemset(handle_, value, alloc);
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        if (e != cudaSuccess) {
            cudaGetLastError();
            error_ = cuda_msg("cudaMemset(" + std::to_string(bytes_) + " bytes)", e);
            return false;
        }
        return true;
    }
#endif
#ifdef CONVBWD_WITH_OPENCL
    if (kind_ == DeviceKind::OpenCL) {
        cl_command_queue q = opencl_state().queue;
        cl_int e = g_cl.clEnqueueFillBuffer(q, (cl_mem)handle_, &value, 1, 0, alloc, 0, nullptr, nullptr);
        if (e == CL_SUCCESS) e = g_cl.clFinish(q);
        if (e != CL_SUCCESS) {
            error_ = cl_msg("clEnqueueFillBuffer(" + std::to_string(bytes_) + " bytes)", e);
            return false;
        }
        return true;
    }
#endif
    (void)value, (void)alloc;
    error_ = "backend not built in";
    return false;
}

// ---- DeviceTimer -----------------------------------------------------------------------------

DeviceTimer::DeviceTimer(DeviceKind kind, void *stream) : kind_(kind), stream_(stream) {
    (void)stream_, (void)ev_start_, (void)ev_stop_, (void)t0_ms_;  // unused when a backend is left out
}

DeviceTimer::~DeviceTimer() {
#ifdef CONVBWD_WITH_CUDA
    if (ev_start_) cudaEventDestroy((cudaEvent_t)ev_start_);
    if (ev_stop_) cudaEventDestroy((cudaEvent_t)ev_stop_);
#endif
}

void DeviceTimer::start() {
    started_ = false;
    error_.clear();
    if (kind_ == DeviceKind::Hip) {
        if (!device_synchronize(kind_, &error_)) return;
        t0_ms_ = now_ms();
        started_ = true;
        return;
    }
    if (kind_ == DeviceKind::Cuda) {
#ifdef CONVBWD_WITH_CUDA
        cudaError_t e = cudaSuccess;
        if (!ev_start_) e = cudaEventCreate((cudaEvent_t *)&ev_start_);
        if (e == cudaSuccess && !ev_stop_) e = cudaEventCreate((cudaEvent_t *)&ev_stop_);
        if (e == cudaSuccess) e = cudaEventRecord((cudaEvent_t)ev_start_, (cudaStream_t)stream_);
        if (e != cudaSuccess) {
            cudaGetLastError();
            error_ = cuda_msg("DeviceTimer::start", e);
            return;
        }
        started_ = true;
#else
        error_ = kNoCuda;
#endif
        return;
    }
#ifdef CONVBWD_WITH_OPENCL
    OpenCLState &st = opencl_state();  // also loads the OpenCL entry points
    cl_command_queue q = stream_ ? (cl_command_queue)stream_ : st.queue;
    if (!q || !g_cl.clFinish) {
        error_ = st.error;
        return;
    }
    cl_int e = g_cl.clFinish(q);
    if (e != CL_SUCCESS) {
        error_ = cl_msg("DeviceTimer::start: clFinish", e);
        return;
    }
    t0_ms_ = now_ms();
    started_ = true;
#else
    error_ = kNoOpenCL;
#endif
}

double DeviceTimer::stop_ms() {
    if (!started_) {
        if (error_.empty()) error_ = "DeviceTimer::stop_ms without a successful start()";
        return -1;
    }
    started_ = false;
    if (kind_ == DeviceKind::Hip) return device_synchronize(kind_, &error_) ? now_ms() - t0_ms_ : -1;
    if (kind_ == DeviceKind::Cuda) {
#ifdef CONVBWD_WITH_CUDA
        float ms = 0;
        cudaError_t e = cudaEventRecord((cudaEvent_t)ev_stop_, (cudaStream_t)stream_);
        if (e == cudaSuccess) e = cudaEventSynchronize((cudaEvent_t)ev_stop_);
        if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, (cudaEvent_t)ev_start_, (cudaEvent_t)ev_stop_);
        if (e != cudaSuccess) {
            cudaGetLastError();
            error_ = cuda_msg("DeviceTimer::stop_ms", e);
            return -1;
        }
        return ms;
#else
        return -1;
#endif
    }
#ifdef CONVBWD_WITH_OPENCL
    cl_command_queue q = stream_ ? (cl_command_queue)stream_ : opencl_state().queue;
    cl_int e = g_cl.clFinish(q);
    if (e != CL_SUCCESS) {
        error_ = cl_msg("DeviceTimer::stop_ms: clFinish", e);
        return -1;
    }
    return now_ms() - t0_ms_;
#else
    return -1;
#endif
}

}  // namespace convbwd
