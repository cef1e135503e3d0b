// A HipApi that runs nothing and records every call: the device it reports, failures to inject,
// and each launch's grid, block, dynamic LDS, stream and a copy of its kernarg bytes. For tests
// of the Launcher on machines without an AMD GPU.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/src/amdgpu/hip_launcher.h"

namespace convbwd::amdgpu {

class RecordingHipApi : public HipApi {
public:
    struct Launch {
        std::string function;  // kernel name given to moduleGetFunction
        uint32_t grid[3] = {0, 0, 0};
        uint32_t block[3] = {0, 0, 0};
        uint32_t shared_mem_bytes = 0;
        hipStream_t stream = nullptr;
        bool via_extra = false;        // kernarg buffer passed through `extra`
        size_t extra_size = 0;         // HIP_LAUNCH_PARAM_BUFFER_SIZE
        uintptr_t buffer_address = 0;  // HIP_LAUNCH_PARAM_BUFFER_POINTER
        std::vector<uint8_t> kernargs;  // copy of the buffer (extra_size bytes)
    };

    // What the fake device reports / which calls fail (0 = succeed, else the hipError_t value).
    int device_count = 1;
    std::string arch = "gfx90a:sramecc+:xnack-";
    int fail_get_device_count = 0;
    int fail_load = 0;
    int fail_get_function = 0;
    int fail_launch = 0;
    int fail_malloc = 0;
    int fail_memcpy = 0;
    int fail_sync = 0;

    // Records.
    int loads = 0;
    int unloads = 0;
    const void *loaded_image = nullptr;
    std::vector<std::string> functions_requested;
    std::vector<Launch> launches;
    // Device memory (memAlloc is host calloc here): every allocation and free, and the
    // synchronizations (streams given).
    std::vector<std::pair<uintptr_t, size_t>> allocations;
    std::vector<uintptr_t> frees;
    std::vector<hipStream_t> syncs;

    int getDeviceCount(int *count) override;
    int getDevice(int *device) override;
    int getDeviceArchName(int device, std::string *arch) override;
    int moduleLoadData(hipModule_t *module, const void *image) override;
    int moduleUnload(hipModule_t module) override;
    int moduleGetFunction(hipFunction_t *function, hipModule_t module, const char *name) override;
    int moduleLaunchKernel(hipFunction_t function, const uint32_t grid[3], const uint32_t block[3],
                           uint32_t shared_mem_bytes, hipStream_t stream, void **kernel_params, void **extra) override;
    int memAlloc(void **ptr, size_t bytes) override;
    int memFree(void *ptr) override;
    int memcpyHtoD(void *dst, const void *src, size_t bytes) override;
    int memcpyDtoH(void *dst, const void *src, size_t bytes) override;
    int streamSynchronize(hipStream_t stream) override;
    std::string errorString(int error) override;

    std::vector<Launch> launches_copy() {
        std::lock_guard<std::mutex> lock(mutex_);
        return launches;
    }
    // Forgets the records (launches, allocations, frees, syncs); keeps the module and functions.
    void clear_records() {
        std::lock_guard<std::mutex> lock(mutex_);
        launches.clear();
        allocations.clear();
        frees.clear();
        syncs.clear();
    }

private:
    std::mutex mutex_;
    hipModule_t module_ = nullptr;
};

}  // namespace convbwd::amdgpu
