// Halide host code -> HIP (see halide_glue.h): the renamed OpenCL runtime entry points of the
// amdgpu kernels' host pipelines, and a halide_device_interface_t for HIP device memory.
#include "runtime/src/amdgpu/halide_glue.h"

#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "HalideRuntime.h"
#include "runtime/src/device_glue.h"

// In Halide's runtime (device_interface.cpp), not declared by HalideRuntime.h.
extern "C" int halide_device_and_host_malloc(void *user_context, struct halide_buffer_t *buf,
                                             const struct halide_device_interface_t *device_interface);
extern "C" int halide_device_and_host_free(void *user_context, struct halide_buffer_t *buf);

namespace convbwd::amdgpu {

namespace {

// halide_device_interface_impl_t as Halide 21 defines it (src/runtime/device_interface.h; not in
// the installed headers; unchanged since Halide 12). The public halide_* device functions of the
// runtime call these.
struct DeviceInterfaceImpl {
    void (*use_module)();
    void (*release_module)();
    int (*device_malloc)(void *user_context, halide_buffer_t *buf);
    int (*device_free)(void *user_context, halide_buffer_t *buf);
    int (*device_sync)(void *user_context, halide_buffer_t *buf);
    int (*device_release)(void *user_context);
    int (*copy_to_host)(void *user_context, halide_buffer_t *buf);
    int (*copy_to_device)(void *user_context, halide_buffer_t *buf);
    int (*device_and_host_malloc)(void *user_context, halide_buffer_t *buf);
    int (*device_and_host_free)(void *user_context, halide_buffer_t *buf);
    int (*buffer_copy)(void *user_context, halide_buffer_t *src, const halide_device_interface_t *dst_interface,
                       halide_buffer_t *dst);
    int (*device_crop)(void *user_context, const halide_buffer_t *src, halide_buffer_t *dst);
    int (*device_slice)(void *user_context, const halide_buffer_t *src, int slice_dim, int slice_pos,
                        halide_buffer_t *dst);
    int (*device_release_crop)(void *user_context, halide_buffer_t *buf);
    int (*wrap_native)(void *user_context, halide_buffer_t *buf, uint64_t handle);
    int (*detach_native)(void *user_context, halide_buffer_t *buf);
};

// Shared state: the HIP API and one Launcher per (kernel's code objects, device).
struct Glue {
    std::mutex mutex;
    std::shared_ptr<HipApi> installed;  // set_hip_api
    std::shared_ptr<HipApi> real;       // make_real_hip_api, loaded once
    Status real_status;
    bool real_tried = false;
    std::map<std::pair<const EmbeddedCodeObjectSet *, int>, std::unique_ptr<Launcher>> launchers;
    RunObserver observer;
};
Glue &glue() {
    static Glue *g = new Glue();  // never destroyed: pipelines may run during static destruction
    return *g;
}

void append_error(void *user_context, const std::string &message) {
    if (auto *call = static_cast<CallContext *>(user_context)) {
        if (!call->error.empty()) call->error += "; ";
        call->error += message;
    }
}

hipStream_t stream_of(void *user_context) {
    auto *call = static_cast<CallContext *>(user_context);
    return call ? static_cast<hipStream_t>(call->stream) : nullptr;
}

// The HIP API for a device-interface call; on failure the reason goes to the call's error.
std::shared_ptr<HipApi> api_for(void *user_context, const char *what) {
    Status s;
    std::shared_ptr<HipApi> api = hip_api(&s);
    if (!api) append_error(user_context, std::string(what) + ": " + s.message);
    return api;
}

std::string hip_call_failed(HipApi &api, const char *call, int e) {
    return std::string(call) + " failed: " + api.errorString(e);
}

void use_module() {}
void release_module() {}

const halide_device_interface_t *interface_ptr();

int hip_device_malloc(void *uc, halide_buffer_t *buf) {
    if (buf->device) return halide_error_code_success;
    auto api = api_for(uc, "amdgpu device_malloc");
    if (!api) return halide_error_code_device_malloc_failed;
    void *p = nullptr;
    const size_t bytes = buf->size_in_bytes();
    const int e = api->memAlloc(&p, bytes);
    if (e != kHipSuccess) {
        append_error(uc, "amdgpu device_malloc: " + hip_call_failed(*api, "hipMalloc", e) + " (" +
                             std::to_string(bytes) + " bytes)");
        return halide_error_code_device_malloc_failed;
    }
    buf->device = reinterpret_cast<uintptr_t>(p);
    buf->device_interface = interface_ptr();
    return halide_error_code_success;
}

int hip_device_free(void *uc, halide_buffer_t *buf) {
    if (!buf->device) return halide_error_code_success;
    auto api = api_for(uc, "amdgpu device_free");
    if (!api) return halide_error_code_device_free_failed;
    const int e = api->memFree(reinterpret_cast<void *>(static_cast<uintptr_t>(buf->device)));
    buf->device = 0;
    buf->device_interface = nullptr;
    buf->set_device_dirty(false);
    if (e != kHipSuccess) {
        append_error(uc, "amdgpu device_free: " + hip_call_failed(*api, "hipFree", e));
        return halide_error_code_device_free_failed;
    }
    return halide_error_code_success;
}

int hip_device_sync(void *uc, halide_buffer_t *) {
    auto api = api_for(uc, "amdgpu device_sync");
    if (!api) return halide_error_code_device_sync_failed;
    const int e = api->streamSynchronize(stream_of(uc));
    if (e != kHipSuccess) {
        append_error(uc, "amdgpu device_sync: " + hip_call_failed(*api, "hipStreamSynchronize", e));
        return halide_error_code_device_sync_failed;
    }
    return halide_error_code_success;
}

int hip_device_release(void *) { return halide_error_code_success; }

// Host <-> device copies of a buffer whose memory is one dense range (size_in_bytes from the
// element at the buffer's min, as on the device): what Halide's own pipelines allocate.
bool dense_forward(const halide_buffer_t *buf) {
    for (int i = 0; i < buf->dimensions; i++)
        if (buf->dim[i].stride < 0) return false;
    return true;
}

int hip_copy(void *uc, halide_buffer_t *buf, bool to_host) {
    const char *what = to_host ? "amdgpu copy_to_host" : "amdgpu copy_to_device";
    const int fail_code = to_host ? halide_error_code_copy_to_host_failed : halide_error_code_copy_to_device_failed;
    if (!buf->host || !buf->device) {
        append_error(uc, std::string(what) + ": buffer has no host or no device memory");
        return fail_code;
    }
    if (!dense_forward(buf)) {
        append_error(uc, std::string(what) + ": negative strides are not supported");
        return fail_code;
    }
    auto api = api_for(uc, what);
    if (!api) return fail_code;
    void *dev = reinterpret_cast<void *>(static_cast<uintptr_t>(buf->device));
    const size_t bytes = buf->size_in_bytes();
    const int e = to_host ? api->memcpyDtoH(buf->host, dev, bytes) : api->memcpyHtoD(dev, buf->host, bytes);
    if (e != kHipSuccess) {
        append_error(uc, std::string(what) + ": " + hip_call_failed(*api, "hipMemcpy", e));
        return fail_code;
    }
    return halide_error_code_success;
}
int hip_copy_to_host(void *uc, halide_buffer_t *buf) { return hip_copy(uc, buf, true); }
int hip_copy_to_device(void *uc, halide_buffer_t *buf) { return hip_copy(uc, buf, false); }

int hip_device_and_host_malloc(void *uc, halide_buffer_t *buf) {
    append_error(uc, "amdgpu: device_and_host_malloc is not supported");
    return halide_error_code_device_malloc_failed;
}
int hip_device_and_host_free(void *uc, halide_buffer_t *buf) {
    append_error(uc, "amdgpu: device_and_host_free is not supported");
    return halide_error_code_device_free_failed;
}
// The runtime's halide_buffer_copy then goes through the host, as for a device without copies.
int hip_buffer_copy(void *, halide_buffer_t *, const halide_device_interface_t *, halide_buffer_t *) {
    return halide_error_code_incompatible_device_interface;
}

// Crops and slices are the same allocation at a byte offset: device addresses are plain pointers.
int64_t offset_elements(const halide_buffer_t *src, const halide_buffer_t *dst) {
    int64_t off = 0;
    for (int i = 0; i < src->dimensions && i < dst->dimensions; i++)
        off += (int64_t)(dst->dim[i].min - src->dim[i].min) * src->dim[i].stride;
    return off;
}
int hip_device_crop(void *, const halide_buffer_t *src, halide_buffer_t *dst) {
    dst->device = src->device + offset_elements(src, dst) * src->type.bytes();
    dst->device_interface = src->device_interface;
    return halide_error_code_success;
}
int hip_device_slice(void *, const halide_buffer_t *src, int dim, int pos, halide_buffer_t *dst) {
    const int64_t off = (int64_t)(pos - src->dim[dim].min) * src->dim[dim].stride;
    dst->device = src->device + off * src->type.bytes();
    dst->device_interface = src->device_interface;
    return halide_error_code_success;
}
int hip_device_release_crop(void *, halide_buffer_t *) { return halide_error_code_success; }
int hip_wrap_native(void *, halide_buffer_t *buf, uint64_t handle) {
    buf->device = handle;
    buf->device_interface = interface_ptr();
    return halide_error_code_success;
}
int hip_detach_native(void *, halide_buffer_t *buf) {
    buf->device = 0;
    buf->device_interface = nullptr;
    return halide_error_code_success;
}
int hip_compute_capability(void *, int *major, int *minor) {
    *major = 9;  // gfx9 (gfx908 / gfx90a / gfx940): informational only
    *minor = 0;
    return halide_error_code_success;
}

const DeviceInterfaceImpl kImpl = {
    use_module,         release_module,       hip_device_malloc,         hip_device_free,
    hip_device_sync,    hip_device_release,   hip_copy_to_host,          hip_copy_to_device,
    hip_device_and_host_malloc, hip_device_and_host_free, hip_buffer_copy, hip_device_crop,
    hip_device_slice,   hip_device_release_crop, hip_wrap_native,        hip_detach_native,
};

const halide_device_interface_t kInterface = {
    halide_device_malloc,
    halide_device_free,
    halide_device_sync,
    halide_device_release,
    halide_copy_to_host,
    halide_copy_to_device,
    halide_device_and_host_malloc,
    halide_device_and_host_free,
    halide_buffer_copy,
    halide_device_crop,
    halide_device_slice,
    halide_device_release_crop,
    halide_device_wrap_native,
    halide_device_detach_native,
    hip_compute_capability,
    reinterpret_cast<const halide_device_interface_impl_t *>(&kImpl),
};

const halide_device_interface_t *interface_ptr() { return &kInterface; }

// What *state_ptr holds between initialize and finalize: the kernel's code objects.
struct KernelSetState {
    const EmbeddedCodeObjectSet *set;
};

// The launcher of `set` for the current device (created and loaded on first use).
Status launcher_for(const EmbeddedCodeObjectSet *set, Launcher **out) {
    Status s;
    std::shared_ptr<HipApi> api = hip_api(&s);
    if (!api) return s;
    int device = -1;
    const int e = api->getDevice(&device);
    if (e != kHipSuccess) return error(CONVBWD_DEVICE_ERROR, hip_call_failed(*api, "hipGetDevice", e));
    Glue &g = glue();
    std::lock_guard<std::mutex> lock(g.mutex);
    auto &slot = g.launchers[{set, device}];
    if (!slot) {
        s = Launcher::create(api, *set, &slot);
        if (!s.ok()) return s;
    }
    *out = slot.get();
    return ok_status();
}

}  // namespace

std::shared_ptr<HipApi> hip_api(Status *status) {
    Glue &g = glue();
    std::lock_guard<std::mutex> lock(g.mutex);
    if (g.installed) return g.installed;
    if (!g.real_tried) {
        g.real_tried = true;
        g.real = make_real_hip_api(&g.real_status);
    }
    if (!g.real && status) *status = g.real_status;
    return g.real;
}

void set_hip_api(std::shared_ptr<HipApi> api) {
    Glue &g = glue();
    std::lock_guard<std::mutex> lock(g.mutex);
    g.launchers.clear();
    g.installed = std::move(api);
}

void set_run_observer(RunObserver observer) {
    Glue &g = glue();
    std::lock_guard<std::mutex> lock(g.mutex);
    g.observer = std::move(observer);
}

int hip_wrap_device_ptr(halide_buffer_t *buf, uint64_t device_ptr, std::string *message) {
    Status s;
    std::shared_ptr<HipApi> api = hip_api(&s);
    if (!api) {
        *message = s.message;
        return -1;
    }
    int count = 0;
    const int e = api->getDeviceCount(&count);
    if (e != kHipSuccess || count <= 0) {
        *message = "no AMD GPU: " + (e != kHipSuccess ? hip_call_failed(*api, "hipGetDeviceCount", e)
                                                      : std::string("hipGetDeviceCount reports 0 devices"));
        return -1;
    }
    if (buf->device_interface && buf->device_interface != &kInterface) {
        *message = "buffer already has another device interface";
        return -1;
    }
    buf->device = device_ptr;
    buf->device_interface = &kInterface;
    return 0;
}

void hip_detach_device_ptr(halide_buffer_t *buf) {
    if (buf->device_interface != &kInterface) return;
    buf->device = 0;
    buf->device_interface = nullptr;
}

}  // namespace convbwd::amdgpu

using namespace convbwd::amdgpu;

extern "C" {

int convbwd_hip_initialize_kernels(void *user_context, void **state_ptr, const EmbeddedCodeObjectSet *set) {
    // One state per kernel, kept for the process (Halide keeps the pointer in a static of the
    // pipeline); the launcher itself is per device, found at each run.
    static std::mutex mutex;
    static std::map<const EmbeddedCodeObjectSet *, std::unique_ptr<KernelSetState>> states;
    {
        std::lock_guard<std::mutex> lock(mutex);
        auto &st = states[set];
        if (!st) st.reset(new KernelSetState{set});
        *state_ptr = st.get();
    }
    Launcher *launcher = nullptr;
    Status s = launcher_for(set, &launcher);
    if (!s.ok()) {
        append_error(user_context, std::string("amdgpu kernel ") + (set->name ? set->name : "?") + ": " + s.message);
        return halide_error_code_device_run_failed;
    }
    return halide_error_code_success;
}

int convbwd_hip_run(void *user_context, void *state_ptr, const char *entry_name, int blocksX, int blocksY,
                    int blocksZ, int threadsX, int threadsY, int threadsZ, int shared_mem_bytes, size_t arg_sizes[],
                    void *args[], int8_t arg_is_buffer[]) {
    const auto *state = static_cast<const KernelSetState *>(state_ptr);
    const std::string who = std::string("amdgpu kernel ") + (state && state->set->name ? state->set->name : "?") +
                            " entry " + (entry_name ? entry_name : "?");
    if (!state || !entry_name) {
        append_error(user_context, who + ": not initialized");
        return halide_error_code_device_run_failed;
    }
    const int blocks[3] = {blocksX, blocksY, blocksZ}, threads[3] = {threadsX, threadsY, threadsZ};
    HalideRunRecord rec;
    rec.code_objects = state->set->name ? state->set->name : "";
    rec.entry = entry_name;
    LaunchDims dims;
    for (int j = 0; j < 3; j++) {
        if (blocks[j] < 0 || threads[j] < 0 || shared_mem_bytes < 0) {
            append_error(user_context, who + ": negative launch dimensions");
            return halide_error_code_device_run_failed;
        }
        dims.grid[j] = rec.blocks[j] = (uint32_t)blocks[j];
        dims.block[j] = rec.threads[j] = (uint32_t)threads[j];
    }
    dims.dynamic_lds_bytes = rec.shared_mem_bytes = (uint32_t)shared_mem_bytes;
    std::vector<LaunchArg> launch_args;
    std::string bad;
    for (size_t i = 0; arg_sizes[i] != 0; i++) {
        HalideRunRecord::Arg a;
        a.size = arg_sizes[i];
        a.is_buffer = arg_is_buffer[i] != 0;
        if (a.is_buffer) {
            const auto *buf = static_cast<const halide_buffer_t *>(args[i]);
            if (!buf || !buf->device || buf->device_interface != &kInterface)
                bad += " argument " + std::to_string(i) + " is not HIP device memory;";
            a.device = buf ? buf->device : 0;
            launch_args.push_back(LaunchArg::buffer_address(a.device));
        } else {
            const auto *p = static_cast<const uint8_t *>(args[i]);
            a.bytes.assign(p, p + a.size);
            launch_args.push_back(LaunchArg::scalar_bytes(p, a.size));
        }
        rec.args.push_back(std::move(a));
    }
    {
        Glue &g = glue();
        RunObserver observer;
        {
            std::lock_guard<std::mutex> lock(g.mutex);
            observer = g.observer;
        }
        if (observer) observer(rec);
    }
    if (!bad.empty()) {
        append_error(user_context, who + ":" + bad);
        return halide_error_code_device_run_failed;
    }
    Launcher *launcher = nullptr;
    Status s = launcher_for(state->set, &launcher);
    if (s.ok()) {
        // Halide's OpenCL kernels end with the __local pointer of the dynamic shared memory.
        const convbwd::amdgpu::KernelInfo *k = launcher->kernel(entry_name);
        if (k && k->dynamic_shared_arg() >= 0) launch_args.push_back(LaunchArg::dynamic_local());
        s = launcher->launch(entry_name, dims, launch_args, stream_of(user_context));
    }
    if (!s.ok()) {
        append_error(user_context, who + ": " + s.message);
        return halide_error_code_device_run_failed;
    }
    return halide_error_code_success;
}

void convbwd_hip_finalize_kernels(void *, void *) {}  // launchers stay loaded for the next call

const halide_device_interface_t *convbwd_hip_device_interface() { return &kInterface; }

}  // extern "C"
