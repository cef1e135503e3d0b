// The amdgpu target through the C API: convbwd_bwd_data / convbwd_bwd_weight with
// exec.target = CONVBWD_TARGET_AMDGPU run each kernel's Halide host pipeline, whose OpenCL runtime
// calls are routed to runtime/src/amdgpu/halide_glue.cpp, which launches the embedded code
// objects through HIP. Here HIP is the RecordingHipApi fake (no AMD GPU exists on this machine):
// every launch is checked against what Halide's host code asked for (entry, grid, block, dynamic
// LDS, argument values) and against the code object's metadata (kernarg offsets, block limit).
// Nothing here executes a kernel.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "amdgpu_kernels.inc"
#include "convbwd/convbwd.h"
#include "runtime/src/amdgpu/code_object.h"
#include "runtime/src/amdgpu/halide_glue.h"
#include "runtime/src/amdgpu/recording_hip_api.h"

using namespace convbwd::amdgpu;

namespace {

struct AmdEntry {
    const char *name;
    const EmbeddedCodeObjectSet *set;
};
const AmdEntry kAmdKernels[] = {
#define CONVBWD_AMDGPU_KERNEL(name, symbol, sched) {#name, &symbol},
#include "amdgpu_kernels.inc"
#undef CONVBWD_AMDGPU_KERNEL
};

const EmbeddedCodeObjectSet *code_objects_of(const std::string &kernel) {
    for (const AmdEntry &e : kAmdKernels)
        if (kernel == e.name) return e.set;
    return nullptr;
}

// The gfx90a code object of a kernel, parsed once.
const CodeObjectInfo &gfx90a_info(const std::string &kernel) {
    static std::map<std::string, CodeObjectInfo> cache;
    auto it = cache.find(kernel);
    if (it != cache.end()) return it->second;
    CodeObjectInfo &info = cache[kernel];
    const EmbeddedCodeObjectSet *set = code_objects_of(kernel);
    REQUIRE_MESSAGE(set, kernel, " has no code objects in amdgpu_kernels.inc");
    for (size_t i = 0; i < set->count; i++)
        if (std::string(set->objects[i].arch) == "gfx90a") {
            Status s = parse_code_object(set->objects[i].data, set->objects[i].size, &info);
            REQUIRE_MESSAGE(s.ok(), s.message);
        }
    REQUIRE_MESSAGE(!info.kernels.empty(), kernel, ": no gfx90a code object");
    return info;
}

std::vector<std::string> amdgpu_kernel_names() {
    std::vector<std::string> names;
    for (int i = 0; i < convbwd_kernel_count(); i++) {
        convbwd_kernel_desc d;
        REQUIRE(convbwd_kernel_info(i, &d) == CONVBWD_SUCCESS);
        if (d.target == CONVBWD_TARGET_AMDGPU) names.push_back(d.name);
    }
    return names;
}

convbwd_problem problem(int n, int c, int h, int w, int k, int r, int s, int stride, int pad, int groups = 1,
                        int dilation = 1) {
    convbwd_problem p{};
    p.n = n, p.c = c, p.h = h, p.w = w, p.k = k, p.r = r, p.s = s, p.groups = groups;
    p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = pad;
    p.stride_h = p.stride_w = stride;
    p.dilation_h = p.dilation_w = dilation;
    p.p = (h + 2 * pad - dilation * (r - 1) - 1) / stride + 1;
    p.q = (w + 2 * pad - dilation * (s - 1) - 1) / stride + 1;
    return p;
}

// Stride 1 and 2, 1x1 and 3x3, one grouped/dilated problem, one with several blocks per grid
// dimension, depthwise 3x3 and 5x5 at stride 1 and 2 (the depthwise kernels' classes): each kernel
// runs on those of its class.
std::vector<convbwd_problem> problems() {
    return {problem(2, 16, 9, 7, 24, 3, 3, 1, 1),      problem(2, 16, 9, 7, 24, 1, 1, 1, 0),
            problem(2, 16, 10, 9, 24, 3, 3, 2, 1),     problem(2, 16, 10, 9, 24, 1, 1, 2, 0),
            problem(1, 8, 11, 6, 12, 3, 3, 1, 2, 2, 2), problem(4, 64, 20, 20, 64, 3, 3, 1, 1),
            problem(2, 16, 9, 7, 16, 3, 3, 1, 1, 16),  problem(2, 16, 10, 9, 16, 3, 3, 2, 1, 16),
            problem(1, 24, 13, 37, 24, 5, 5, 1, 2, 24), problem(1, 24, 13, 37, 24, 5, 5, 2, 2, 24)};
}

size_t dtype_bytes(convbwd_dtype t) { return t == CONVBWD_F32 ? 4 : 2; }

// Records what Halide's host code passes to convbwd_hip_run, with a RecordingHipApi installed as
// the HIP API; both are removed again at the end of the scope.
struct FakeHip {
    std::shared_ptr<RecordingHipApi> api = std::make_shared<RecordingHipApi>();
    std::mutex mutex;
    std::vector<HalideRunRecord> runs;

    FakeHip() {
        set_hip_api(api);
        set_run_observer([this](const HalideRunRecord &r) {
            std::lock_guard<std::mutex> lock(mutex);
            runs.push_back(r);
        });
    }
    ~FakeHip() {
        set_run_observer({});
        set_hip_api(nullptr);
    }
    void clear() {
        std::lock_guard<std::mutex> lock(mutex);
        runs.clear();
        api->clear_records();
    }
};

// The caller's "device" memory for the fake (host memory, never touched by a kernel here; not
// allocated through the fake, so its allocation records are Halide's own).
struct FakeBuffer {
    void *ptr = nullptr;
    explicit FakeBuffer(size_t bytes) : ptr(std::calloc(bytes ? bytes : 1, 1)) { REQUIRE(ptr); }
    ~FakeBuffer() { std::free(ptr); }
    FakeBuffer(const FakeBuffer &) = delete;
    FakeBuffer &operator=(const FakeBuffer &) = delete;
};

uint64_t read_le(const std::vector<uint8_t> &bytes, uint32_t offset, uint32_t size) {
    REQUIRE(offset + size <= bytes.size());
    uint64_t v = 0;
    std::memcpy(&v, bytes.data() + offset, size);
    return v;
}

struct Call {
    convbwd_status status = CONVBWD_SUCCESS;
    std::string error;
    std::set<uint64_t> pointers;  // the caller's device pointers (tensors, workspace)
    uint64_t out = 0;
};

// Runs `kernel` (or the dispatcher's choice when empty) on problem p through the C API with fake
// device memory. False if the kernel cannot implement p.
bool run_on_fake(const std::string &kernel, convbwd_direction dir, convbwd_dtype dt,
                 convbwd_layout layout, const convbwd_problem &p, void *stream, Call *call) {
    convbwd_exec exec{};
    exec.target = CONVBWD_TARGET_AMDGPU;
    exec.kernel = kernel.empty() ? nullptr : kernel.c_str();
    exec.stream = stream;
    const char *chosen = nullptr;
    if (convbwd_select_kernel(&p, dir, dt, layout, &exec, &chosen) != CONVBWD_SUCCESS) return false;
    size_t ws_bytes = 0;
    REQUIRE(convbwd_workspace_size(&p, dir, dt, layout, &exec, &ws_bytes) == CONVBWD_SUCCESS);
    const size_t e = dtype_bytes(dt);
    const size_t x_bytes = (size_t)p.n * p.c * p.h * p.w * e, dy_bytes = (size_t)p.n * p.k * p.p * p.q * e,
                 w_bytes = (size_t)p.k * (p.c / p.groups) * p.r * p.s * e;
    FakeBuffer x(x_bytes), dy(dy_bytes), w(w_bytes), ws(ws_bytes);
    exec.workspace = ws_bytes ? ws.ptr : nullptr;
    exec.workspace_bytes = ws_bytes;
    convbwd_tensor tx{x.ptr, dt, layout, {}}, tdy{dy.ptr, dt, layout, {}}, tw{w.ptr, dt, layout, {}};
    call->pointers = {(uint64_t)(uintptr_t)x.ptr, (uint64_t)(uintptr_t)dy.ptr, (uint64_t)(uintptr_t)w.ptr};
    if (ws_bytes) call->pointers.insert((uint64_t)(uintptr_t)ws.ptr);
    if (dir == CONVBWD_BWD_DATA) {
        call->out = (uint64_t)(uintptr_t)x.ptr;
        call->status = convbwd_bwd_data(&p, &tdy, &tw, &tx, 1.0f, 0.0f, &exec);
    } else {
        call->out = (uint64_t)(uintptr_t)w.ptr;
        call->status = convbwd_bwd_weight(&p, &tx, &tdy, &tw, 1.0f, 0.5f, &exec);
    }
    call->error = convbwd_last_error();
    return true;
}

// Every recorded launch against what Halide asked for and the code object's metadata.
void check_launches(const std::string &kernel, FakeHip &fake, const Call &call, void *stream) {
    const CodeObjectInfo &info = gfx90a_info(kernel);
    std::vector<RecordingHipApi::Launch> launches = fake.api->launches_copy();
    REQUIRE(!fake.runs.empty());
    REQUIRE(launches.size() == fake.runs.size());
    // Buffer arguments: the caller's pointers, or device memory Halide allocated during the call
    // (intermediates, through the HIP device interface), all freed again by its end.
    std::set<uint64_t> allowed = call.pointers;
    for (const auto &a : fake.api->allocations) allowed.insert(a.first);
    CHECK(fake.api->frees.size() == fake.api->allocations.size());
    for (uintptr_t f : fake.api->frees) CHECK(allowed.count(f) - call.pointers.count(f) == 1);
    bool wrote_out = false;
    for (size_t i = 0; i < launches.size(); i++) {
        const HalideRunRecord &run = fake.runs[i];
        const RecordingHipApi::Launch &l = launches[i];
        CAPTURE(run.entry);
        CHECK(run.code_objects == kernel);
        CHECK(l.function == run.entry);
        const KernelInfo *k = info.find(run.entry);
        REQUIRE_MESSAGE(k, run.entry, " is not in the gfx90a code object of ", kernel);
        for (int j = 0; j < 3; j++) {
            CHECK(l.grid[j] == run.blocks[j]);
            CHECK(l.block[j] == run.threads[j]);
        }
        CHECK(l.shared_mem_bytes == run.shared_mem_bytes);
        CHECK(l.stream == static_cast<hipStream_t>(stream));
        CHECK((uint64_t)l.block[0] * l.block[1] * l.block[2] <= k->max_flat_workgroup_size);
        REQUIRE(l.via_extra);
        REQUIRE(l.kernargs.size() >= k->kernarg_segment_size);
        const std::vector<size_t> explicit_args = k->explicit_args();
        const int dyn = k->dynamic_shared_arg();
        REQUIRE(explicit_args.size() == run.args.size() + (dyn >= 0 ? 1 : 0));
        for (size_t j = 0; j < run.args.size(); j++) {
            const KernelArgInfo &m = k->args[explicit_args[j]];
            const HalideRunRecord::Arg &a = run.args[j];
            CAPTURE(j);
            CAPTURE(m.name);
            if (a.is_buffer) {
                CHECK(m.value_kind == "global_buffer");
                REQUIRE(m.size == 8);
                CHECK(read_le(l.kernargs, m.offset, 8) == a.device);
                CHECK_MESSAGE(allowed.count(a.device), "buffer argument is neither the caller's nor Halide's memory");
                wrote_out |= a.device == call.out;
            } else {
                CHECK(m.value_kind == "by_value");
                REQUIRE(m.size == a.size);
                REQUIRE(m.offset + m.size <= l.kernargs.size());
                CHECK(std::memcmp(l.kernargs.data() + m.offset, a.bytes.data(), a.size) == 0);
            }
        }
        if (dyn >= 0) {
            const KernelArgInfo &m = k->args[dyn];
            CHECK(explicit_args.back() == (size_t)dyn);  // Halide's __local pointer comes last
            CHECK(read_le(l.kernargs, m.offset, m.size) == dynamic_lds_offset(*k));
        }
    }
    CHECK_MESSAGE(wrote_out, "no launch got the output tensor's pointer");
}

}  // namespace

TEST_SUITE("amdgpu") {

TEST_CASE("C API on amdgpu: every kernel's launches match Halide's host code and the code object metadata") {
    const std::vector<std::string> names = amdgpu_kernel_names();
    REQUIRE_MESSAGE(!names.empty(), "no amdgpu kernel is registered");
    FakeHip fake;
    void *stream = reinterpret_cast<void *>(uintptr_t{0x5157});
    int calls = 0;
    for (const std::string &name : names) {
        CAPTURE(name);
        convbwd_kernel_desc d{};
        for (int i = 0; i < convbwd_kernel_count(); i++)
            if (convbwd_kernel_info(i, &d) == CONVBWD_SUCCESS && name == d.name) break;
        int tested = 0;
        std::set<int> strides;
        for (const convbwd_problem &p : problems()) {
            fake.clear();
            Call call;
            if (!run_on_fake(name, d.direction, d.dtype, d.layout, p, stream, &call)) continue;
            CAPTURE(p.stride_h);
            CAPTURE(p.r);
            CAPTURE(p.c);
            REQUIRE_MESSAGE(call.status == CONVBWD_SUCCESS, call.error);
            check_launches(name, fake, call, stream);
            strides.insert(p.stride_h);
            tested++;
            calls++;
        }
        CHECK_MESSAGE(tested > 0, "no problem reached ", name);
        if (std::string(d.stride_class) == "any") CHECK(strides.size() == 2);  // stride 1 and 2
    }
    MESSAGE(names.size(), " amdgpu kernels, ", calls, " calls checked launch by launch");
}

TEST_CASE("C API on amdgpu: dispatch picks amdgpu kernels, and exec.stream NULL is the default stream") {
    FakeHip fake;
    for (convbwd_direction dir : {CONVBWD_BWD_DATA, CONVBWD_BWD_WEIGHT}) {
        const convbwd_problem p = problem(2, 16, 9, 7, 24, 3, 3, 1, 1);
        convbwd_exec exec{};
        exec.target = CONVBWD_TARGET_AMDGPU;
        const char *chosen = nullptr;
        REQUIRE(convbwd_select_kernel(&p, dir, CONVBWD_F32, CONVBWD_NHWC, &exec, &chosen) == CONVBWD_SUCCESS);
        CHECK(std::string(chosen).find("_amdgpu_") != std::string::npos);
        fake.clear();
        Call call;
        REQUIRE(run_on_fake("", dir, CONVBWD_F32, CONVBWD_NHWC, p, nullptr, &call));
        REQUIRE_MESSAGE(call.status == CONVBWD_SUCCESS, call.error);
        check_launches(chosen, fake, call, nullptr);
    }
}

TEST_CASE("C API on amdgpu: HIP failures come back as a status with a message naming kernel and call") {
    const convbwd_problem p = problem(2, 16, 9, 7, 24, 3, 3, 1, 1);
    auto run = [&](FakeHip &fake, convbwd_direction dir) {
        convbwd_exec exec{};
        exec.target = CONVBWD_TARGET_AMDGPU;
        const char *chosen = nullptr;
        REQUIRE(convbwd_select_kernel(&p, dir, CONVBWD_F32, CONVBWD_NHWC, &exec, &chosen) == CONVBWD_SUCCESS);
        Call call;
        REQUIRE(run_on_fake(chosen, dir, CONVBWD_F32, CONVBWD_NHWC, p, nullptr, &call));
        CHECK(call.error.find(chosen) != std::string::npos);
        return call;
    };
    for (convbwd_direction dir : {CONVBWD_BWD_DATA, CONVBWD_BWD_WEIGHT}) {
        {
            FakeHip fake;
            fake.api->fail_launch = kHipErrorLaunchFailure;
            Call c = run(fake, dir);
            CHECK(c.status == CONVBWD_EXECUTION_FAILED);
            CHECK(c.error.find("hipModuleLaunchKernel") != std::string::npos);
            CHECK(c.error.find("hipErrorLaunchFailure") != std::string::npos);
            MESSAGE(c.error);
        }
        {
            FakeHip fake;
            fake.api->fail_load = kHipErrorInvalidImage;
            Call c = run(fake, dir);
            CHECK(c.status == CONVBWD_EXECUTION_FAILED);
            CHECK(c.error.find("hipModuleLoadData") != std::string::npos);
            CHECK(fake.api->launches.empty());
        }
        {
            FakeHip fake;
            fake.api->fail_get_function = kHipErrorNotFound;
            Call c = run(fake, dir);
            CHECK(c.status == CONVBWD_EXECUTION_FAILED);
            CHECK(c.error.find("hipModuleGetFunction") != std::string::npos);
        }
        {
            FakeHip fake;
            fake.api->arch = "gfx1030";
            Call c = run(fake, dir);
            CHECK(c.status == CONVBWD_EXECUTION_FAILED);
            CHECK(c.error.find("gfx1030") != std::string::npos);
        }
        {
            FakeHip fake;
            fake.api->device_count = 0;
            convbwd_exec exec{};
            exec.target = CONVBWD_TARGET_AMDGPU;
            Call call;
            const char *chosen = nullptr;
            REQUIRE(convbwd_select_kernel(&p, dir, CONVBWD_F32, CONVBWD_NHWC, &exec, &chosen) == CONVBWD_SUCCESS);
            void *fake_dev[4];
            for (int i = 0; i < 4; i++) fake_dev[i] = reinterpret_cast<void *>(uintptr_t{0x100000} * (i + 1));
            convbwd_tensor a{fake_dev[0], CONVBWD_F32, CONVBWD_NHWC, {}}, b{fake_dev[1], CONVBWD_F32, CONVBWD_NHWC, {}},
                o{fake_dev[2], CONVBWD_F32, CONVBWD_NHWC, {}};
            exec.workspace = fake_dev[3];
            exec.workspace_bytes = size_t{1} << 30;
            convbwd_status s = dir == CONVBWD_BWD_DATA ? convbwd_bwd_data(&p, &a, &b, &o, 1.0f, 0.0f, &exec)
                                                       : convbwd_bwd_weight(&p, &a, &b, &o, 1.0f, 0.0f, &exec);
            CHECK(s == CONVBWD_DEVICE_ERROR);
            CHECK(std::string(convbwd_last_error()).find("no AMD GPU") != std::string::npos);
        }
    }
    // hipMalloc failing for Halide's own device allocations (kernels with a device intermediate).
    int allocating = 0;
    for (const std::string &name : amdgpu_kernel_names()) {
        convbwd_kernel_desc d{};
        for (int i = 0; i < convbwd_kernel_count(); i++)
            if (convbwd_kernel_info(i, &d) == CONVBWD_SUCCESS && name == d.name) break;
        FakeHip fake;
        Call c;
        const convbwd_problem q = problem(2, 16, 9, 7, 24, 1, 1, 1, 0);
        if (!run_on_fake(name, d.direction, d.dtype, d.layout, q, nullptr, &c)) continue;
        REQUIRE_MESSAGE(c.status == CONVBWD_SUCCESS, c.error);
        if (fake.api->allocations.empty()) continue;
        allocating++;
        fake.api->fail_malloc = kHipErrorOutOfMemory;
        REQUIRE(run_on_fake(name, d.direction, d.dtype, d.layout, q, nullptr, &c));
        CAPTURE(name);
        CHECK(c.status == CONVBWD_EXECUTION_FAILED);
        CHECK(c.error.find(name) != std::string::npos);
        CHECK(c.error.find("hipMalloc") != std::string::npos);
        CHECK(c.error.find("hipErrorOutOfMemory") != std::string::npos);
    }
    MESSAGE(allocating, " amdgpu kernels allocate device intermediates");
    // After the failures, a working device runs again (no stale launcher of a failed load).
    FakeHip fake;
    Call c;
    REQUIRE(run_on_fake("", CONVBWD_BWD_DATA, CONVBWD_F32, CONVBWD_NHWC, p, nullptr, &c));
    CHECK_MESSAGE(c.status == CONVBWD_SUCCESS, c.error);
}

TEST_CASE("C API on amdgpu with libamdhip64: without an AMD GPU a clear CONVBWD_DEVICE_ERROR, no crash") {
    set_hip_api(nullptr);  // the real binding (dlopen of libamdhip64)
    Status load;
    std::shared_ptr<HipApi> api = hip_api(&load);
    int count = 0;
    if (api && api->getDeviceCount(&count) == kHipSuccess && count > 0) {
        MESSAGE("an AMD GPU is present: this case checks the no-GPU path only");
        return;
    }
    const convbwd_problem p = problem(2, 16, 9, 7, 24, 3, 3, 1, 1);
    void *fake_dev[4];
    for (int i = 0; i < 4; i++) fake_dev[i] = reinterpret_cast<void *>(uintptr_t{0x100000} * (i + 1));
    convbwd_tensor a{fake_dev[0], CONVBWD_F32, CONVBWD_NHWC, {}}, b{fake_dev[1], CONVBWD_F32, CONVBWD_NHWC, {}},
        o{fake_dev[2], CONVBWD_F32, CONVBWD_NHWC, {}};
    convbwd_exec exec{};
    exec.target = CONVBWD_TARGET_AMDGPU;
    exec.workspace = fake_dev[3];
    exec.workspace_bytes = size_t{1} << 30;
    for (convbwd_direction dir : {CONVBWD_BWD_DATA, CONVBWD_BWD_WEIGHT}) {
        convbwd_status s = dir == CONVBWD_BWD_DATA ? convbwd_bwd_data(&p, &a, &b, &o, 1.0f, 0.0f, &exec)
                                                   : convbwd_bwd_weight(&p, &a, &b, &o, 1.0f, 0.0f, &exec);
        const std::string msg = convbwd_last_error();
        MESSAGE(msg);
        CHECK(s == CONVBWD_DEVICE_ERROR);
        CHECK(msg.find("amdgpu") != std::string::npos);
        CHECK((msg.find("libamdhip64") != std::string::npos || msg.find("no AMD GPU") != std::string::npos));
    }
}

}  // TEST_SUITE
