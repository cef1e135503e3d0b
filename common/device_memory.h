// Device memory for the test and driver side: RAII buffers on a CUDA or OpenCL device, the
// process-wide OpenCL context and queue, synchronization and a device timer.
//
// Each backend is compiled in only where its macro is defined (CONVBWD_WITH_CUDA: CUDA runtime
// API, link cudart; CONVBWD_WITH_OPENCL: OpenCL 1.2 C API, its entry points taken from
// libOpenCL.so.1 with dlopen at first use, so link only -ldl and a machine without an OpenCL
// loader reports OpenCL unavailable); a backend left out reports itself unavailable.
// No function here throws or aborts: every failed API call becomes a message (`error`, `why`,
// last_error()) and a false / null / negative result.
//
// CUDA: device 0 of the CUDA runtime (honours CUDA_VISIBLE_DEVICES), its primary context;
// handle() is the device address (a CUdeviceptr, as void*). Copies are cudaMemcpy: synchronous
// with the host and ordered after the legacy default stream, not after work on other streams.
// OpenCL: one context and one in-order command queue for the whole process, created on first
// use on the first GPU device of any platform, else the first device of any type (PoCL's CPU
// device, say); handle() is the cl_mem. Copies are blocking reads / writes on that queue.
// The library takes that queue as convbwd_exec.stream (opencl_queue()).
// HIP (AMD GPUs, target amdgpu): always compiled; libamdhip64 is loaded with dlopen at first use,
// so a machine without ROCm reports HIP unavailable. Device 0 of the HIP runtime; handle() is the
// device address; copies are hipMemcpy; the timer synchronizes the device around a host clock.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace convbwd {

enum class DeviceKind { Cuda, OpenCL, Hip };

inline const char *to_string(DeviceKind k) {
    return k == DeviceKind::Cuda ? "cuda" : k == DeviceKind::OpenCL ? "opencl" : "hip";
}

// Whether this build has the backend and a device of it can be used (for OpenCL this creates
// the process-wide context and queue). On false, *why (if given) says why.
bool device_available(DeviceKind kind, std::string *why = nullptr);

// The device buffers go to ("NVIDIA H100 80GB HBM3", "pthread-haswell-AMD EPYC" for PoCL); "" if none.
std::string device_name(DeviceKind kind);

// Waits for all work of the device (CUDA: cudaDeviceSynchronize; OpenCL: clFinish of the
// process queue). Returns false with *error on failure (also for an asynchronous kernel error).
bool device_synchronize(DeviceKind kind, std::string *error = nullptr);

// The process-wide OpenCL objects (cl_context, cl_command_queue, cl_device_id), created on
// first use; nullptr if OpenCL is not built in or no device could be opened.
void *opencl_context();
void *opencl_queue();
void *opencl_device();

class DeviceBuffer {
public:
    // A buffer of `bytes` bytes (0 is allowed: a 1-byte allocation stands behind it), contents
    // undefined. nullptr with *error on failure (backend not built in, no device, out of memory).
    static std::unique_ptr<DeviceBuffer> create(DeviceKind kind, size_t bytes, std::string *error = nullptr);
    ~DeviceBuffer();
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;

    // Host -> device / device -> host of the first `bytes` bytes (bytes <= size()); they return
    // when the copy is complete. False on failure, with the message in last_error().
    bool upload(const void *src, size_t bytes);
    bool download(void *dst, size_t bytes) const;
    // Sets every byte of the buffer to `value` (complete on return).
    bool fill_bytes(unsigned char value);

    // CUDA: the device pointer (CUdeviceptr value). OpenCL: the cl_mem.
    void *handle() const { return handle_; }
    DeviceKind kind() const { return kind_; }
    size_t size() const { return bytes_; }
    const std::string &last_error() const { return error_; }

private:
    DeviceBuffer(DeviceKind kind, void *handle, size_t bytes) : kind_(kind), handle_(handle), bytes_(bytes) {}
    DeviceKind kind_;
    void *handle_;
    size_t bytes_;
    mutable std::string error_;
};

// Elapsed device time between start() and stop_ms(). CUDA: two events recorded on `stream`
// (a cudaStream_t, nullptr = legacy default stream), stop_ms() waits for the stop event.
// OpenCL: clFinish of the queue (a cl_command_queue, nullptr = the process queue) and
// std::chrono::steady_clock at both ends. stop_ms() returns -1 on failure (see error()).
class DeviceTimer {
public:
    explicit DeviceTimer(DeviceKind kind, void *stream = nullptr);
    ~DeviceTimer();
    DeviceTimer(const DeviceTimer &) = delete;
    DeviceTimer &operator=(const DeviceTimer &) = delete;

    void start();
    double stop_ms();
    const std::string &error() const { return error_; }

private:
    DeviceKind kind_;
    void *stream_;
    void *ev_start_ = nullptr, *ev_stop_ = nullptr;  // cudaEvent_t
    double t0_ms_ = 0;
    bool started_ = false;
    std::string error_;
};

}  // namespace convbwd
