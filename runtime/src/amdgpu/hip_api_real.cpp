// HipApi over libamdhip64, bound at run time with dlopen so that the library and its tests start
// on machines without ROCm. Compile with -D__HIP_PLATFORM_AMD__ (hip_runtime_api.h needs it);
// only the header's declarations are used (for exact function types), nothing is linked.
#include <dlfcn.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <hip/hip_runtime_api.h>

#include "runtime/src/amdgpu/hip_launcher.h"

namespace convbwd::amdgpu {

// The constants hip_launcher.h mirrors must match HIP's.
static_assert(int{hipSuccess} == kHipSuccess && int{hipErrorNoDevice} == kHipErrorNoDevice &&
                  int{hipErrorInvalidDevice} == kHipErrorInvalidDevice &&
                  int{hipErrorInvalidImage} == kHipErrorInvalidImage && int{hipErrorNotFound} == kHipErrorNotFound &&
                  int{hipErrorInvalidValue} == kHipErrorInvalidValue && int{hipErrorOutOfMemory} == kHipErrorOutOfMemory &&
                  int{hipErrorLaunchFailure} == kHipErrorLaunchFailure,
              "hipError_t values differ from hip_launcher.h");

namespace {

#define CONVBWD_STR2(x) #x
#define CONVBWD_STR(x) CONVBWD_STR2(x)  // expands API-versioning macros (hipGetDevicePropertiesR0600)

class RealHipApi final : public HipApi {
public:
    ~RealHipApi() override {
        // The HIP runtime is not unloaded: it may own threads and atexit handlers.
    }

    Status load() {
        const char *names[] = {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"};
        std::string errors;
        for (const char *n : names) {
            handle_ = dlopen(n, RTLD_NOW | RTLD_LOCAL);
            if (handle_) break;
            const char *e = dlerror();
            errors += std::string(errors.empty() ? "" : "; ") + (e ? e : n);
        }
        if (!handle_) return error(CONVBWD_DEVICE_ERROR, "libamdhip64 could not be loaded: " + errors);
        bool ok = true;
        std::string missing;
        auto bind = [&](auto **fn, const char *symbol) {
            *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(dlsym(handle_, symbol));
            if (!*fn) {
                ok = false;
                missing += std::string(missing.empty() ? "" : ", ") + symbol;
            }
        };
        bind(&getDeviceCount_, "hipGetDeviceCount");
        bind(&getDevice_, "hipGetDevice");
        bind(&getDeviceProperties_, CONVBWD_STR(hipGetDeviceProperties));
        bind(&moduleLoadData_, "hipModuleLoadData");
        bind(&moduleUnload_, "hipModuleUnload");
        bind(&moduleGetFunction_, "hipModuleGetFunction");
        bind(&moduleLaunchKernel_, "hipModuleLaunchKernel");
        bind(&malloc_, "hipMalloc");
        bind(&free_, "hipFree");
        bind(&memcpy_, "hipMemcpy");
        bind(&streamSynchronize_, "hipStreamSynchronize");
        bind(&getErrorName_, "hipGetErrorName");
        bind(&getErrorString_, "hipGetErrorString");
        if (!ok) return error(CONVBWD_DEVICE_ERROR, "libamdhip64 lacks symbols: " + missing);
        return ok_status();
    }

    int getDeviceCount(int *count) override { return getDeviceCount_(count); }
    int getDevice(int *device) override { return getDevice_(device); }
    int getDeviceArchName(int device, std::string *arch) override {
        // Padding guards against a runtime whose hipDeviceProp_t is larger than this header's.
        std::vector<unsigned char> storage(sizeof(hipDeviceProp_t) + 8192, 0);
        auto *prop = reinterpret_cast<hipDeviceProp_t *>(storage.data());
        const hipError_t e = getDeviceProperties_(prop, device);
        if (e != hipSuccess) return e;
        const char *name = prop->gcnArchName;
        const size_t n = strnlen(name, sizeof(prop->gcnArchName));
        if (n < 4 || std::strncmp(name, "gfx", 3) != 0) {
            // A hipDeviceProp_t layout other than this header's (mismatched ROCm versions).
            return hipErrorInvalidValue;
        }
        arch->assign(name, n);
        return hipSuccess;
    }
    int moduleLoadData(hipModule_t *module, const void *image) override { return moduleLoadData_(module, image); }
    int moduleUnload(hipModule_t module) override { return moduleUnload_(module); }
    int moduleGetFunction(hipFunction_t *f, hipModule_t module, const char *name) override {
        return moduleGetFunction_(f, module, name);
    }
    int moduleLaunchKernel(hipFunction_t f, const uint32_t grid[3], const uint32_t block[3], uint32_t shared,
                           hipStream_t stream, void **kernel_params, void **extra) override {
        return moduleLaunchKernel_(f, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, stream,
                                   kernel_params, extra);
    }
    int memAlloc(void **ptr, size_t bytes) override { return malloc_(ptr, bytes); }
    int memFree(void *ptr) override { return free_(ptr); }
    int memcpyHtoD(void *dst, const void *src, size_t bytes) override {
        return memcpy_(dst, src, bytes, hipMemcpyHostToDevice);
    }
    int memcpyDtoH(void *dst, const void *src, size_t bytes) override {
        return memcpy_(dst, src, bytes, hipMemcpyDeviceToHost);
    }
    int streamSynchronize(hipStream_t stream) override { return streamSynchronize_(stream); }
    std::string errorString(int e) override {
        const auto err = static_cast<hipError_t>(e);
        const char *name = getErrorName_ ? getErrorName_(err) : nullptr;
        const char *text = getErrorString_ ? getErrorString_(err) : nullptr;
        std::string s = name ? name : ("hipError " + std::to_string(e));
        if (text && (!name || std::strcmp(text, name) != 0)) s += std::string(": ") + text;
        s += " (" + std::to_string(e) + ")";
        return s;
    }

private:
    void *handle_ = nullptr;
    decltype(&::hipGetDeviceCount) getDeviceCount_ = nullptr;
    decltype(&::hipGetDevice) getDevice_ = nullptr;
    decltype(&::hipGetDeviceProperties) getDeviceProperties_ = nullptr;
    decltype(&::hipModuleLoadData) moduleLoadData_ = nullptr;
    decltype(&::hipModuleUnload) moduleUnload_ = nullptr;
    decltype(&::hipModuleGetFunction) moduleGetFunction_ = nullptr;
    decltype(&::hipModuleLaunchKernel) moduleLaunchKernel_ = nullptr;
    hipError_t (*malloc_)(void **, size_t) = nullptr;
    decltype(&::hipFree) free_ = nullptr;
    decltype(&::hipMemcpy) memcpy_ = nullptr;
    decltype(&::hipStreamSynchronize) streamSynchronize_ = nullptr;
    decltype(&::hipGetErrorName) getErrorName_ = nullptr;
    decltype(&::hipGetErrorString) getErrorString_ = nullptr;
};

}  // namespace

std::shared_ptr<HipApi> make_real_hip_api(Status *status) {
    auto api = std::make_shared<RealHipApi>();
    Status s = api->load();
    if (status) *status = s;
    if (!s.ok()) return nullptr;
    return api;
}

}  // namespace convbwd::amdgpu
