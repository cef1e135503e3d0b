// Device::Cuda behind common/device.h: the CUDA runtime API, device 0, its primary context.
#include <cuda_runtime_api.h>

#include <mutex>

#include "common/device.h"

namespace convbwd::detail {

namespace {

// "cudaMalloc(4096 bytes): out of memory (cudaErrorMemoryAllocation)"; also clears this
// thread's last (non-sticky) error so that the next call starts clean.
std::string cuda_msg(const std::string &what, cudaError_t e) {
    cudaGetLastError();
    return what + ": " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")";
}

class CudaBuffer final : public DeviceBuffer {
public:
    CudaBuffer(void *p, size_t bytes) : DeviceBuffer(bytes), p_(p) {}
    ~CudaBuffer() override {
        if (cudaFree(p_) != cudaSuccess) cudaGetLastError();
    }
    void *handle() const override { return p_; }

protected:
    bool copy_in(const void *src, size_t bytes, std::string *error) override {
        cudaError_t e = cudaMemcpy(p_, src, bytes, cudaMemcpyHostToDevice);
        if (e != cudaSuccess) *error = cuda_msg("cudaMemcpy(host to device, " + std::to_string(bytes) + " bytes)", e);
        return e == cudaSuccess;
    }
    bool copy_out(void *dst, size_t bytes, std::string *error) const override {
        cudaError_t e = cudaMemcpy(dst, p_, bytes, cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) *error = cuda_msg("cudaMemcpy(device to host, " + std::to_string(bytes) + " bytes)", e);
        return e == cudaSuccess;
    }
    bool fill(unsigned char value, std::string *error) override {
        cudaError_t e = cudaMemset(p_, value, size() ? size() : 1);
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        if (e != cudaSuccess) *error = cuda_msg("cudaMemset(" + std::to_string(size()) + " bytes)", e);
        return e == cudaSuccess;
    }

private:
    void *p_;
};

class CudaDevice final : public GpuDevice {
public:
    Device device() const override { return Device::Cuda; }
    std::string name() const override {
        int dev = 0;
        cudaDeviceProp prop;
        if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
            cudaGetLastError();
            return "";
        }
        return prop.name;
    }
    std::unique_ptr<DeviceBuffer> alloc(size_t bytes, std::string *error) override {
        void *p = nullptr;
        cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
        if (e != cudaSuccess || !p) {
            if (error) *error = cuda_msg("cudaMalloc(" + std::to_string(bytes) + " bytes)", e);
            return nullptr;
        }
        return std::make_unique<CudaBuffer>(p, bytes);
    }
    bool sync(std::string *error) override {
        cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess && error) *error = cuda_msg("cudaDeviceSynchronize", e);
        return e == cudaSuccess;
    }
    bool time(const std::function<bool()> &call, double *ms, std::string *error, void *stream) override {
        std::lock_guard<std::mutex> lock(mu_);
        cudaError_t e = cudaSuccess;
        if (!start_) e = cudaEventCreate(&start_);
        if (e == cudaSuccess && !stop_) e = cudaEventCreate(&stop_);
        if (e == cudaSuccess) e = cudaEventRecord(start_, (cudaStream_t)stream);
        if (e != cudaSuccess) {
            if (error) *error = cuda_msg("timer start", e);
            return false;
        }
        if (!call()) return false;
        float t = 0;
        e = cudaEventRecord(stop_, (cudaStream_t)stream);
        if (e == cudaSuccess) e = cudaEventSynchronize(stop_);
        if (e == cudaSuccess) e = cudaEventElapsedTime(&t, start_, stop_);
        if (e != cudaSuccess) {
            if (error) *error = cuda_msg("timer stop", e);
            return false;
        }
        *ms = t;
        return true;
    }

private:
    std::mutex mu_;
    cudaEvent_t start_ = nullptr, stop_ = nullptr;  // never destroyed: the device outlives main
};

}  // namespace

GpuDevice *open_cuda_device(std::string *why) {
    static std::string reason;
    static CudaDevice *dev = [] {
        int n = 0;
        cudaError_t e = cudaGetDeviceCount(&n);
        if (e != cudaSuccess) reason = cuda_msg("cudaGetDeviceCount", e);
        else if (n == 0) reason = "no CUDA device";
        return reason.empty() ? new CudaDevice : nullptr;
    }();
    if (!dev) *why = reason;
    return dev;
}

}  // namespace convbwd::detail
