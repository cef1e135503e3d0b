// Kernarg packing and the Launcher. See hip_launcher.h. Nothing here includes HIP headers: the
// real HIP binding lives in hip_api_real.cpp.
#include "runtime/src/amdgpu/hip_launcher.h"

#include <algorithm>
#include <limits>
#include <new>

namespace convbwd::amdgpu {

namespace {

std::string dims_str(const uint32_t d[3]) {
    return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

std::string arg_label(const KernelInfo &k, size_t i, const KernelArgInfo &m) {
    std::string s = "kernel '" + k.name + "' argument " + std::to_string(i);
    if (!m.name.empty()) s += " ('" + m.name + "')";
    return s;
}

const char *kind_name(LaunchArg::Kind kind) {
    switch (kind) {
        case LaunchArg::Kind::Buffer: return "a buffer";
        case LaunchArg::Kind::Scalar: return "a scalar";
        case LaunchArg::Kind::DynamicLocal: return "a dynamic local pointer";
    }
    return "?";
}

void write_le(std::vector<uint8_t> *out, uint32_t offset, uint64_t value, uint32_t size) {
    for (uint32_t b = 0; b < size && b < 8; b++) (*out)[offset + b] = static_cast<uint8_t>(value >> (8 * b));
}

// Value of a hidden argument for one launch; false for runtime-owned/unknown kinds (left 0).
bool hidden_value(const std::string &kind, const LaunchDims &d, uint64_t *v) {
    static const char *const block_count[3] = {"hidden_block_count_x", "hidden_block_count_y", "hidden_block_count_z"};
    static const char *const group_size[3] = {"hidden_group_size_x", "hidden_group_size_y", "hidden_group_size_z"};
    for (int j = 0; j < 3; j++) {
        if (kind == block_count[j]) {
            *v = d.grid[j];
            return true;
        }
        if (kind == group_size[j]) {
            *v = d.block[j];
            return true;
        }
    }
    if (kind == "hidden_grid_dims") {
        *v = 3;
        return true;
    }
    if (kind == "hidden_dynamic_lds_size") {
        *v = d.dynamic_lds_bytes;
        return true;
    }
    // hidden_global_offset_*, hidden_remainder_* (whole work-groups), hidden_none, the runtime's
    // buffers and queues: zero.
    return false;
}

}  // namespace

uint64_t runtime_lds_bytes(const KernelInfo &k, uint32_t dynamic_lds_bytes) {
    const int d = k.dynamic_shared_arg();
    if (d < 0) return uint64_t{k.group_segment_fixed_size} + dynamic_lds_bytes;
    return uint64_t{dynamic_lds_offset(k)} + k.args[d].size + dynamic_lds_bytes;
}

Status check_launch_dims(const KernelInfo &k, const LaunchDims &d) {
    const std::string who = "kernel '" + k.name + "'";
    static const char axis[3] = {'x', 'y', 'z'};
    uint64_t threads = 1;
    for (int j = 0; j < 3; j++) {
        if (d.grid[j] == 0) return error(CONVBWD_BAD_PARAM, who + ": grid." + axis[j] + " is 0");
        if (d.block[j] == 0) return error(CONVBWD_BAD_PARAM, who + ": block." + axis[j] + " is 0");
        if (uint64_t{d.grid[j]} * d.block[j] > std::numeric_limits<uint32_t>::max())
            return error(CONVBWD_BAD_PARAM, who + ": grid." + axis[j] + " * block." + axis[j] + " = " +
                                                std::to_string(uint64_t{d.grid[j]} * d.block[j]) +
                                                " work-items exceeds 2^32-1");
        threads *= d.block[j];
    }
    if (threads > k.max_flat_workgroup_size)
        return error(CONVBWD_BAD_PARAM, who + ": block " + dims_str(d.block) + " = " + std::to_string(threads) +
                                            " work-items exceeds the kernel's .max_flat_workgroup_size " +
                                            std::to_string(k.max_flat_workgroup_size));
    if (k.reqd_workgroup_size[0] != 0 &&
        (d.block[0] != k.reqd_workgroup_size[0] || d.block[1] != k.reqd_workgroup_size[1] ||
         d.block[2] != k.reqd_workgroup_size[2]))
        return error(CONVBWD_BAD_PARAM, who + ": block " + dims_str(d.block) + " differs from .reqd_workgroup_size " +
                                            dims_str(k.reqd_workgroup_size));
    const int dyn = k.dynamic_shared_arg();
    if (dyn < 0 && d.dynamic_lds_bytes != 0)
        return error(CONVBWD_BAD_PARAM, who + ": " + std::to_string(d.dynamic_lds_bytes) +
                                            " bytes of dynamic LDS requested but the kernel has no "
                                            "dynamic_shared_pointer (__local pointer) argument");
    const uint64_t lds = runtime_lds_bytes(k, d.dynamic_lds_bytes);
    if (lds > kLdsBytesPerGroup)
        return error(CONVBWD_BAD_PARAM, who + ": LDS per work-group " + std::to_string(lds) + " bytes (static " +
                                            std::to_string(k.group_segment_fixed_size) + " padded to " +
                                            std::to_string(dynamic_lds_offset(k)) + ", dynamic " +
                                            std::to_string(d.dynamic_lds_bytes) +
                                            (dyn >= 0 ? ", runtime pointer slot " + std::to_string(k.args[dyn].size)
                                                      : std::string()) +
                                            ") exceeds 65536");
    return ok_status();
}

Status pack_kernargs(const KernelInfo &k, const LaunchDims &d, const std::vector<LaunchArg> &args,
                     std::vector<uint8_t> *out) {
    const std::vector<size_t> expl = k.explicit_args();
    if (args.size() != expl.size()) {
        std::string kinds;
        for (size_t i = 0; i < expl.size(); i++)
            kinds += (i ? ", " : "") + k.args[expl[i]].value_kind + "/" + std::to_string(k.args[expl[i]].size);
        return error(CONVBWD_BAD_PARAM, "kernel '" + k.name + "': " + std::to_string(args.size()) +
                                            " arguments given, the metadata lists " + std::to_string(expl.size()) +
                                            " (" + kinds + ")");
    }
    out->assign(k.kernarg_segment_size, 0);
    for (size_t i = 0; i < expl.size(); i++) {
        const KernelArgInfo &m = k.args[expl[i]];
        const LaunchArg &a = args[i];
        const std::string label = arg_label(k, i, m);
        if (m.value_kind == "global_buffer") {
            if (a.kind != LaunchArg::Kind::Buffer)
                return error(CONVBWD_BAD_PARAM, label + " is a global_buffer (pass LaunchArg::buffer), got " +
                                                    kind_name(a.kind));
            if (m.size != 8)
                return error(CONVBWD_NOT_SUPPORTED,
                             label + ": global_buffer of " + std::to_string(m.size) + " bytes (only 8 supported)");
            write_le(out, m.offset, a.address, 8);
        } else if (m.value_kind == "by_value") {
            if (a.kind != LaunchArg::Kind::Scalar)
                return error(CONVBWD_BAD_PARAM, label + " is a by_value scalar of " + std::to_string(m.size) +
                                                    " bytes, got " + kind_name(a.kind));
            if (a.size != m.size)
                return error(CONVBWD_BAD_PARAM, label + " is a by_value scalar of " + std::to_string(m.size) +
                                                    " bytes" + (m.type_name.empty() ? "" : " (" + m.type_name + ")") +
                                                    ", got " + std::to_string(a.size) + " bytes");
            std::memcpy(out->data() + m.offset, a.bytes.data(), a.size);
        } else if (m.value_kind == "dynamic_shared_pointer") {
            if (a.kind != LaunchArg::Kind::DynamicLocal)
                return error(CONVBWD_BAD_PARAM, label + " is a dynamic_shared_pointer (pass LaunchArg::dynamic_local), got " +
                                                    kind_name(a.kind));
            if (m.size != 4 && m.size != 8)
                return error(CONVBWD_NOT_SUPPORTED,
                             label + ": dynamic_shared_pointer of " + std::to_string(m.size) + " bytes");
            write_le(out, m.offset, dynamic_lds_offset(k), m.size);
        } else {
            return error(CONVBWD_NOT_SUPPORTED, label + " has value_kind '" + m.value_kind +
                                                    "', which this launcher does not support");
        }
    }
    for (const KernelArgInfo &m : k.args) {
        if (!m.is_hidden()) continue;
        uint64_t v = 0;
        if (hidden_value(m.value_kind, d, &v)) write_le(out, m.offset, v, m.size);
    }
    return ok_status();
}

KernargBuffer::KernargBuffer(const std::vector<uint8_t> &bytes, uint32_t align) {
    align_ = std::max<size_t>(align, 16);
    size_ = bytes.size();
    const size_t alloc = std::max<size_t>((size_ + align_ - 1) / align_ * align_, align_);
    data_ = ::operator new(alloc, std::align_val_t(align_));
    std::memset(data_, 0, alloc);
    if (size_) std::memcpy(data_, bytes.data(), size_);
}

KernargBuffer::~KernargBuffer() {
    if (data_) ::operator delete(data_, std::align_val_t(align_));
}

std::vector<CodeObjectImage> images_of(const EmbeddedCodeObjectSet &set) {
    std::vector<CodeObjectImage> v;
    for (size_t j = 0; j < set.count; j++) v.push_back({set.objects[j].arch, set.objects[j].data, set.objects[j].size});
    return v;
}

Status Launcher::create(std::shared_ptr<HipApi> api, const EmbeddedCodeObjectSet &set,
                        std::unique_ptr<Launcher> *out) {
    return create(std::move(api), images_of(set), set.name ? set.name : "", out);
}

Status Launcher::create(std::shared_ptr<HipApi> api, std::vector<CodeObjectImage> images, std::string name,
                        std::unique_ptr<Launcher> *out) {
    out->reset();
    const std::string who = "amdgpu launcher '" + name + "'";
    if (!api) return error(CONVBWD_NULL_POINTER, who + ": no HIP API");
    if (images.empty()) return error(CONVBWD_NOT_SUPPORTED, who + ": no code objects");

    int count = 0;
    int e = api->getDeviceCount(&count);
    if (e != kHipSuccess) return error(CONVBWD_DEVICE_ERROR, who + ": no AMD GPU: hipGetDeviceCount failed: " + api->errorString(e));
    if (count <= 0) return error(CONVBWD_DEVICE_ERROR, who + ": no AMD GPU: hipGetDeviceCount reports 0 devices");
    int device = -1;
    e = api->getDevice(&device);
    if (e != kHipSuccess) return error(CONVBWD_DEVICE_ERROR, who + ": hipGetDevice failed: " + api->errorString(e));
    std::string arch;
    e = api->getDeviceArchName(device, &arch);
    if (e != kHipSuccess)
        return error(CONVBWD_DEVICE_ERROR,
                     who + ": reading gcnArchName of device " + std::to_string(device) + " failed: " + api->errorString(e));
    std::string dev_proc, dev_features;
    split_target_id(arch, &dev_proc, &dev_features);

    std::string embedded;
    for (const auto &img : images) {
        embedded += (embedded.empty() ? "" : ", ") + img.arch;
        std::string proc, features;
        split_target_id(img.arch, &proc, &features);
        if (proc != dev_proc) continue;
        CodeObjectInfo info;
        Status s = parse_code_object(img.data, img.size, &info);
        if (!s.ok()) return error(s.code, who + ": " + img.arch + " image: " + s.message);
        if (info.processor != proc)
            return error(CONVBWD_BAD_PARAM, who + ": image labelled " + img.arch + " is built for " + info.target);
        if (!target_compatible(info.target, arch)) continue;  // e.g. xnack+ image on an xnack- device

        std::unique_ptr<Launcher> l(new Launcher());
        l->api_ = api;
        l->name_ = name;
        l->device_arch_ = arch;
        l->image_arch_ = img.arch;
        l->info_ = std::move(info);
        hipModule_t module = nullptr;
        e = api->moduleLoadData(&module, img.data);
        if (e != kHipSuccess)
            return error(CONVBWD_DEVICE_ERROR, who + ": hipModuleLoadData(" + img.arch + " code object, " +
                                                   std::to_string(img.size) + " bytes) failed: " + api->errorString(e));
        l->module_ = module;
        *out = std::move(l);
        return ok_status();
    }
    return error(CONVBWD_NOT_SUPPORTED, who + ": device " + std::to_string(device) + " is " + arch +
                                            "; no compatible code object among: " + embedded);
}

Launcher::~Launcher() {
    if (api_ && module_) api_->moduleUnload(module_);
}

Status Launcher::function_for(const KernelInfo &k, hipFunction_t *f) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = functions_.find(k.name);
    if (it != functions_.end()) {
        *f = it->second;
        return ok_status();
    }
    hipFunction_t fn = nullptr;
    const int e = api_->moduleGetFunction(&fn, module_, k.name.c_str());
    if (e != kHipSuccess)
        return error(CONVBWD_DEVICE_ERROR, "amdgpu launcher '" + name_ + "': hipModuleGetFunction('" + k.name +
                                               "') failed: " + api_->errorString(e));
    functions_.emplace(k.name, fn);
    *f = fn;
    return ok_status();
}

Status Launcher::launch(std::string_view kernel, const uint32_t grid[3], const uint32_t block[3],
                        uint32_t dynamic_lds_bytes, const std::vector<LaunchArg> &args, hipStream_t stream) {
    LaunchDims d;
    for (int j = 0; j < 3; j++) {
        d.grid[j] = grid[j];
        d.block[j] = block[j];
    }
    d.dynamic_lds_bytes = dynamic_lds_bytes;
    return launch(kernel, d, args, stream);
}

Status Launcher::launch(std::string_view kernel, const LaunchDims &d, const std::vector<LaunchArg> &args,
                        hipStream_t stream) {
    const KernelInfo *k = info_.find(kernel);
    if (!k) {
        std::string names;
        for (const auto &x : info_.kernels) names += (names.empty() ? "" : ", ") + x.name;
        return error(CONVBWD_BAD_PARAM, "amdgpu launcher '" + name_ + "': kernel '" + std::string(kernel) +
                                            "' is not in the " + image_arch_ + " code object (it has: " + names + ")");
    }
    Status s = check_launch_dims(*k, d);
    if (!s.ok()) return s;
    std::vector<uint8_t> bytes;
    s = pack_kernargs(*k, d, args, &bytes);
    if (!s.ok()) return s;
    hipFunction_t fn = nullptr;
    s = function_for(*k, &fn);
    if (!s.ok()) return s;

    KernargBuffer buf(bytes, k->kernarg_segment_align);
    size_t size = buf.size();
    void *extra[] = {kHipLaunchParamBufferPointer, buf.data(), kHipLaunchParamBufferSize, &size, kHipLaunchParamEnd};
    const int e = api_->moduleLaunchKernel(fn, d.grid, d.block, d.dynamic_lds_bytes, stream, nullptr, extra);
    if (e != kHipSuccess)
        return error(CONVBWD_DEVICE_ERROR, "amdgpu launcher '" + name_ + "': hipModuleLaunchKernel('" + k->name +
                                               "', grid " + dims_str(d.grid) + ", block " + dims_str(d.block) +
                                               ", dynamic LDS " + std::to_string(d.dynamic_lds_bytes) +
                                               ") failed: " + api_->errorString(e));
    return ok_status();
}

}  // namespace convbwd::amdgpu
