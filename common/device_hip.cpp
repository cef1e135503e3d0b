// Device::AmdGpu behind common/device.h, over the library's own HipApi binding of libamdhip64
// (runtime/src/amdgpu/hip_api_real.cpp): no second binding of HIP here. Device 0, its null
// stream; the timer synchronises around a host clock.
#include <chrono>
#include <mutex>
#include <vector>

#include "common/device.h"
#include "runtime/src/amdgpu/hip_launcher.h"

namespace convbwd::detail {

namespace {

using amdgpu::HipApi;

double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string hip_msg(HipApi &api, const std::string &what, int e) {
    return what + ": " + api.errorString(e) + " (" + std::to_string(e) + ")";
}

class HipBuffer final : public DeviceBuffer {
public:
    HipBuffer(std::shared_ptr<HipApi> api, void *p, size_t bytes) : DeviceBuffer(bytes), api_(std::move(api)), p_(p) {}
    ~HipBuffer() override { api_->memFree(p_); }
    void *handle() const override { return p_; }

protected:
    bool copy_in(const void *src, size_t bytes, std::string *error) override {
        int e = api_->memcpyHtoD(p_, src, bytes);
        if (e != 0) *error = hip_msg(*api_, "hipMemcpyHtoD(" + std::to_string(bytes) + " bytes)", e);
        return e == 0;
    }
    bool copy_out(void *dst, size_t bytes, std::string *error) const override {
        int e = api_->memcpyDtoH(dst, p_, bytes);
        if (e != 0) *error = hip_msg(*api_, "hipMemcpyDtoH(" + std::to_string(bytes) + " bytes)", e);
        return e == 0;
    }
    bool fill(unsigned char value, std::string *error) override {  // HipApi has no memset: a host copy
        std::vector<unsigned char> bytes(size() ? size() : 1, value);
        return copy_in(bytes.data(), bytes.size(), error);
    }

private:
    std::shared_ptr<HipApi> api_;
    void *p_;
};

class HipDevice final : public GpuDevice {
public:
    explicit HipDevice(std::shared_ptr<HipApi> api) : api_(std::move(api)) {}
    Device device() const override { return Device::AmdGpu; }
    std::string name() const override {
        std::string arch;
        int dev = 0;
        return api_->getDevice(&dev) == 0 && api_->getDeviceArchName(dev, &arch) == 0 ? arch : "";
    }
    std::unique_ptr<DeviceBuffer> alloc(size_t bytes, std::string *error) override {
        void *p = nullptr;
        int e = api_->memAlloc(&p, bytes ? bytes : 1);
        if (e != 0 || !p) {
            if (error) *error = hip_msg(*api_, "hipMalloc(" + std::to_string(bytes) + " bytes)", e);
            return nullptr;
        }
        return std::make_unique<HipBuffer>(api_, p, bytes);
    }
    bool sync(std::string *error) override {
        int e = api_->streamSynchronize(nullptr);
        if (e != 0 && error) *error = hip_msg(*api_, "hipStreamSynchronize", e);
        return e == 0;
    }
    bool time(const std::function<bool()> &call, double *ms, std::string *error, void *stream) override {
        auto finish = [&](const char *what) {
            int e = api_->streamSynchronize((hipStream_t)stream);
            if (e != 0 && error) *error = hip_msg(*api_, what, e);
            return e == 0;
        };
        if (!finish("timer start: hipStreamSynchronize")) return false;
        const double t0 = now_ms();
        if (!call() || !finish("timer stop: hipStreamSynchronize")) return false;
        *ms = now_ms() - t0;
        return true;
    }

private:
    std::shared_ptr<HipApi> api_;
};

}  // namespace

GpuDevice *open_hip_device(std::string *why) {
    static std::string reason;
    static HipDevice *dev = []() -> HipDevice * {
        amdgpu::Status st;
        std::shared_ptr<HipApi> api = amdgpu::make_real_hip_api(&st);
        if (!api) {
            reason = "HIP unavailable: " + st.message;
            return nullptr;
        }
        int n = 0, e = api->getDeviceCount(&n);
        if (e != 0 || n == 0) {
            reason = "no AMD GPU: hipGetDeviceCount: " + (e ? api->errorString(e) : std::string("0 devices"));
            return nullptr;
        }
        return new HipDevice(std::move(api));
    }();
    if (!dev) *why = reason;
    return dev;
}

}  // namespace convbwd::detail
