// OpenCL kernels that call matrix fragments (generators/fragments.h): their host pipelines'
// halide_opencl_initialize_kernels is renamed to the function below at build time
// (cmake/ConvbwdKernels.cmake, _conv_kernel_fragments). It puts the preludes in front of
// Halide's OpenCL C: on NVIDIA's OpenCL the inline-PTX one (generators/fragments/nvidia.cl, tensor
// cores for the 16x8x16 layout), then always the emulated one (generators/fragments/emulated.cl,
// every layout not taken natively), and declares the emulation's local scratch at the top of every
// kernel; then it hands the source to Halide's OpenCL runtime. CONVBWD_FRAGMENTS=emulated keeps
// NVIDIA on the emulation (to verify it there). Where the source's calls come in whole k-block
// groups (fragment_calls_grouped), the emulation exchanges operands once a k-block instead of once a
// call (CONVBWD_FRAG_GROUPED). Each kernel's source is rewritten once per choice and kept for the
// life of the process.
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "device_glue.h"
#include "opencl_fragments.h"

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

// The calls' names (generators/fragments.h: op_name) and their groups' sizes (frag::Shape::elems).
struct FragmentOp {
    const char *prefix;
    int elems;
};
constexpr FragmentOp kFragmentOps[] = {{"convbwd_mma16x8x16_", 4}, {"convbwd_mfma32x32x8_", 16}};

}  // namespace

bool fragment_calls_grouped(const std::string &src, std::string *why) {
    auto fail = [&](size_t at, const std::string &what) {
        if (why) *why = what + " at offset " + std::to_string(at);
        return false;
    };
    std::string prev_args;  // the current group's operands (the arguments before i)
    int next = 0, elems = 0;  // the element the next call of the group must have; the group's size
    size_t prev_end = 0;
    for (size_t pos = 0;;) {
        size_t at = std::string::npos;
        const FragmentOp *op = nullptr;
        for (const FragmentOp &o : kFragmentOps) {
            const size_t p = src.find(o.prefix, pos);
            if (p < at) at = p, op = &o;
        }
        if (at == std::string::npos) break;
        const size_t open = src.find('(', at);
        if (open == std::string::npos) return fail(at, "a fragment call without arguments");
        size_t close = open;
        for (int depth = 0; close < src.size(); close++) {
            if (src[close] == '(') depth++;
            if (src[close] == ')' && --depth == 0) break;
        }
        const size_t comma = src.rfind(',', close);
        if (close >= src.size() || comma == std::string::npos || comma < open)
            return fail(at, "a fragment call not closed");
        const std::string args = src.substr(at, comma - at), last = src.substr(comma + 1, close - comma - 1);
        int i = -1;  // the element: a literal
        for (char ch : last) {
            if (ch == ' ') continue;
            if (ch < '0' || ch > '9' || i > 99) return fail(at, "a fragment call whose element is not a literal");
            i = (i < 0 ? 0 : 10 * i) + (ch - '0');
        }
        if (i < 0) return fail(at, "a fragment call whose element is not a literal");
        if (next > 0) {  // inside a group: the same operands, nothing between but straight-line code
            const std::string between = src.substr(prev_end, at - prev_end);
            if (args != prev_args || i != next || between.find_first_of("{}") != std::string::npos ||
                between.find("barrier(") != std::string::npos)
                return fail(at, "a group of fragment calls broken (element " + std::to_string(i) + ", expected " +
                                    std::to_string(next) + ")");
        } else if (i != 0) {
            return fail(at, "a group of fragment calls that does not start at element 0");
        } else {
            elems = op->elems;
        }
        prev_args = args;
        next = i + 1 == elems ? 0 : i + 1;
        prev_end = close + 1;
        pos = close + 1;
    }
    if (next != 0) return fail(prev_end, "a group of fragment calls not finished");
    return true;
}

namespace {

// The scratch the prelude's convbwd_frag_emulated works in: A (32 x 8) and B (8 x 32) floats a wave,
// for the most waves a fragment block has on OpenCL (kMaxOpenclFragmentWaves, schedules/spaces.h).
const std::string kScratch =
    "\n  __local float convbwd_frag_lds[" + std::to_string(512 * kMaxOpenclFragmentWaves) + "];\n";

// The lock over the rewritten sources, and their counts.
std::mutex &sources_mutex() {
    static auto *m = new std::mutex;  // never destroyed: pipelines may run at exit
    return *m;
}
FragmentPreludeCounts &counts() {
    static auto *c = new FragmentPreludeCounts;
    return *c;
}

std::string with_prelude(const char *src, int size, bool native) {
    std::string s(src, size > 0 ? (size_t)size : std::strlen(src));
    while (!s.empty() && s.back() == '\0') s.pop_back();
    const bool grouped = fragment_calls_grouped(s);
    std::string out = (native ? std::string(kNvidia) + "\n" : std::string()) +
                      (grouped ? "#define CONVBWD_FRAG_GROUPED 1\n" : "") + kEmulated + "\n";
    counts().sources++;
    counts().grouped += grouped;
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

FragmentPreludeCounts opencl_fragment_prelude_counts() {
    std::lock_guard<std::mutex> lock(sources_mutex());
    return counts();
}
}  // namespace convbwd

extern "C" int convbwd_opencl_fragments_initialize_kernels(void *user_context, void **state_ptr, const char *src,
                                                           int size) {
    static auto *sources = new std::map<std::pair<const char *, bool>, std::string>;
    static const bool forced_emulation = [] {
        const char *f = std::getenv("CONVBWD_FRAGMENTS");
        return f && std::string(f) == "emulated";
    }();
    const bool native = !forced_emulation && convbwd::on_nvidia(user_context);
    const std::string *text;
    {
        std::lock_guard<std::mutex> lock(convbwd::sources_mutex());
        auto it = sources->find({src, native});
        if (it == sources->end())
            it = sources->emplace(std::make_pair(src, native), convbwd::with_prelude(src, size, native)).first;
        text = &it->second;
    }
    return halide_opencl_initialize_kernels(user_context, state_ptr, text->c_str(), (int)text->size() + 1);
}
