#include "apps/driver/device.h"

#ifdef CONVBWD_WITH_DEVICE_MEMORY
#define CONVBWD_DRIVER_HAS_DEVICES 1
#include "common/device_memory.h"
#endif

namespace convbwd::driver {

#ifdef CONVBWD_DRIVER_HAS_DEVICES
namespace {

class Buffer : public TargetBuffer {
public:
    explicit Buffer(std::unique_ptr<DeviceBuffer> b) : b_(std::move(b)) {}
    void *handle() const override { return b_->handle(); }
    bool upload(const void *src, size_t bytes, std::string *error) override {
        if (b_->upload(src, bytes)) return true;
        return *error = b_->last_error(), false;
    }
    bool download(void *dst, size_t bytes, std::string *error) const override {
        if (b_->download(dst, bytes)) return true;
        return *error = b_->last_error(), false;
    }

private:
    std::unique_ptr<DeviceBuffer> b_;
};

class Device : public TargetDevice {
public:
    explicit Device(DeviceKind k) : kind_(k) {}
    std::string name() const override { return device_name(kind_); }
    std::unique_ptr<TargetBuffer> alloc(size_t bytes, std::string *error) override {
        auto b = DeviceBuffer::create(kind_, bytes, error);
        if (!b) return nullptr;
        return std::make_unique<Buffer>(std::move(b));
    }
    bool sync(std::string *error) override { return device_synchronize(kind_, error); }
    void *stream() const override { return kind_ == DeviceKind::OpenCL ? opencl_queue() : nullptr; }
    bool time(const std::function<bool()> &call, double *ms, std::string *error) override {
        DeviceTimer t(kind_, stream());
        t.start();
        if (!t.error().empty()) return *error = t.error(), false;
        if (!call()) return false;
        *ms = t.stop_ms();
        if (*ms < 0) return *error = t.error(), false;
        return true;
    }

private:
    DeviceKind kind_;
};

}  // namespace
#endif

std::unique_ptr<TargetDevice> open_target(convbwd_target t, std::string *error) {
    const char *names[] = {"host", "opencl", "cuda", "amdgpu"};
    const std::string name = (unsigned)t < 4 ? names[t] : "?";
#ifdef CONVBWD_DRIVER_HAS_DEVICES
    if (t == CONVBWD_TARGET_CUDA || t == CONVBWD_TARGET_OPENCL || t == CONVBWD_TARGET_AMDGPU) {
        DeviceKind k = t == CONVBWD_TARGET_CUDA     ? DeviceKind::Cuda
                       : t == CONVBWD_TARGET_OPENCL ? DeviceKind::OpenCL
                                                    : DeviceKind::Hip;
        std::string why;
        if (!device_available(k, &why)) {
            *error = "no usable " + name + " device: " + why;
            return nullptr;
        }
        return std::make_unique<Device>(k);
    }
#endif
    *error = "this convbwd-driver has no device memory for " + name +
             " (built without GPU targets)";
    return nullptr;
}

}  // namespace convbwd::driver
