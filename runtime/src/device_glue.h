// Device glue: how the runtime hands a caller's device memory and stream to Halide's GPU
// runtimes (CUDA, OpenCL) and to the HIP route of the amdgpu kernels, so kernels run on the
// caller's context and stream with no copies.
#pragma once

#include <string>

#include "HalideRuntime.h"
#include "internal.h"

namespace convbwd {

// Passed to every kernel as its user_context: the stream to run on and the kernel's error text.
struct CallContext {
    void *stream = nullptr;  // cudaStream_t / cl_command_queue / hipStream_t (NULL = default)
    std::string error;
    // The selected kernel's trait for the CUDA fragment rewrite (rewrite_fragment_copies): the bytes
    // of its 16-bit vector loads that the generator vouches aligned (input_channel_vector x 2).
    int aligned_load_bytes = 0;
    // Its trait that its copying loop runs one chunk ahead (copies_ahead(): the rewrite's cp.async waits).
    bool copies_ahead = false;
};

// Wraps caller memory `ptr` (device pointer or cl_mem) in buf for device d; undo with detach.
Status wrap_device(Device d, CallContext *ctx, halide_buffer_t *buf, void *ptr);
void detach_device(Device d, CallContext *ctx, halide_buffer_t *buf);

// Whether this build has kernels and a runtime for device d.
bool device_compiled(Device d);

// A function of libOpenCL.so.1 (loaded on first use), or nullptr where it cannot be loaded.
void *opencl_symbol(const char *name);

}  // namespace convbwd
