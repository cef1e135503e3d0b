// OpenCL kernels that call matrix fragments (generators/fragments.h): their host pipelines'
// halide_opencl_initialize_kernels is renamed to the function below at build time
// (cmake/ConvbwdKernels.cmake, _conv_kernel_opencl_fragments). It puts the emulated prelude
// (generators/fragments/emulated.cl) in front of Halide's OpenCL C and declares the prelude's local
// scratch at the top of every kernel, then hands the source to Halide's OpenCL runtime. Each
// kernel's source is rewritten once and kept for the life of the process.
#include <cstring>
#include <map>
#include <mutex>
#include <string>

extern "C" int halide_opencl_initialize_kernels(void *user_context, void **state_ptr, const char *src, int size);

namespace convbwd {
namespace {

const char kPrelude[] =
#include "fragments_emulated.inc"
    ;

// The scratch the prelude's convbwd_frag_emulated works in: A (32 x 8) and B (8 x 32) floats.
constexpr const char *kScratch = "\n  __local float convbwd_frag_lds[512];\n";

std::string with_prelude(const char *src, int size) {
    std::string s(src, size > 0 ? (size_t)size : std::strlen(src));
    while (!s.empty() && s.back() == '\0') s.pop_back();
    std::string out = std::string(kPrelude) + "\n";
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
    static auto *sources = new std::map<const char *, std::string>;
    const std::string *text;
    {
        std::lock_guard<std::mutex> lock(*mutex);
        auto it = sources->find(src);
        if (it == sources->end()) it = sources->emplace(src, convbwd::with_prelude(src, size)).first;
        text = &it->second;
    }
    return halide_opencl_initialize_kernels(user_context, state_ptr, text->c_str(), (int)text->size() + 1);
}
