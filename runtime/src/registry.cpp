// The kernel registry, generated from the kernel manifest (schedules/kernels.manifest), and the
// geometry the runtime needs of a kernel, asked of its params (schedules/spaces.h).
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "all_kernels.h"
#include "internal.h"

namespace convbwd {
namespace {

// A kernel whose signature matches neither function type fails to compile here.
const KernelInfo kKernels[] = {
#define CONVBWD_KERNEL(name, dir, dtype, layout, stride, filter, on, family, role, sched, launch)                    \
    {#name,  Direction::dir, DType::dtype, Layout::layout, StrideClass::stride, FilterClass::filter, Device::on, \
     family, Role::role,     sched,        launch,         KernelFn(&kernels::name)},
#include "kernel_list.inc"
#undef CONVBWD_KERNEL
};

}  // namespace

const KernelInfo *kernels_begin() { return kKernels; }
const KernelInfo *kernels_end() { return kKernels + sizeof(kKernels) / sizeof(kKernels[0]); }

const KnobValues &kernel_knobs(const KernelInfo &k) {
    // Parsed once per registry entry (the dispatcher asks for every candidate of every call). The
    // manifest tool checked these strings against the same tables: a failure here is a build bug.
    static const std::vector<KnobValues> parsed = [] {
        std::vector<KnobValues> v;
        for (const KernelInfo *i = kernels_begin(); i != kernels_end(); ++i) {
            const Family *f = find_family(i->family);
            KnobValues kv = default_values(*f);
            parse_knobs(std::string(i->schedule) + " " + i->launch, &kv);
            v.push_back(kv);
        }
        return v;
    }();
    return parsed[(size_t)(&k - kernels_begin())];
}

std::string with_launch_knobs(const KernelInfo &k, const std::string &launch, Selection *out) {
    Selection s = select_as_built(k);
    const KnobKind only = KnobKind::Launch;
    if (std::string e = parse_knobs(launch, &s.knobs, &only); !e.empty()) return e;
    *out = std::move(s);
    return {};
}

namespace {
template <class Params>
Params params_of(const Selection &s) {
    return to_params<Params>(s.knobs);
}
}  // namespace

int64_t weight_max_splits(const Selection &s, const ConvProblem &p) {
    const KernelInfo &k = *s.kernel;
    const int64_t rows = (int64_t)p.N * p.P, Cg = p.C / p.G;
    const int64_t partial_bytes = (int64_t)p.K * Cg * p.R * p.S * (int64_t)sizeof(float);
    // Workspace at most 256 MiB, whatever the cap.
    const int64_t by_workspace = std::max<int64_t>(1, (int64_t{256} << 20) / std::max<int64_t>(partial_bytes, 1));
    int64_t want;
    if (k.device == Device::Host) {
        want = s.knobs.get("max_splits");  // every host backward-weight family has it
        // split_pixels (conv_bwd_weight_host; 0 or absent: max_splits alone).
        if (const int64_t px = s.knobs.get("split_pixels"); px > 0)
            want = std::min<int64_t>(want, std::max<int64_t>(1, rows * p.Q / px));
    } else {
        // Enough blocks per launch (one launch per filter tap) to fill a large GPU: split_blocks
        // (528 = 4 x 132 multiprocessors) from the tiles one split has.
        const BwdWeightGpuParams g = params_of<BwdWeightGpuParams>(s);
        const int64_t tiles = gpu_weight_blocks_per_split(g, s.knobs.family->groups, Cg, p.K, p.R, p.S);
        want = std::min<int64_t>(g.max_splits, (std::max(1, g.split_blocks) + tiles - 1) / tiles);
    }
    int64_t splits = std::max<int64_t>(1, std::min({want, by_workspace, rows}));
    // Splits of whole images (spaces.h): a divisor of N.
    if (weight_image_splits(s.knobs.family->kind, s.knobs.family->groups))
        while (p.N % splits != 0) splits--;
    return splits;
}

bool flattens_pointwise_plane(const Selection &s, const ConvProblem &p) {
    const KernelInfo &k = *s.kernel;
    if (k.dir != Direction::BwdData || k.device == Device::Host) return false;
    return params_of<BwdDataGpuParams>(s).flat && p.R == 1 && p.S == 1 && p.stride_h == 1 && p.stride_w == 1 &&
           p.pad_top == 0 && p.pad_bottom == 0 && p.pad_left == 0 && p.pad_right == 0;
}

int channel_vector(const KernelInfo &k) {
    if (k.device == Device::Host) return 1;
    const KnobValues &kv = kernel_knobs(k);  // compile-time knobs: no launch override matters
    return k.dir == Direction::BwdData ? to_params<BwdDataGpuParams>(kv).channel_vector()
                                       : to_params<BwdWeightGpuParams>(kv).channel_vector();
}

int64_t gpu_grid_rows(const Selection &s, const Query &q) {
    const KernelInfo &k = *s.kernel;
    const ConvProblem &p = q.problem;
    if (k.device == Device::Host) return 0;
    const int64_t N = p.N, H = p.H, pads = (int64_t)p.pad_top + p.pad_bottom;
    if (k.dir == Direction::BwdData) {
        const BwdDataGpuParams g = params_of<BwdDataGpuParams>(s);
        // The output (and a stride phase array) fuses rows and images; a plane read as one row
        // (flat) has one row per image.
        const bool flat = flattens_pointwise_plane(s, p) && q.planes_dense;
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
    return params_of<BwdWeightGpuParams>(s).stage ? std::max(H + pads, (int64_t)p.P) * N : 0;
}

int column_vector(const KernelInfo &k) {
    if (k.dir != Direction::BwdData || k.device == Device::Host) return 1;
    return to_params<BwdDataGpuParams>(kernel_knobs(k)).column_vector();
}

int64_t weight_splits(const Selection &s, const ConvProblem &p) {
    return wgrad_splits((int64_t)p.N * p.P, weight_max_splits(s, p));
}

int64_t workspace_bytes(const Selection &s, const ConvProblem &p) {
    if (s.kernel->dir != Direction::BwdWeight) return 0;
    return (int64_t)p.K * (p.C / p.G) * p.R * p.S * weight_splits(s, p) * (int64_t)sizeof(float);
}

const KernelInfo *find_kernel(const std::string &name) {
    for (const KernelInfo *k = kernels_begin(); k != kernels_end(); ++k)
        if (name == k->name) return k;
    return nullptr;
}

}  // namespace convbwd
