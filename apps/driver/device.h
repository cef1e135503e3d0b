// The driver's view of a GPU target: buffers, synchronisation, the stream to pass as
// convbwd_exec.stream and a timer. Backed by common/device_memory.h where the build has that
// backend (CONVBWD_WITH_CUDA, CONVBWD_WITH_OPENCL); otherwise open_target() says why not. The
// host target needs none of this: HostTensor storage goes to the library as it is.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "convbwd/convbwd.h"

namespace convbwd::driver {

class TargetBuffer {
public:
    virtual ~TargetBuffer() = default;
    // What convbwd_tensor.data / exec.workspace take on the target (CUdeviceptr, cl_mem).
    virtual void *handle() const = 0;
    virtual bool upload(const void *src, size_t bytes, std::string *error) = 0;
    virtual bool download(void *dst, size_t bytes, std::string *error) const = 0;
};

class TargetDevice {
public:
    virtual ~TargetDevice() = default;
    virtual std::string name() const = 0;
    virtual std::unique_ptr<TargetBuffer> alloc(size_t bytes, std::string *error) = 0;
    virtual bool sync(std::string *error) = 0;
    virtual void *stream() const = 0;  // convbwd_exec.stream
    // Runs call() once and measures it on the device (CUDA events; OpenCL: clFinish at both
    // ends). False with *error if call() or the timer failed.
    virtual bool time(const std::function<bool()> &call, double *ms, std::string *error) = 0;
};

// nullptr with *error when this build has no device memory for t or no device of it is usable.
std::unique_ptr<TargetDevice> open_target(convbwd_target t, std::string *error);

}  // namespace convbwd::driver
