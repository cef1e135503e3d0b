// Device::OpenCL behind common/device.h: OpenCL 1.2, entry points from libOpenCL.so.1 (dlopen),
// one context and one in-order queue for the process.
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <dlfcn.h>

#include <chrono>
#include <mutex>
#include <vector>

#include "common/device.h"

namespace convbwd::detail {

namespace {

double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

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

class ClBuffer final : public DeviceBuffer {
public:
    ClBuffer(cl_mem m, size_t bytes) : DeviceBuffer(bytes), m_(m) {}
    ~ClBuffer() override { g_cl.clReleaseMemObject(m_); }
    void *handle() const override { return (void *)m_; }

protected:
    bool copy_in(const void *src, size_t bytes, std::string *error) override {
        cl_int e = g_cl.clEnqueueWriteBuffer(opencl_state().queue, m_, CL_TRUE, 0, bytes, src, 0, nullptr, nullptr);
        if (e != CL_SUCCESS) *error = cl_msg("clEnqueueWriteBuffer(" + std::to_string(bytes) + " bytes)", e);
        return e == CL_SUCCESS;
    }
    bool copy_out(void *dst, size_t bytes, std::string *error) const override {
        cl_int e = g_cl.clEnqueueReadBuffer(opencl_state().queue, m_, CL_TRUE, 0, bytes, dst, 0, nullptr, nullptr);
        if (e != CL_SUCCESS) *error = cl_msg("clEnqueueReadBuffer(" + std::to_string(bytes) + " bytes)", e);
        return e == CL_SUCCESS;
    }
    bool fill(unsigned char value, std::string *error) override {
        cl_command_queue q = opencl_state().queue;
        cl_int e = g_cl.clEnqueueFillBuffer(q, m_, &value, 1, 0, size() ? size() : 1, 0, nullptr, nullptr);
        if (e == CL_SUCCESS) e = g_cl.clFinish(q);
        if (e != CL_SUCCESS) *error = cl_msg("clEnqueueFillBuffer(" + std::to_string(size()) + " bytes)", e);
        return e == CL_SUCCESS;
    }

private:
    cl_mem m_;
};

class ClDevice final : public GpuDevice {
public:
    Device device() const override { return Device::OpenCL; }
    std::string name() const override { return opencl_state().name; }
    void *stream() const override { return opencl_state().queue; }
    std::unique_ptr<DeviceBuffer> alloc(size_t bytes, std::string *error) override {
        OpenCLState &st = opencl_state();
        const size_t n = bytes ? bytes : 1;
        // Some drivers (NVIDIA's) accept any size here and fail at first use: refuse what the
        // spec says clCreateBuffer must refuse.
        if (st.max_alloc && n > st.max_alloc) {
            if (error)
                *error = "clCreateBuffer(" + std::to_string(bytes) +
                         " bytes): over the device's CL_DEVICE_MAX_MEM_ALLOC_SIZE (" + std::to_string(st.max_alloc) +
                         " bytes)";
            return nullptr;
        }
        cl_int e = CL_SUCCESS;
        cl_mem m = g_cl.clCreateBuffer(st.context, CL_MEM_READ_WRITE, n, nullptr, &e);
        if (e != CL_SUCCESS || !m) {
            if (error) *error = cl_msg("clCreateBuffer(" + std::to_string(bytes) + " bytes)", e);
            return nullptr;
        }
        return std::make_unique<ClBuffer>(m, bytes);
    }
    bool sync(std::string *error) override { return finish(nullptr, "clFinish", error); }
    bool time(const std::function<bool()> &call, double *ms, std::string *error, void *stream) override {
        if (!finish(stream, "timer start: clFinish", error)) return false;
        const double t0 = now_ms();
        if (!call() || !finish(stream, "timer stop: clFinish", error)) return false;
        *ms = now_ms() - t0;
        return true;
    }

private:
    static bool finish(void *stream, const char *what, std::string *error) {
        cl_int e = g_cl.clFinish(stream ? (cl_command_queue)stream : opencl_state().queue);
        if (e != CL_SUCCESS && error) *error = cl_msg(what, e);
        return e == CL_SUCCESS;
    }
};

}  // namespace

GpuDevice *open_opencl_device(std::string *why) {
    static ClDevice *dev = opencl_state().queue ? new ClDevice : nullptr;
    if (!dev) *why = opencl_state().error;
    return dev;
}

void *opencl_object(int which) {
    OpenCLState &st = opencl_state();
    return which == 0 ? (void *)st.context : which == 1 ? (void *)st.queue : (void *)st.device;
}

}  // namespace convbwd::detail
