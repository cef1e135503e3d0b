// Launching AMDGPU code objects (Halide OpenCL C compiled ahead of time by clang) through HIP's
// module API, with the kernarg segment packed by us from the code object metadata.
//
//   HipApi            the few HIP calls used, as an interface: make_real_hip_api() binds them to
//                     libamdhip64 at run time (dlopen: no link-time dependency on ROCm), tests
//                     use RecordingHipApi (recording_hip_api.h).
//   pack_kernargs()   builds the kernarg segment of one launch exactly at the metadata offsets.
//   Launcher          picks the embedded code object matching the current device, loads it once,
//                     checks and launches kernels by name.
//
// Kernarg conventions (LLVM AMDGPUUsage, code object v4/v5 kernel argument metadata):
//   global_buffer           the 64-bit device address of the buffer.
//   by_value                the value's bytes, little-endian, exactly .size bytes.
//   dynamic_shared_pointer  "a group address space pointer to dynamically allocated LDS": a
//                           32-bit LDS address. Dynamic LDS follows the kernel's static LDS, so
//                           we write align_up(.group_segment_fixed_size, .pointee_align) and pass
//                           the dynamic bytes as the launch's sharedMemBytes. ROCclr (the runtime
//                           under HIP) rewrites this slot itself with the same address
//                           (rocvirtual.cpp processMemObjects) and reserves .size extra bytes of
//                           LDS for it, which the LDS check below accounts for.
//   hidden_*                block_count = grid (work-groups), group_size = block, remainder = 0
//                           (HIP grids are whole work-groups), grid_dims = 3 (HIP launches are
//                           always 3-D), dynamic_lds_size = dynamic bytes, global offsets = 0;
//                           runtime-owned pointers (printf/hostcall buffer, heap, queue, ...) and
//                           anything unknown = 0, left for the runtime to fill.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "runtime/src/amdgpu/code_object.h"
#include "runtime/src/amdgpu/embedded_code_objects.h"
#include "runtime/src/amdgpu/status.h"

// The HIP handle types, declared exactly as hip_runtime_api.h declares them (a repeated identical
// typedef is legal), so this header needs no HIP include or -D__HIP_PLATFORM_AMD__.
typedef struct ihipStream_t *hipStream_t;
typedef struct ihipModule_t *hipModule_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;

namespace convbwd::amdgpu {

// hipError_t values used here (hip_runtime_api.h).
enum : int {
    kHipSuccess = 0,
    kHipErrorInvalidValue = 1,
    kHipErrorOutOfMemory = 2,
    kHipErrorNoDevice = 100,
    kHipErrorInvalidDevice = 101,
    kHipErrorInvalidImage = 200,
    kHipErrorNotFound = 500,
    kHipErrorLaunchFailure = 719,
};

// The `extra` keys of hipModuleLaunchKernel (HIP_LAUNCH_PARAM_BUFFER_POINTER/SIZE/END).
inline void *const kHipLaunchParamBufferPointer = reinterpret_cast<void *>(0x01);
inline void *const kHipLaunchParamBufferSize = reinterpret_cast<void *>(0x02);
inline void *const kHipLaunchParamEnd = reinterpret_cast<void *>(0x03);

// The HIP calls used. Each returns a hipError_t value (0 = hipSuccess).
class HipApi {
public:
    virtual ~HipApi() = default;
    virtual int getDeviceCount(int *count) = 0;
    virtual int getDevice(int *device) = 0;
    // hipDeviceProp_t::gcnArchName of `device`, e.g. "gfx90a:sramecc+:xnack-".
    virtual int getDeviceArchName(int device, std::string *arch) = 0;
    virtual int moduleLoadData(hipModule_t *module, const void *image) = 0;
    virtual int moduleUnload(hipModule_t module) = 0;
    virtual int moduleGetFunction(hipFunction_t *function, hipModule_t module, const char *name) = 0;
    // grid in work-groups (hipModuleLaunchKernel's gridDim), block in work-items. Exactly one of
    // kernel_params / extra is non-null.
    virtual int moduleLaunchKernel(hipFunction_t function, const uint32_t grid[3], const uint32_t block[3],
                                   uint32_t shared_mem_bytes, hipStream_t stream, void **kernel_params,
                                   void **extra) = 0;
    // Device memory and streams: halide_glue.cpp's device interface (Halide's own device
    // allocations, copies, device_sync), tests and tools. Not used by Launcher.
    virtual int memAlloc(void **ptr, size_t bytes) = 0;
    virtual int memFree(void *ptr) = 0;
    virtual int memcpyHtoD(void *dst, const void *src, size_t bytes) = 0;
    virtual int memcpyDtoH(void *dst, const void *src, size_t bytes) = 0;
    virtual int streamSynchronize(hipStream_t stream) = 0;
    // "hipErrorNoDevice: no ROCm-capable device is detected" style text for an error value.
    virtual std::string errorString(int error) = 0;
};

// Binds HipApi to libamdhip64 (libamdhip64.so, .so.6, .so.5) with dlopen. On failure returns
// nullptr and sets *status (CONVBWD_DEVICE_ERROR, with the loader's message).
std::shared_ptr<HipApi> make_real_hip_api(Status *status);

// ------------------------------------------------------------------------------------------
// Launch arguments
// ------------------------------------------------------------------------------------------
struct LaunchArg {
    enum class Kind { Buffer, Scalar, DynamicLocal };
    static constexpr size_t kMaxScalarBytes = 16;

    Kind kind = Kind::Scalar;
    uint64_t address = 0;  // Buffer: device address
    uint32_t size = 0;     // Scalar: byte count
    std::array<uint8_t, kMaxScalarBytes> bytes{};

    static LaunchArg buffer(const void *device_ptr) {
        LaunchArg a;
        a.kind = Kind::Buffer;
        a.address = reinterpret_cast<uintptr_t>(device_ptr);
        return a;
    }
    static LaunchArg buffer_address(uint64_t device_address) {
        LaunchArg a;
        a.kind = Kind::Buffer;
        a.address = device_address;
        return a;
    }
    // The trailing __local pointer: its value comes from the launch's dynamic LDS.
    static LaunchArg dynamic_local() {
        LaunchArg a;
        a.kind = Kind::DynamicLocal;
        return a;
    }
    // A by-value argument of any trivially copyable type of at most 16 bytes (int, float, ...).
    template <typename T>
    static LaunchArg scalar(const T &value) {
        static_assert(std::is_trivially_copyable<T>::value, "scalar arguments must be trivially copyable");
        static_assert(sizeof(T) <= kMaxScalarBytes, "scalar argument larger than 16 bytes");
        return scalar_bytes(&value, sizeof(T));
    }
    // Raw bytes (host byte order = little-endian, as the device). n > 16 gives an invalid
    // argument (size 0) that pack_kernargs refuses.
    static LaunchArg scalar_bytes(const void *p, size_t n) {
        LaunchArg a;
        a.kind = Kind::Scalar;
        if (n <= kMaxScalarBytes && p != nullptr) {
            a.size = static_cast<uint32_t>(n);
            std::memcpy(a.bytes.data(), p, n);
        }
        return a;
    }
};

struct LaunchDims {
    uint32_t grid[3] = {1, 1, 1};   // work-groups per dimension
    uint32_t block[3] = {1, 1, 1};  // work-items per work-group
    uint32_t dynamic_lds_bytes = 0;
};

// LDS the runtime allocates per group: dynamic offset + (ROCclr's reservation of the pointer's
// .size bytes) + dynamic bytes. Launches above kLdsBytesPerGroup are refused.
constexpr uint32_t kLdsBytesPerGroup = 65536;
uint64_t runtime_lds_bytes(const KernelInfo &kernel, uint32_t dynamic_lds_bytes);

// Checks grid/block/LDS against the kernel's metadata: every dimension >= 1, block product
// <= .max_flat_workgroup_size (and .reqd_workgroup_size if present), grid*block per dimension
// < 2^32, LDS <= 64 KiB, dynamic LDS only for a kernel with a dynamic_shared_pointer argument.
Status check_launch_dims(const KernelInfo &kernel, const LaunchDims &dims);

// Packs the kernarg segment: zeroed, .kernarg_segment_size bytes, every explicit argument checked
// against the metadata (count, kind, size) and written at its offset, hidden arguments filled.
// Errors name the kernel and argument index.
Status pack_kernargs(const KernelInfo &kernel, const LaunchDims &dims, const std::vector<LaunchArg> &args,
                     std::vector<uint8_t> *out);

// Kernarg storage aligned to the segment alignment (at least 16, as HSA requires).
class KernargBuffer {
public:
    KernargBuffer() = default;
    KernargBuffer(const std::vector<uint8_t> &bytes, uint32_t align);
    KernargBuffer(const KernargBuffer &) = delete;
    KernargBuffer &operator=(const KernargBuffer &) = delete;
    ~KernargBuffer();
    void *data() const { return data_; }
    size_t size() const { return size_; }

private:
    void *data_ = nullptr;
    size_t size_ = 0;
    size_t align_ = 16;
};

// ------------------------------------------------------------------------------------------
// Launcher
// ------------------------------------------------------------------------------------------
struct CodeObjectImage {
    std::string arch;  // processor given to -mcpu ("gfx90a")
    const void *data = nullptr;
    size_t size = 0;
};

std::vector<CodeObjectImage> images_of(const EmbeddedCodeObjectSet &set);

class Launcher {
public:
    // Queries the current device (hipGetDevice + gcnArchName), selects the image whose processor
    // matches (and whose pinned features the device does not contradict), parses its metadata
    // and loads it with hipModuleLoadData. `name` labels messages (e.g. the pipeline).
    // The launcher is bound to the device current at create() (a HIP module belongs to one device):
    // launch on streams of that device. A set of devices needs one Launcher each.
    // No device, no matching image, a corrupt image or a failed load -> a Status, never a crash:
    // CONVBWD_DEVICE_ERROR (HIP failed / no device), CONVBWD_NOT_SUPPORTED (no image for this
    // GPU), CONVBWD_BAD_PARAM (unreadable code object).
    static Status create(std::shared_ptr<HipApi> api, std::vector<CodeObjectImage> images, std::string name,
                         std::unique_ptr<Launcher> *out);
    static Status create(std::shared_ptr<HipApi> api, const EmbeddedCodeObjectSet &set,
                         std::unique_ptr<Launcher> *out);
    ~Launcher();
    Launcher(const Launcher &) = delete;
    Launcher &operator=(const Launcher &) = delete;

    // Checks and launches `kernel` (asynchronous on `stream`, as hipModuleLaunchKernel).
    // Thread-safe; the function handle of each kernel is looked up once.
    Status launch(std::string_view kernel, const uint32_t grid[3], const uint32_t block[3],
                  uint32_t dynamic_lds_bytes, const std::vector<LaunchArg> &args, hipStream_t stream);
    Status launch(std::string_view kernel, const LaunchDims &dims, const std::vector<LaunchArg> &args,
                  hipStream_t stream);

    const std::string &device_arch() const { return device_arch_; }  // gcnArchName
    const std::string &image_arch() const { return image_arch_; }    // processor of the chosen image
    const CodeObjectInfo &code_object() const { return info_; }
    const KernelInfo *kernel(std::string_view name) const { return info_.find(name); }

private:
    Launcher() = default;
    Status function_for(const KernelInfo &k, hipFunction_t *f);

    std::shared_ptr<HipApi> api_;
    std::string name_;
    std::string device_arch_, image_arch_;
    CodeObjectInfo info_;
    hipModule_t module_ = nullptr;
    std::mutex mutex_;
    std::unordered_map<std::string, hipFunction_t> functions_;
};

}  // namespace convbwd::amdgpu
