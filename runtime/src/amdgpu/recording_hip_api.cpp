#include "runtime/src/amdgpu/recording_hip_api.h"

#include <cstdlib>
#include <cstring>

namespace convbwd::amdgpu {

int RecordingHipApi::getDeviceCount(int *count) {
    if (fail_get_device_count) {
        *count = 0;
        return fail_get_device_count;
    }
    *count = device_count;
    return device_count > 0 ? kHipSuccess : kHipErrorNoDevice;
}

int RecordingHipApi::getDevice(int *device) {
    if (device_count <= 0) return kHipErrorNoDevice;
    *device = 0;
    return kHipSuccess;
}

int RecordingHipApi::getDeviceArchName(int device, std::string *out) {
    if (device < 0 || device >= device_count) return kHipErrorInvalidDevice;
    *out = arch;
    return kHipSuccess;
}

int RecordingHipApi::moduleLoadData(hipModule_t *module, const void *image) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (fail_load) return fail_load;
    if (!image) return kHipErrorInvalidValue;
    if (std::memcmp(image, "\x7f" "ELF", 4) != 0) return kHipErrorInvalidImage;
    loads++;
    loaded_image = image;
    module_ = reinterpret_cast<hipModule_t>(static_cast<uintptr_t>(0x1000 + loads));
    *module = module_;
    return kHipSuccess;
}

int RecordingHipApi::moduleUnload(hipModule_t module) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (module != module_) return kHipErrorInvalidValue;
    unloads++;
    return kHipSuccess;
}

int RecordingHipApi::moduleGetFunction(hipFunction_t *function, hipModule_t module, const char *name) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (fail_get_function) return fail_get_function;
    if (module != module_ || module == nullptr) return kHipErrorInvalidValue;
    functions_requested.push_back(name);
    // Handle = 1 + index into functions_requested.
    *function = reinterpret_cast<hipFunction_t>(static_cast<uintptr_t>(functions_requested.size()));
    return kHipSuccess;
}

int RecordingHipApi::moduleLaunchKernel(hipFunction_t function, const uint32_t grid[3], const uint32_t block[3],
                                        uint32_t shared_mem_bytes, hipStream_t stream, void **kernel_params,
                                        void **extra) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (fail_launch) return fail_launch;
    const uintptr_t id = reinterpret_cast<uintptr_t>(function);
    if (id == 0 || id > functions_requested.size()) return kHipErrorInvalidValue;
    if ((kernel_params == nullptr) == (extra == nullptr)) return kHipErrorInvalidValue;
    Launch l;
    l.function = functions_requested[id - 1];
    for (int j = 0; j < 3; j++) {
        l.grid[j] = grid[j];
        l.block[j] = block[j];
    }
    l.shared_mem_bytes = shared_mem_bytes;
    l.stream = stream;
    if (extra) {
        // HIP accepts exactly {BUFFER_POINTER, p, BUFFER_SIZE, &size, END}.
        if (extra[0] != kHipLaunchParamBufferPointer || extra[2] != kHipLaunchParamBufferSize ||
            extra[4] != kHipLaunchParamEnd || extra[3] == nullptr)
            return kHipErrorInvalidValue;
        l.via_extra = true;
        l.buffer_address = reinterpret_cast<uintptr_t>(extra[1]);
        l.extra_size = *static_cast<const size_t *>(extra[3]);
        if (l.extra_size && !extra[1]) return kHipErrorInvalidValue;
        const auto *p = static_cast<const uint8_t *>(extra[1]);
        l.kernargs.assign(p, p + l.extra_size);
    }
    launches.push_back(std::move(l));
    return kHipSuccess;
}

int RecordingHipApi::memAlloc(void **ptr, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (fail_malloc) return fail_malloc;
    *ptr = std::calloc(bytes ? bytes : 1, 1);
    if (!*ptr) return kHipErrorInvalidValue;
    allocations.emplace_back(reinterpret_cast<uintptr_t>(*ptr), bytes);
    return kHipSuccess;
}
int RecordingHipApi::memFree(void *ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    frees.push_back(reinterpret_cast<uintptr_t>(ptr));
    std::free(ptr);
    return kHipSuccess;
}
int RecordingHipApi::memcpyHtoD(void *dst, const void *src, size_t bytes) {
    if (fail_memcpy) return fail_memcpy;
    std::memcpy(dst, src, bytes);
    return kHipSuccess;
}
int RecordingHipApi::memcpyDtoH(void *dst, const void *src, size_t bytes) {
    if (fail_memcpy) return fail_memcpy;
    std::memcpy(dst, src, bytes);
    return kHipSuccess;
}
int RecordingHipApi::streamSynchronize(hipStream_t stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    syncs.push_back(stream);
    return fail_sync ? fail_sync : kHipSuccess;
}

std::string RecordingHipApi::errorString(int e) {
    switch (e) {
        case kHipSuccess: return "hipSuccess (0)";
        case kHipErrorInvalidValue: return "hipErrorInvalidValue (1)";
        case kHipErrorOutOfMemory: return "hipErrorOutOfMemory (2)";
        case kHipErrorNoDevice: return "hipErrorNoDevice (100)";
        case kHipErrorInvalidDevice: return "hipErrorInvalidDevice (101)";
        case kHipErrorInvalidImage: return "hipErrorInvalidImage (200)";
        case kHipErrorNotFound: return "hipErrorNotFound (500)";
        case kHipErrorLaunchFailure: return "hipErrorLaunchFailure (719)";
        default: return "hipError " + std::to_string(e);
    }
}

}  // namespace convbwd::amdgpu
