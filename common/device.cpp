// The device factory and the buffer checks every backend shares (common/device.h).
#include "common/device.h"

namespace convbwd {

bool DeviceBuffer::report(bool ok, const std::string &msg, std::string *error) const {
    if (ok) return true;
    error_ = msg;
    if (error) *error = msg;
    return false;
}

bool DeviceBuffer::upload(const void *src, size_t bytes, std::string *error) {
    if (bytes > bytes_)
        return report(false, "upload of " + std::to_string(bytes) + " bytes into a buffer of " + std::to_string(bytes_), error);
    if (bytes == 0) return true;
    if (!src) return report(false, "upload from a null pointer", error);
    std::string msg;
    return report(copy_in(src, bytes, &msg), msg, error);
}

bool DeviceBuffer::download(void *dst, size_t bytes, std::string *error) const {
    if (bytes > bytes_)
        return report(false, "download of " + std::to_string(bytes) + " bytes from a buffer of " + std::to_string(bytes_),
                      error);
    if (bytes == 0) return true;
    if (!dst) return report(false, "download into a null pointer", error);
    std::string msg;
    return report(copy_out(dst, bytes, &msg), msg, error);
}

bool DeviceBuffer::fill_bytes(unsigned char value, std::string *error) {
    std::string msg;
    return report(fill(value, &msg), msg, error);
}

GpuDevice *gpu_device(Device d, std::string *why) {
    std::string reason;
    GpuDevice *dev = nullptr;
    switch (d) {
    case Device::Host: reason = "the host needs no device memory"; break;
#ifdef CONVBWD_WITH_CUDA
    case Device::Cuda: dev = detail::open_cuda_device(&reason); break;
#endif
#ifdef CONVBWD_WITH_OPENCL
    case Device::OpenCL: dev = detail::open_opencl_device(&reason); break;
#endif
#ifdef CONVBWD_WITH_HIP_DEVICE
    case Device::AmdGpu: dev = detail::open_hip_device(&reason); break;
#endif
    default:
        reason = std::string("this build has no ") + to_string(d) + " device support (CONVBWD_TARGETS without " +
                 to_string(d) + ")";
    }
    if (!dev && why) *why = reason;
    return dev;
}

namespace {
void *opencl_object_if_built(int which) {
#ifdef CONVBWD_WITH_OPENCL
    return detail::opencl_object(which);
#else
    (void)which;
    return nullptr;
#endif
}
}  // namespace

void *opencl_context() { return opencl_object_if_built(0); }
void *opencl_queue() { return opencl_object_if_built(1); }
void *opencl_device() { return opencl_object_if_built(2); }

}  // namespace convbwd
