// GPU devices for the test, driver and tuner side: one interface, one backend file per device.
//
//   GpuDevice     a device of one kind (its buffers, synchronisation, the stream to pass as
//                 convbwd_exec.stream, a timer); gpu_device(Device) gives the process-wide one.
//   DeviceBuffer  RAII device memory; handle() is what convbwd_tensor.data and
//                 convbwd_exec.workspace take on that device.
//
// Backends (each compiled only where the build has it; a backend left out, or one whose
// runtime is missing on this machine, makes gpu_device() return nullptr with the reason):
//   device_cuda.cpp    Device::Cuda (CONVBWD_WITH_CUDA, links cudart). Device 0 of the CUDA runtime
//                      (honours CUDA_VISIBLE_DEVICES), its primary context; handle() is the device
//                      address. Copies are cudaMemcpy (ordered after the legacy default stream);
//                      the timer records CUDA events on the given stream.
//   device_opencl.cpp  Device::OpenCL (CONVBWD_WITH_OPENCL; libOpenCL.so.1 taken with dlopen at
//                      first use, so a machine without an ICD loader reports OpenCL unavailable).
//                      One context and one in-order queue for the process, on the first GPU of any
//                      platform, else the first device of any type (PoCL's CPU device); handle()
//                      is the cl_mem; the library takes the queue as convbwd_exec.stream.
//   device_hip.cpp     Device::AmdGpu (builds with the amdgpu target): the library's own HipApi
//                      binding of libamdhip64 (runtime/src/amdgpu), so libamdhip64 is bound in one
//                      place. Device 0; handle() is the device address; the timer synchronises
//                      around a host clock.
// No function here throws or aborts: a failed API call becomes a message and a false / null
// result.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "convbwd/convbwd.h"
#include "generators/conv_problem.h"

namespace convbwd {

class DeviceBuffer {
public:
    virtual ~DeviceBuffer() = default;
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;

    // CUDA / HIP: the device address. OpenCL: the cl_mem.
    virtual void *handle() const = 0;
    size_t size() const { return bytes_; }

    // Host -> device / device -> host of the first `bytes` bytes (bytes <= size()); they return
    // when the copy is complete. False on failure, with the message in *error and last_error().
    bool upload(const void *src, size_t bytes, std::string *error = nullptr);
    bool download(void *dst, size_t bytes, std::string *error = nullptr) const;
    // Sets every byte of the buffer to `value` (complete on return).
    bool fill_bytes(unsigned char value, std::string *error = nullptr);
    const std::string &last_error() const { return error_; }

protected:
    explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {}
    // The backend's copies and fill; arguments already checked (bytes > 0, pointers non-null).
    virtual bool copy_in(const void *src, size_t bytes, std::string *error) = 0;
    virtual bool copy_out(void *dst, size_t bytes, std::string *error) const = 0;
    virtual bool fill(unsigned char value, std::string *error) = 0;

private:
    bool report(bool ok, const std::string &msg, std::string *error) const;
    size_t bytes_;
    mutable std::string error_;
};

class GpuDevice {
public:
    virtual ~GpuDevice() = default;
    virtual Device device() const = 0;
    // "NVIDIA H100 80GB HBM3", "pthread-haswell-AMD EPYC" (PoCL), "gfx90a:sramecc+:xnack-".
    virtual std::string name() const = 0;
    // `bytes` bytes (0 is allowed: 1 byte stands behind it), contents undefined; nullptr with
    // *error on failure (out of memory, over the device's largest allocation).
    virtual std::unique_ptr<DeviceBuffer> alloc(size_t bytes, std::string *error = nullptr) = 0;
    // Waits for all work of the device; false with *error (also for an asynchronous kernel error).
    virtual bool sync(std::string *error = nullptr) = 0;
    // What convbwd_exec.stream takes for work on this device (the OpenCL queue; nullptr for
    // CUDA's legacy default stream and HIP's null stream).
    virtual void *stream() const { return nullptr; }
    // Runs call() once and measures it on the device: CUDA events recorded on `stream`
    // (nullptr: the legacy default stream); OpenCL and HIP: a synchronisation at both ends
    // around the host clock. False with *error if call() or the timer failed.
    virtual bool time(const std::function<bool()> &call, double *ms, std::string *error = nullptr,
                      void *stream = nullptr) = 0;
};

// The process-wide device of kind d (created on first use, never destroyed); nullptr for
// Device::Host, or with *why when this build lacks the backend or no device of it is usable.
GpuDevice *gpu_device(Device d, std::string *why = nullptr);

// The process-wide OpenCL objects (cl_context, cl_command_queue, cl_device_id) behind
// gpu_device(Device::OpenCL); nullptr if OpenCL is not built in or no device could be opened.
void *opencl_context();
void *opencl_queue();
void *opencl_device();

namespace detail {
// Each backend file defines its opener; device.cpp calls the ones the build has.
GpuDevice *open_cuda_device(std::string *why);
GpuDevice *open_opencl_device(std::string *why);
GpuDevice *open_hip_device(std::string *why);
void *opencl_object(int which);  // 0 context, 1 queue, 2 device
}  // namespace detail

}  // namespace convbwd
