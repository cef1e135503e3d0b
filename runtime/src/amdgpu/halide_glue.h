// Halide host code -> HIP: what the amdgpu kernels' host pipelines call instead of Halide's
// OpenCL runtime, and the test hooks of that route.
//
// Each amdgpu kernel is Halide's host pipeline for an OpenCL target (an object file) whose OpenCL
// runtime entry points are renamed at build time (tools/amdgpu/route_to_hip.cmake):
//   halide_opencl_initialize_kernels -> convbwd_hip_initialize_kernels_<kernel> (generated, calls
//                                       convbwd_hip_initialize_kernels with the kernel's code objects)
//   halide_opencl_run                -> convbwd_hip_run
//   halide_opencl_finalize_kernels   -> convbwd_hip_finalize_kernels
//   halide_opencl_device_interface   -> convbwd_hip_device_interface
// so its launches go to the embedded AMDGPU code objects through Launcher (hip_launcher.h), on the
// stream of the call (convbwd::CallContext::stream, from exec.stream), and its buffers are HIP
// device pointers (halide_buffer_t::device = the address; device_interface = the HIP interface).
//
// Halide's arguments to run (Halide 21, CodeGen_GPU_Host, as the OpenCL runtime reads them):
// arg_sizes[] is 0-terminated; for arg_is_buffer[i] args[i] is the halide_buffer_t* (its device
// field is the device address here), otherwise args[i] points at the scalar's arg_sizes[i] bytes;
// the kernel's trailing __local pointer is not in the list: its size is shared_mem_bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/src/amdgpu/embedded_code_objects.h"
#include "runtime/src/amdgpu/hip_launcher.h"

struct halide_buffer_t;
struct halide_device_interface_t;

extern "C" {
int convbwd_hip_initialize_kernels(void *user_context, void **state_ptr,
                                   const convbwd::amdgpu::EmbeddedCodeObjectSet *code_objects);
int convbwd_hip_run(void *user_context, void *state_ptr, const char *entry_name, int blocksX, int blocksY,
                    int blocksZ, int threadsX, int threadsY, int threadsZ, int shared_mem_bytes, size_t arg_sizes[],
                    void *args[], int8_t arg_is_buffer[]);
void convbwd_hip_finalize_kernels(void *user_context, void *state_ptr);
const struct halide_device_interface_t *convbwd_hip_device_interface();
}

namespace convbwd::amdgpu {

// The HIP API of the route: libamdhip64 (make_real_hip_api, loaded on first use) unless one was
// installed here. Installing (tests: a RecordingHipApi) drops every cached Launcher; nullptr goes
// back to the real API.
void set_hip_api(std::shared_ptr<HipApi> api);

// The HIP API in use, loading the real one if none was installed. nullptr + *status if it fails.
std::shared_ptr<HipApi> hip_api(Status *status);

// Wraps caller memory (a HIP device address) in buf / undoes it. Wrapping checks that HIP loads
// and reports a device: else -1 and the reason in *message.
int hip_wrap_device_ptr(halide_buffer_t *buf, uint64_t device_ptr, std::string *message);
void hip_detach_device_ptr(halide_buffer_t *buf);

// Test hook: what Halide's host code passed to one convbwd_hip_run call, recorded before the
// launch (so also for launches the HIP API then fails).
struct HalideRunRecord {
    std::string code_objects;  // EmbeddedCodeObjectSet::name (the kernel)
    std::string entry;
    uint32_t blocks[3] = {0, 0, 0};
    uint32_t threads[3] = {0, 0, 0};
    uint32_t shared_mem_bytes = 0;
    struct Arg {
        size_t size = 0;
        bool is_buffer = false;
        uint64_t device = 0;         // buffer: halide_buffer_t::device (the device address)
        std::vector<uint8_t> bytes;  // scalar: its arg_sizes[i] bytes
    };
    std::vector<Arg> args;
};
using RunObserver = std::function<void(const HalideRunRecord &)>;
void set_run_observer(RunObserver observer);  // empty removes it

}  // namespace convbwd::amdgpu
