// OpenCL kernels that call matrix fragments (generators/fragments.h): their host pipelines'
// halide_opencl_initialize_kernels is renamed to the function below at build time
// (cmake/ConvbwdKernels.cmake, _conv_kernel_fragments). It puts the preludes in front of
// Halide's OpenCL C: on NVIDIA's OpenCL the inline-PTX one (generators/fragments/nvidia.cl, tensor
// cores for the 16x8x16 layout), then always the emulated one (generators/fragments/emulated.cl,
// every layout not taken natively), and declares the emulation's local scratch at the top of every
// kernel; then it hands the source to Halide's OpenCL runtime. CONVBWD_FRAGMENTS=emulated keeps
// NVIDIA on the emulation (to verify it there). Each kernel's source is rewritten once per choice
// and kept for the life of the process.
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "device_glue.h"

extern "C" int halide_opencl_initialize_kernels(void *user_context, void **state_ptr, const char *src, int size);

namespace convbwd {
namespace {

const char kEmulated[] =
#include "fragments_emulated.inc"
    ;
const char kNvidia[] =
#include "fragments_nvidia.inc"
    ;

// Whether the queue of this call (CallContext::stream) is on an NVIDIA device. Halide's host code
// calls the prelude step on every pipeline call: one queue query then, the vendor once a device.
bool on_nvidia(void *user_context) {
    auto *call = static_cast<CallContext *>(user_context);
    if (!call || !call->stream) return false;
    using Info = int (*)(void *, unsigned, size_t, void *, size_t *);
    static auto queue_info = (Info)opencl_symbol("clGetCommandQueueInfo");
    static auto device_info = (Info)opencl_symbol("clGetDeviceInfo");
    const unsigned kQueueDevice = 0x1091, kDeviceVendor = 0x102C;  // CL_QUEUE_DEVICE, CL_DEVICE_VENDOR
    void *device = nullptr;
    if (!queue_info || !device_info || queue_info(call->stream, kQueueDevice, sizeof(device), &device, nullptr) != 0 ||
        !device)
        return false;
    static std::mutex *mutex = new std::mutex;
    static auto *vendors = new std::map<void *, bool>;  // cl_device_id -> NVIDIA's
    std::lock_guard<std::mutex> lock(*mutex);
    auto it = vendors->find(device);
    if (it == vendors->end()) {
        char vendor[256] = {0};
        const bool nv = device_info(device, kDeviceVendor, sizeof(vendor) - 1, vendor, nullptr) == 0 &&
                        std::strstr(vendor, "NVIDIA") != nullptr;
        it = vendors->emplace(device, nv).first;
    }
    return it->second;
}

// The scratch the prelude's convbwd_frag_emulated works in: A (32 x 8) and B (8 x 32) floats.
constexpr const char *kScratch = "\n  __local float convbwd_frag_lds[512];\n";

std::string with_prelude(const char *src, int size, bool native) {
    std::string s(src, size > 0 ? (size_t)size : std::strlen(src));
    while (!s.empty() && s.back() == '\0') s.pop_back();
    std::string out = (native ? std::string(kNvidia) + "\n" : std::string()) + kEmulated + "\n";
    size_t pos = 0;
    for (;;) {
        const size_t k = s.find("__kernel void", pos);
        if (k == std::string::npos) break;
        const size_t body = s.find('{', k);  // a kernel's parameters hold no brace
        if (body == std::string::npos) break;
        out += s.substr(pos, body + 1 - pos);
        out += kScratch;
        pos = body + 1;
    }
    out += s.substr(pos);
    return out;
}

}  // namespace
}  // namespace convbwd

extern "C" int convbwd_opencl_fragments_initialize_kernels(void *user_context, void **state_ptr, const char *src,
                                                           int size) {
    static std::mutex *mutex = new std::mutex;  // never destroyed: pipelines may run at exit
    static auto *sources = new std::map<std::pair<const char *, bool>, std::string>;
    static const bool forced_emulation = [] {
        const char *f = std::getenv("CONVBWD_FRAGMENTS");
        return f && std::string(f) == "emulated";
    }();
    const bool native = !forced_emulation && convbwd::on_nvidia(user_context);
    const std::string *text;
    {
        std::lock_guard<std::mutex> lock(*mutex);
        auto it = sources->find({src, native});
        if (it == sources->end()) it = sources->emplace(std::make_pair(src, native), convbwd::with_prelude(src, size, native)).first;
        text = &it->second;
    }
    return halide_opencl_initialize_kernels(user_context, state_ptr, text->c_str(), (int)text->size() + 1);
}
