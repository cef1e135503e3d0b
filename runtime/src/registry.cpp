// The kernel registry, generated from the kernel list (schedules/variants.cmake).
#include <algorithm>
#include <cstring>
#include <sstream>
#include <type_traits>
#include <vector>

#include "all_kernels.h"
#include "internal.h"
#include "schedules/params.h"

namespace convbwd {
namespace {

// A kernel whose signature matches neither function type fails to compile here.
const KernelInfo kKernels[] = {
#define CONVBWD_KERNEL(name, dir, dtype, layout, stride, filter, on, sched, role)                               \
    {#name,      Direction::dir, DType::dtype, Layout::layout, StrideClass::stride, FilterClass::filter, \
     Device::on, sched,          role,         KernelFn(&kernels::name)},
#include "kernel_list.inc"
#undef CONVBWD_KERNEL
};

}  // namespace

const KernelInfo *kernels_begin() { return kKernels; }
const KernelInfo *kernels_end() { return kKernels + sizeof(kKernels) / sizeof(kKernels[0]); }

namespace {
// The kernel's schedule parameters: the struct's defaults (as the generator had them) overridden
// by the kernel list's key=value string.
template <class Params>
Params parse_schedule(const KernelInfo &k) {
    Params params;
    std::istringstream in(k.schedule);
    for (std::string kv; in >> kv;) {
        size_t eq = kv.find('=');
        if (eq != std::string::npos) set_param(params, kv.substr(0, eq), kv.substr(eq + 1));
    }
    return params;
}
}  // namespace

namespace {
// A GPU kernel's schedule parameters (Params: its direction's struct), parsed once per registry
// entry (the dispatcher asks for every candidate of every call).
template <class Params>
Params gpu_params(const KernelInfo &k, Direction dir) {
    static const std::vector<Params> parsed = [dir] {
        std::vector<Params> v;
        for (const KernelInfo *i = kernels_begin(); i != kernels_end(); ++i)
            v.push_back(i->dir == dir && i->device != Device::Host ? parse_schedule<Params>(*i) : Params{});
        return v;
    }();
    if (&k >= kernels_begin() && &k < kernels_end()) return parsed[(size_t)(&k - kernels_begin())];
    return parse_schedule<Params>(k);  // not a registry entry
}
BwdDataGpuParams gpu_data_params(const KernelInfo &k) { return gpu_params<BwdDataGpuParams>(k, Direction::BwdData); }
BwdWeightGpuParams gpu_weight_params(const KernelInfo &k) {
    return gpu_params<BwdWeightGpuParams>(k, Direction::BwdWeight);
}
}  // namespace

int64_t weight_max_splits(const KernelInfo &k, const ConvProblem &p) {
    const int64_t rows = (int64_t)p.N * p.P, Cg = p.C / p.G;
    const int64_t partial_bytes = (int64_t)p.K * Cg * p.R * p.S * (int64_t)sizeof(float);
    // Workspace at most 256 MiB, whatever the cap.
    const int64_t by_workspace = std::max<int64_t>(1, (int64_t{256} << 20) / std::max<int64_t>(partial_bytes, 1));
    int64_t want;
    if (k.device == Device::Host) {
        want = parse_schedule<BwdWeightHostParams>(k).max_splits;
    } else {
        // Enough blocks per launch (one launch per filter tap) to fill a large GPU: split_blocks
        // (528 = 4 x 132 multiprocessors) from the tiles one split has.
        const BwdWeightGpuParams g = gpu_weight_params(k);
        int64_t tiles = ((Cg + g.tile_c * g.threads_c - 1) / (g.tile_c * g.threads_c)) *
                        ((p.K + g.tile_k * g.threads_k - 1) / (g.tile_k * g.threads_k));
        // As schedules/gpu.cpp's first-layer tile: blocks of k tiles x filter rows.
        if (g.fuse_taps && takes_first_layer_tile<int64_t>(g, Cg, p.K, p.S))
            tiles = ((p.K + g.tile_k * g.threads_k - 1) / (g.tile_k * g.threads_k)) *
                    ((p.R + g.threads_c - 1) / g.threads_c);
        want = std::min<int64_t>(g.max_splits, (std::max(1, g.split_blocks) + tiles - 1) / tiles);
    }
    return std::max<int64_t>(1, std::min({want, by_workspace, rows}));
}

bool flattens_pointwise_plane(const KernelInfo &k, const ConvProblem &p) {
    if (k.dir != Direction::BwdData || k.device == Device::Host) return false;
    return gpu_data_params(k).flat && p.R == 1 && p.S == 1 && p.stride_h == 1 && p.stride_w == 1 &&
           p.pad_top == 0 && p.pad_bottom == 0 && p.pad_left == 0 && p.pad_right == 0;
}

int channel_vector(const KernelInfo &k) {
    if (k.device == Device::Host) return 1;
    return k.dir == Direction::BwdData ? gpu_data_params(k).channel_vector() : gpu_weight_params(k).channel_vector();
}

int64_t gpu_grid_rows(const KernelInfo &k, const Query &q) {
    const ConvProblem &p = q.problem;
    if (k.device == Device::Host) return 0;
    const int64_t N = p.N, H = p.H, pads = (int64_t)p.pad_top + p.pad_bottom;
    if (k.dir == Direction::BwdData) {
        const BwdDataGpuParams g = gpu_data_params(k);
        // The output (and a stride phase array) fuses rows and images; a plane read as one row
        // (flat) has one row per image.
        const bool flat = flattens_pointwise_plane(k, p) && q.planes_dense;
        int64_t rows = flat ? N : H * N;
        if (g.stage == 1 || g.stage == 2) {
            // The channels-innermost copies: dy's rows with its border (at stride 1 the filter's
            // reach, dil * (R - 1), whatever the padding), and w's filter rows x k.
            const int64_t dy_rows = flat ? 1 : H + std::max<int64_t>(pads, (int64_t)p.dilation_h * (p.R - 1));
            rows = std::max({rows, dy_rows * N, (int64_t)p.R * p.K});
        }
        return rows;  // stage 3's copy puts its rows on the grid's first dim
    }
    // Backward-weight: only the channels-innermost copies (x with its border, NCHW dy) fuse rows
    // and images; the kernels themselves put splits and filter taps on the grid.
    return gpu_weight_params(k).stage ? std::max(H + pads, (int64_t)p.P) * N : 0;
}

int column_vector(const KernelInfo &k) {
    if (k.dir != Direction::BwdData || k.device == Device::Host) return 1;
    return gpu_data_params(k).column_vector();
}

int64_t weight_splits(const KernelInfo &k, const ConvProblem &p) {
    return wgrad_splits((int64_t)p.N * p.P, weight_max_splits(k, p));
}

int64_t workspace_bytes(const KernelInfo &k, const ConvProblem &p) {
    if (k.dir != Direction::BwdWeight) return 0;
    return (int64_t)p.K * (p.C / p.G) * p.R * p.S * weight_splits(k, p) * (int64_t)sizeof(float);
}

const KernelInfo *find_kernel(const std::string &name) {
    for (const KernelInfo *k = kernels_begin(); k != kernels_end(); ++k)
        if (name == k->name) return k;
    return nullptr;
}

}  // namespace convbwd
