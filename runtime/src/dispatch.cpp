// Dispatcher: classify, tuning databases, then ordered first fit with reasons (oneDNN impl lists).
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "device_glue.h"
#include "internal.h"

namespace convbwd {

namespace {

bool verbose_dispatch() {
    const char *v = std::getenv("CONVBWD_VERBOSE");
    return v && std::strstr(v, "dispatch");
}

std::string dims(int a, int b) { return std::to_string(a) + "x" + std::to_string(b); }

}  // namespace

std::string problem_key(const Query &q) {
    const ConvProblem &p = q.problem;
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "%s-%s-%s-%s-n%d-c%d-h%d-w%d-k%d-p%d-q%d-r%d-s%d-g%d-pad%d,%d,%d,%d-u%d,%d-l%d,%d",
                  to_string(q.dir), to_string(p.dtype), to_string(p.layout), to_string(q.device), p.N, p.C, p.H,
                  p.W, p.K, p.P, p.Q, p.R, p.S, p.G, p.pad_top, p.pad_bottom, p.pad_left, p.pad_right, p.stride_h,
                  p.stride_w, p.dilation_h, p.dilation_w);
    return buf;
}

std::string cannot_implement(const Selection &sel, const Query &q) {
    const KernelInfo &k = *sel.kernel;
    const ConvProblem &p = q.problem;
    if (k.dir != q.dir) return std::string("direction ") + to_string(k.dir);
    if (k.device != q.device) return std::string("device ") + to_string(k.device);
    if (k.dtype != p.dtype) return std::string("dtype ") + to_string(k.dtype) + ", problem " + to_string(p.dtype);
    if (k.layout != p.layout)
        return std::string("layout ") + to_string(k.layout) + ", problem " + to_string(p.layout);
    if (!stride_class_accepts(k.stride, stride_class(p)))
        return std::string("stride_class ") + to_string(k.stride) + ", problem stride " + dims(p.stride_h, p.stride_w);
    if (!filter_class_accepts(k.filter, filter_class(p)))
        return std::string("filter_class ") + to_string(k.filter) + ", problem filter " + dims(p.R, p.S) + " pad " +
               std::to_string(p.pad_top) + "," + std::to_string(p.pad_bottom) + "," + std::to_string(p.pad_left) +
               "," + std::to_string(p.pad_right) + " dilation " + dims(p.dilation_h, p.dilation_w);
    // A depthwise family's kernels know c = k = groups at compile time; a narrow family's are for
    // c / groups under kNarrowChannels (vectors along the columns).
    if (kernel_knobs(k).family->groups == GroupClass::Depthwise && group_class(p) != GroupClass::Depthwise)
        return "groups: a depthwise kernel (c = k = groups), problem c = " + std::to_string(p.C) + ", k = " +
               std::to_string(p.K) + ", groups = " + std::to_string(p.G);
    if (kernel_knobs(k).family->groups == GroupClass::Narrow && group_class(p) != GroupClass::Narrow)
        return "groups: a narrow kernel (c / groups < " + std::to_string(kNarrowChannels) + ", not depthwise), problem c = " +
               std::to_string(p.C) + ", groups = " + std::to_string(p.G);
    // A direct backward-weight kernel sums every term of a filter element in one running f32 sum:
    // kWgradDirectTerms caps the problem (accuracy; docs/KERNELS.md, "Accuracy").
    if (weight_sums_direct(kernel_knobs(k)))
        if (const int64_t terms = (int64_t)p.N * p.P * p.Q; terms > kWgradDirectTerms)
            return "size: n * p * q = " + std::to_string(terms) + " terms a filter element; the direct kernel sums them in one " +
                   "f32 sum, at most " + std::to_string(kWgradDirectTerms) + " (accuracy; a split kernel follows)";
    // Matrix fragments and staged backward-weight: one GEMM over all channels (the generators
    // require it on entry too).
    if (const Family &f = *kernel_knobs(k).family; takes_one_group(f) && p.G != 1)
        return std::string("groups: a ") +
               (calls_fragments(f)                 ? "matrix-fragment kernel (one GEMM over the channels)"
                : f.groups == GroupClass::Narrow ? "first-layer kernel (the narrow GPU family: one group)"
                                                  : "staged kernel (one GEMM over the channels)") +
               ", problem groups = " + std::to_string(p.G);
    if (const GroupChannels gcs = group_channels(k); gcs.exact > 0) {
        // Whole groups side by side in a vector (group_lanes): the kernel's group size is fixed.
        if (p.G == 1 || p.C / p.G != gcs.exact || p.K / p.G != gcs.exact)
            return "groups: the kernel takes groups of exactly " + std::to_string(gcs.exact) +
                   " channels and k (group_lanes), problem c / groups = " + std::to_string(p.C / p.G) +
                   ", k / groups = " + std::to_string(p.K / p.G);
        if (p.G % gcs.groups_tile != 0)
            return "groups: " + std::to_string(p.G) + " is not a multiple of the " + std::to_string(gcs.groups_tile) +
                   " groups of the kernel's channel tile (group_lanes)";
    } else if (p.G > 1) {
        const int cg = p.C / p.G;
        if (cg % gcs.tile != 0)
            return "groups: c / groups = " + std::to_string(cg) + " is not a multiple of the kernel's channel tile (" +
                   std::to_string(gcs.tile) + "): each tile must lie inside one group";
        if (const int kg = p.K / p.G; kg % gcs.k_tile != 0)
            return "groups: k / groups = " + std::to_string(kg) + " is not a multiple of the kernel's k tile (" +
                   std::to_string(gcs.k_tile) + "): each tile must lie inside one group";
        // A performance condition: narrow problems (c / groups < 8) have their own family.
        if (cg < gcs.min && group_class(p) == GroupClass::Any)
            return "groups: c / groups = " + std::to_string(cg) + " is under the kernel's channel tile (" +
                   std::to_string(gcs.min) + "): its tiles would run mostly masked";
    }
    // A performance condition: a staged block spans c x k (backward-data: its channels and a chunk
    // of the k it sums; backward-weight: c x k of a tap); c or k per group under half of it leaves the
    // block mostly empty (on the H100, docs/PERFORMANCE.md: DCGAN's k = 1 layer ran 0.11x of the next
    // default backward-data; ResNet-50's stem, c = 3, 0.07 of cuDNN backward-weight, the register
    // tiles' first-layer tile 0.46; DCGAN's c = 3 layer 0.25 backward-data, the register tile 0.43).
    // Narrow backward-weight along k (k_vectors): a tile of vec * tile_k k; a layer of under half as many
    // k a group runs its vectors mostly masked (the column lanes follow).
    if (const KnobValues &kv = kernel_knobs(k); kv.family->knobs == &BwdWeightNarrowHostParams::knobs) {
        const BwdWeightNarrowHostParams np = to_params<BwdWeightNarrowHostParams>(kv);
        if (np.k_vectors && 2 * (p.K / p.G) < np.group_k_tile())
            return "k: k / groups = " + std::to_string(p.K / p.G) + " is under half the kernel's tile of k (" +
                   std::to_string(np.group_k_tile()) + ", vectors along k): its vectors would run mostly empty";
    }
    if (const StagedBlock b = staged_block(k); b.c > 0) {
        const bool data = k.dir == Direction::BwdData;
        if (2 * (p.C / p.G) < b.c)
            return "c: c / groups = " + std::to_string(p.C / p.G) + " is under half the kernel's block of channels (" +
                   std::to_string(b.c) + "): its blocks would run mostly empty";
        if (2 * (p.K / p.G) < b.k)
            return "k: k / groups = " + std::to_string(p.K / p.G) + " is under half the kernel's " +
                   (data ? "chunk of k (block_k = " : "block of k (") + std::to_string(b.k) +
                   "): its " + (data ? "chunks" : "blocks") + " would run mostly empty";
    }
    if (const int64_t b = winograd_intermediate_bytes(kernel_knobs(k), p.N, p.C, p.K, p.H, p.W, p.P, p.Q, p.R); b > INT32_MAX)
        return "size: the Winograd kernel's transformed tensors take " + std::to_string(b) +
               " bytes, over the 2^31 - 1 bytes of one device allocation (n = " + std::to_string(p.N) + ", c = " +
               std::to_string(p.C) + ", k = " + std::to_string(p.K) + ")";
    // GPU kernels put rows x images (and staged copies their padded rows) on a grid dim that
    // holds at most 65535 blocks (CUDA's y and z; kept for every GPU target).
    if (const int64_t rows = gpu_grid_rows(sel, q); rows > 65535)
        return "rows: h = " + std::to_string(p.H) + ", n = " + std::to_string(p.N) + ": the kernel puts " +
               std::to_string(rows) + " rows x images (padded, or filter rows x k) on a GPU grid dim of at most 65535 blocks";
    const int v = channel_vector(k);
    if (v > 1 && (p.C % v != 0 || (p.C / p.G) % v != 0))
        return "channels: c = " + std::to_string(p.C) + ", groups = " + std::to_string(p.G) +
               "; the kernel loads channels as vectors of " + std::to_string(v) + " (c and c / groups multiples of " +
               std::to_string(v) + ")";
    // Backward-weight loads dy's channels (k) as vectors too, and only within one group.
    if (v > 1 && k.dir == Direction::BwdWeight && (p.K % v != 0 || p.G != 1))
        return "channels: k = " + std::to_string(p.K) + ", groups = " + std::to_string(p.G) +
               "; the kernel loads x's and dy's channels as vectors of " + std::to_string(v) +
               " (k a multiple of " + std::to_string(v) + ", groups 1)";
    if (const int cv = column_vector(k); cv > 1) {
        // The kernel sees one row of H*W columns where it flattens the plane (runtime: api.cpp).
        // Backward-weight (the host's depthwise kernels reading dy in place): dy's rows of Q columns.
        const bool weight = k.dir == Direction::BwdWeight;
        const bool flat = !weight && flattens_pointwise_plane(sel, p) && q.planes_dense;
        const int64_t cols = weight ? p.Q : flat ? (int64_t)p.H * p.W : p.W;
        const std::string need = " (multiples of " + std::to_string(cv) + "; the kernel loads columns as vectors of " +
                                 std::to_string(cv) + ")";
        if (cols % cv != 0)
            return weight ? "columns: q = " + std::to_string(p.Q) + " per row of dy" + need
                          : "columns: w = " + std::to_string(p.W) +
                                (flat ? ", one row of h * w = " + std::to_string(cols) : std::string(" per row")) + need;
        // Packed tensors (no entries) are aligned once the row is: their strides are multiples of W.
        // (Host kernels load unaligned vectors: rows of whole vectors are all they need.)
        if (k.device != Device::Host) {
            for (const Query::Alignment &al : q.alignments)
                if (al.dim != 3 && al.align % cv != 0 && !(flat && al.dim == 2))
                    return "tensors: " + al.field() + ": base addresses and strides must be multiples of " +
                           std::to_string(cv) + " elements" + need;
        }
    }
    if (const int iv = input_channel_vector(k); iv > 1) {
        // Input tensors (dy; backward-weight: x too) whose channels load in place as vectors.
        const std::string need = " (the kernel loads their channels as vectors of " + std::to_string(iv) + ")";
        if (p.K % iv != 0) return "channels: k = " + std::to_string(p.K) + " is not a multiple of " + std::to_string(iv) + need;
        for (const Query::Alignment &al : q.alignments)
            if (std::strcmp(al.tensor, "dx") != 0 && al.dim != 1 && al.align % iv != 0)
                return "tensors: " + al.field() + ": " + al.tensor + "'s base address and its N, H and W strides must be " +
                       "multiples of " + std::to_string(iv) + " elements" + need;
    }
    // A performance condition: a register-tile backward-weight block (conv_bwd_weight_gpu) spans
    // tile_c x threads_c input channels of one group; a grouped problem with under half as many
    // channels a group leaves it mostly empty (H100, ResNeXt-50's NHWC grouped layer, 8 channels a
    // group: 0.36 of cuDNN on the s1 k3 default's 64-channel block, 1.23 on an 8-channel one;
    // docs/PERFORMANCE.md "Grouped NHWC backward-weight"). Not for the (any, any) defaults, which take
    // every problem. Last: what a kernel cannot load (above) is the reason a user is told first.
    if (const KnobValues &kv = kernel_knobs(k); p.G > 1 && kv.family->knobs == &BwdWeightGpuParams::knobs &&
                                                kv.family->groups == GroupClass::Any &&
                                                !(k.stride == StrideClass::Any && k.filter == FilterClass::Any)) {
        const BwdWeightGpuParams g = to_params<BwdWeightGpuParams>(kv);
        const int cg = p.C / p.G, block = gpu_weight_block_channels(g, cg, p.K, p.S);
        if (2 * cg < block)
            return "c: c / groups = " + std::to_string(cg) + " is under half the kernel's block of input channels (" +
                   std::to_string(block) + "): its blocks would run mostly empty";
    }
    return {};
}

// Performance conditions of the host defaults with 16-lane vectors (a kernel named by --kernel or
// a tuning database still runs); the 8-lane defaults after them in the manifest take what they
// leave. (1) Vectors wider than the ISA the host kernels run at here (convbwd_host_isa(), within
// CONVBWD_MAX_CPU_ISA): each runs as several narrower ones, with as many more registers for the
// tile (classes.txt on the AVX2 variant: 0.35-0.78x of the 8-lane defaults). (2) Channels that do
// not fill at least two of the kernel's channel tiles (vec x tile_c) exactly: the masked tail
// tile runs apart (GoogLeNet's 16- and 48-channel 5x5 layers: 0.1-0.5x of the 8-lane defaults,
// Inception's 160-channel ones 0.3-0.5x on a 64-channel tile).
static std::string host_default_misfit(const KernelInfo &k, const ConvProblem &p) {
    if (k.device != Device::Host) return {};
    const KnobValues &kv = kernel_knobs(k);
    // (0) A direct backward-weight kernel in NHWC (one split, dy read in place) re-reads its k tile's
    // dy columns, a few floats at a stride of k, for every channel tile: where dy outgrows an L2
    // (kDirectNhwcDyBytes) the kernel that follows was faster (two runs over the suites' 1x1 layers:
    // direct / split own time 1.28x where dy <= 1 MiB, 0.87-0.90x above; docs/PERFORMANCE.md, "Host 1x1
    // backward-weight: direct kernels").
    constexpr int64_t kDirectNhwcDyBytes = int64_t{1} << 20;
    if (const int64_t dy_bytes = (int64_t)p.N * p.P * p.Q * p.K * 4;
        weight_sums_direct(kv) && kv.family->knobs == &BwdWeightHostParams::knobs && k.layout == Layout::NHWC &&
        dy_bytes > kDirectNhwcDyBytes)
        return "dy: n * p * q * k = " + std::to_string(dy_bytes / 4) + " floats, over " +
               std::to_string(kDirectNhwcDyBytes) + " bytes: the direct NHWC kernel re-reads dy per channel tile; " +
               "a split kernel follows";
    // (0c) Backward-weight that skips the terms reading x's padding (skip_pad): the dilated layers whose
    // taps reach far into it (DeepLab's ASPP at rates 6-18 on 32x32: 23-61% of the terms, 1.2-2.2x);
    // where under kSkipPadMinPercent of the terms are padding the kernel that follows was faster
    // (Inception's 7x1 on 17x17, 10%: 0.56x; docs/PERFORMANCE.md "Host: backward-weight that skips x's
    // padding").
    constexpr int64_t kSkipPadMinPercent = 15;
    if (kv.get("skip_pad") == 1) {
        const int64_t all = (int64_t)p.P * p.Q * p.R * p.S;
        const int64_t inside = valid_taps_1d(p.H, p.P, p.R, p.pad_top, p.stride_h, p.dilation_h) *
                               valid_taps_1d(p.W, p.Q, p.S, p.pad_left, p.stride_w, p.dilation_w);
        if ((all - inside) * 100 < all * kSkipPadMinPercent)
            return "padding: " + std::to_string(all - inside) + " of the " + std::to_string(all) +
                   " terms per filter element read x's padding, under " + std::to_string(kSkipPadMinPercent) +
                   "%: a kernel that does not skip them follows";
    }
    const int vec = kv.get("vec"), cg = p.C / std::max(1, p.G);
    // (0b) The NCHW 1x1 backward-data GEMM along the planes (cols = 1) reads a channel tile's filter
    // values a stride of c apart per k, and dy whole per channel tile: past kColsMaxK k the packed
    // kernel that follows was faster (a 1024-channel 14x14 layer of k 256: 0.70 of oneDNN against
    // 0.27-0.41). A plane of under four column tiles that does not fill them exactly runs its last
    // tile through clamped (gathered) loads (7x7 layers: 0.11-0.17 against 0.31). docs/PERFORMANCE.md,
    // "Host: x staged for NHWC 1x1 direct backward-weight; NCHW 1x1 backward-data as a GEMM along the planes".
    constexpr int kColsMaxK = 160;
    if (const int64_t tile = kv.family->knobs == &BwdDataHostParams::knobs ? to_params<BwdDataHostParams>(kv).cols_tile() : 0;
        tile > 0) {
        const int64_t plane = (int64_t)p.H * p.W;
        if (p.K > kColsMaxK)
            return "k = " + std::to_string(p.K) + ": over " + std::to_string(kColsMaxK) +
                   " the GEMM along the planes (rows) re-reads the filter a stride of c apart; a packed kernel follows";
        if (k.filter == FilterClass::K1 && plane % tile != 0 && plane < 4 * tile)
            return "plane: h * w = " + std::to_string(plane) + " is under four " + std::to_string(tile) +
                   "-column tiles and not a multiple of one: the last tile's clamped loads dominate; a packed kernel follows";
        // Beyond 1x1 the tiles run along each row, computed whole (GoogLeNet's 14-column rows on 32-column
        // tiles: 0.17-0.33 of oneDNN, on 16-column ones 0.26-0.48).
        if (const int64_t whole = (p.W + tile - 1) / tile * tile; k.filter != FilterClass::K1 && 4 * p.W < 3 * whole)
            return "columns: w = " + std::to_string(p.W) + " fills under 3/4 of its " + std::to_string(whole / tile) + " " +
                   std::to_string(tile) + "-column tiles; a kernel of narrower tiles follows";
    }
    if (vec <= 8) {  // the 8-lane defaults are the last ones: SSE4.1 runs them as pairs
        // (3) An 8-lane backward-weight tile of several vectors over channels it does not divide: the
        // tail tile ran apart, at scalar speed (MobileNet-v2's 24-channel 1x1 layer at 56x56, NHWC:
        // the c2k4 split kernel 1.49 ms, the one-vector c1k4 that follows 0.21 ms). The (any, any)
        // defaults of one vector (tile_c = 1) take what this leaves.
        if (k.dir == Direction::BwdWeight && kv.family->knobs == &BwdWeightHostParams::knobs) {
            const int tile_c = kv.get("tile_c"), tile = tile_c * vec;
            if (tile_c > 1 && cg % tile != 0)
                return "channels: c / groups = " + std::to_string(cg) + " is not a multiple of the kernel's " +
                       std::to_string(tile) + "-channel tiles (its tail tile runs apart); a kernel of one-vector tiles follows";
        }
        return {};
    }
    if (const int lanes = host_f32_lanes(); vec > lanes)
        return "vec: the kernel's f32 vectors of " + std::to_string(vec) + " lanes are wider than this host's (" +
               host_isa() + ": " + std::to_string(lanes) + " lanes); a default for narrower vectors follows";
    // (4) Grouped NCHW backward-weight along the columns (conv_bwd_weight_grouped_host): grouped layers
    // whose output rows fill 1.5 of its column vectors or more. ResNeXt-50's 28-56-column layers (4 and 8
    // channels a group, stride 1 and 2) ran 1.5-3.4x the kernels that follow; its 14- and 7-column ones
    // (16 and 32 channels a group: one vector a row, or half of one) 0.1-0.6x (docs/PERFORMANCE.md,
    // "Host: NCHW grouped backward-weight along the columns").
    if (kv.family->knobs == &BwdWeightGroupedHostParams::knobs) {
        if (p.G == 1)
            return std::string("groups: 1; the grouped columns kernel's tasks are groups (one task); the kernels of "
                               "ungrouped layers follow");
        if (2 * p.Q < 3 * vec)
            return "columns: q = " + std::to_string(p.Q) + " fills under 1.5 of the kernel's " + std::to_string(vec) +
                   "-column vectors a row; the kernels of channel vectors follow";
        return {};
    }
    // (5) NCHW depthwise backward-weight along the columns (full_taps): 16-lane vectors over rows of dy of
    // at most 8 columns run at most half full, and the 8-lane defaults that follow take them (MobileNet-v2's
    // 960-channel and EfficientNet-b0's 1152-channel 7x7 layers: 1.2-1.6x, 3 rounds; 14x14 1.05x, 28x28
    // 0.8-1.0x; docs/PERFORMANCE.md, "Host: NCHW depthwise backward-weight of 7-column rows").
    // (5b) NCHW depthwise backward-weight along the channels (channel_vectors: x's and dy's planes copied
    // channels innermost per task, one split): rows of dy of at most kDwChannelVectorColumns columns.
    // MobileNet-v2's and EfficientNet-b0's 14- and 7-column layers ran 1.1-1.8x the column kernels, their
    // 28- to 112-column ones 0.6-1.0x (docs/PERFORMANCE.md, "Host: NCHW depthwise backward-weight along
    // the channels").
    constexpr int kDwChannelVectorColumns = 14;
    if (kv.family->knobs == &BwdWeightDwHostParams::knobs && k.layout == Layout::NCHW) {
        const bool channels = to_params<BwdWeightDwHostParams>(kv).along_channels(k.layout);
        if (channels && p.Q > kDwChannelVectorColumns)
            return "columns: q = " + std::to_string(p.Q) + " over " + std::to_string(kDwChannelVectorColumns) +
                   ": the channel-vector kernel copies whole planes per task; the column kernels follow";
        if (!channels && kv.get("full_taps") && 2 * p.Q <= vec)
            return "columns: q = " + std::to_string(p.Q) + " fills at most half of the kernel's " + std::to_string(vec) +
                   "-column vectors a row; an 8-lane default follows";
    }
    // (5c) NHWC depthwise backward-weight written from the register tile (direct: one split of every
    // image, dy and x read in place): n * p * q at most kDwDirectNhwcTerms. MobileNet-v2's and
    // EfficientNet-b0's layers at batch 1 ran 1.0-3.6x the split kernels (7x7 and 14x14 planes 1.7-3.6x),
    // 7x7 planes at batch 4 and 8 1.5-1.8x, at batch 16 0.7-1.1x and at batch 32 0.63-0.71x; 14x14 at
    // batch 8 1.07x (docs/PERFORMANCE.md, "Host: NHWC depthwise backward-weight written from the tile").
    constexpr int64_t kDwDirectNhwcTerms = 512;
    if (kv.family->knobs == &BwdWeightDwHostParams::knobs && k.layout == Layout::NHWC && weight_sums_direct(kv))
        if (const int64_t terms = (int64_t)p.N * p.P * p.Q; terms > kDwDirectNhwcTerms)
            return "size: n * p * q = " + std::to_string(terms) + " over " + std::to_string(kDwDirectNhwcTerms) +
                   ": the NHWC direct depthwise kernel runs each channel tile over every image in one task; a split "
                   "kernel follows";
    // Depthwise kernels tile c (= groups) in masked tiles of 16-lane vectors: the channel counts of
    // MobileNet-v2 and EfficientNet-b0 are multiples of 16 (docs/PERFORMANCE.md, "Host on a Zen 5 VM").
    if (kv.family->groups == GroupClass::Depthwise) return {};
    // A vector of whole groups (group_lanes) fills its lanes where cannot_implement takes the problem.
    const GroupChannels gcs = group_channels(k);
    if (gcs.exact > 0) return {};
    // The register tile's channels, as the family's group traits give them (schedules/spaces.h: the
    // packed backward-data tile, group_channel_tile; backward-weight's, group_channels_min).
    const int tile = std::max(gcs.tile, gcs.min);
    // Direct backward-weight kernels (tasks of channel tiles, each summing every pixel) ran 2-6x the
    // 8-lane split kernels' speed on a single tile too (GoogLeNet's and Inception's 5x5 layers of 16
    // to 48 channels), and their one-vector tiles with a masked tail (24, 40, 48 channels): whole
    // tiles, or any count on one-vector tiles (docs/PERFORMANCE.md, "Host backward-weight: direct
    // kernels beyond 1x1").
    if (weight_sums_direct(kv)) {
        // One group's tiles (group_tile), tasks of whole groups: grouped layers' (ResNeXt's 16- and
        // 32-channel groups: 2-4x the kernels that follow; docs/PERFORMANCE.md "Host grouped
        // backward-weight of 16 and 32 channels a group: tasks of whole groups").
        if (kv.get("group_tile") == 1 && p.G == 1)
            return "groups: a direct kernel of one group's tiles is for grouped layers (its tasks are blocks of "
                   "groups); the direct kernels of ungrouped layers follow";
        // A one-vector tile over 24 channels runs its second vector half empty: the 8-lane kernels
        // that follow (three whole vectors) ran 1.7x faster (MobileNet-v2's 24-channel 1x1 layer,
        // NCHW; its 5x5 one of EfficientNet, NHWC; docs/PERFORMANCE.md "Host: the harness's warm-up").
        if (tile == vec && cg < 2 * vec && cg % vec != 0 && cg % 8 == 0)
            return "channels: c / groups = " + std::to_string(cg) + " leaves the one-vector tile's last " +
                   std::to_string(vec) + "-lane vector half empty; 8-lane kernels of whole vectors follow";
        if (cg % tile == 0 || tile == vec) return {};
        return "channels: c / groups = " + std::to_string(cg) + " is not a multiple of the direct kernel's " +
               std::to_string(tile) + "-channel tiles; a kernel of narrower tiles follows";
    }
    // Backward-data's one-vector tiles (tile_c = 1) run a masked tail of at most one vector: where c / groups
    // fills one vector at least, they ran 1.3-2x the 8-lane kernels that follow (GoogLeNet's 5x5 layers of
    // 16-48 channels, Inception's 32-channel 3x3 ones; docs/PERFORMANCE.md, "Host: stride-2 phase rows; 16-lane
    // tiles for narrow and stride-2 layers; NCHW rows' GEMM beyond 1x1").
    if (tile == vec && k.dir == Direction::BwdData) {
        if (cg >= vec) return {};
        return "channels: c / groups = " + std::to_string(cg) + " is under one of the kernel's " + std::to_string(vec) +
               "-lane vectors; a default for narrower vectors follows";
    }
    // Grouped backward-weight's one-vector tiles of one group (group_tile): where c / groups is whole
    // vectors, they ran 1.2-1.6x the 8-lane kernels that follow (ResNeXt's 16-channel groups, NHWC;
    // docs/PERFORMANCE.md, "Host: the harness's warm-up ...").
    if (tile == vec && k.dir == Direction::BwdWeight && p.G > 1 && kv.get("group_tile") == 1 && cg % vec == 0) return {};
    // Vectors of channels x k (k_lanes; tile = its channel lanes x tile_c): the default for groups of
    // exactly one tile, where a vector of channels alone would run part empty (ResNeXt's 8 and 4
    // channels a group: 1.2-1.3x and 1.1-6x the kernels that follow; docs/PERFORMANCE.md, "Host grouped
    // layers: vectors of whole groups, vectors of channels x k").
    if (k.dir == Direction::BwdWeight && kv.get("k_lanes") > 1) {
        if (p.G > 1 && cg == tile) return {};
        return "channels: c / groups = " + std::to_string(cg) + " is not the kernel's " + std::to_string(tile) +
               "-channel tile of a grouped layer (vectors of channels x k_lanes k); a default for other tiles follows";
    }
    if (cg % tile != 0 || cg < 2 * tile)
        return "channels: c / groups = " + std::to_string(cg) + " is not a multiple of two or more of the kernel's " +
               std::to_string(tile) + "-channel tiles (16-lane vectors x tile_c); a default for narrower tiles follows";
    return {};
}

// Performance conditions of the GPU defaults (a kernel named by --kernel or a tuning database still
// runs). (G1) A matrix-fragment backward-data default at stride 1 over filter taps (k3, any) puts one
// row's columns in its blocks, data_block_columns() of them: a plane of at most half as many columns leaves
// its fragments at most half full, and a default of the same class with narrower blocks later in the
// list takes the problem (H200, bf16 and f16: ResNet-50's 14x14 and 7x7 3x3 layers and VGG-16's 14x14
// ran 1.37-1.66x faster on 16-pixel blocks than on the 32-pixel default, Inception-v3's 8x8 layers
// (class any) 1.18-1.99x; 28 columns and more were as fast or faster on 32; docs/PERFORMANCE.md,
// "Matrix fragments: staged chunks and folded rows").
// (G2) A matrix-fragment backward-data default that copies dy first (data_mma_copies_dy: NCHW, vec=4)
// over a 1x1 filter: where c < kCopyDyMinChannels, the copy (a pass over dy, which a 1x1 layer's 2c
// FLOPs per element of dy do not hide) costs more than its vector loads save, and a default of the
// class reading dy in place follows (H200, bf16, ResNet-50: c = 64 ran 0.63-0.76x its in-place twin,
// c = 128 the same, c >= 256 1.07-1.65x; docs/PERFORMANCE.md, "NCHW backward-data: dy copied ...").
// (G3) A matrix-fragment backward-weight default at stage 0 holds weight_block_rows() output channels a
// block: where k fills at most half of them, a default of the same class with fewer rows later in the list takes the
// problem (H200: Inception-v3's 32-channel 3x3 layer on the two-warp block of 64 rows ran 0.73x the
// one-warp kernel of 32 NHWC, 0.84x NCHW, bf16 and f16; docs/PERFORMANCE.md, "blocks of warps at stage 0,
// the second round").
static constexpr int kCopyDyMinChannels = 128;
static std::string gpu_default_misfit(const KernelInfo &k, const ConvProblem &p) {
    if (k.device == Device::Host) return {};
    const KnobValues &kv = kernel_knobs(k);
    if (!calls_fragments(*kv.family)) return {};
    // The first default of k's kind and class after it in the list, of its family, that `better` holds for.
    auto later = [&](auto better) -> const KernelInfo * {
        bool after = false;
        for (const KernelInfo *o : *kernel_list()) {
            if (o == &k) after = true;
            if (!after || o == &k || o->role != Role::Default || o->dir != k.dir || o->device != k.device ||
                o->dtype != k.dtype || o->layout != k.layout || o->stride != k.stride || o->filter != k.filter)
                continue;
            if (const KnobValues &ov = kernel_knobs(*o); ov.family == kv.family && better(ov)) return o;
        }
        return nullptr;
    };
    if (k.dir == Direction::BwdWeight) {
        auto rows = [](const KnobValues &v) { return weight_block_rows(to_params<BwdWeightMmaGpuParams>(v)); };
        const int own = rows(kv);
        if (kv.get("stage") > 0 || 2 * p.K > own) return {};
        if (const KernelInfo *o = later([&](const KnobValues &ov) { return rows(ov) < own; }))
            return "k = " + std::to_string(p.K) + " fills at most half of the kernel's blocks of " + std::to_string(own) +
                   " output channels; " + o->name + " (" + std::to_string(rows(kernel_knobs(*o))) + ") follows";
        return {};
    }
    auto params = [](const KnobValues &v) { return to_params<BwdDataMmaGpuParams>(v); };
    if (k.filter == FilterClass::K1 && p.C < kCopyDyMinChannels && data_mma_copies_dy(params(kv), k.layout)) {
        if (const KernelInfo *o = later([&](const KnobValues &ov) { return !data_mma_copies_dy(params(ov), k.layout); }))
            return "channels: c = " + std::to_string(p.C) + " under " + std::to_string(kCopyDyMinChannels) +
                   ": a 1x1 layer's copy of dy costs more than the kernel's vector loads save; " + o->name +
                   " (dy in place) follows";
        return {};
    }
    if (k.stride != StrideClass::S1 || k.filter == FilterClass::K1) return {};
    const int cols = data_block_columns(params(kv));
    if (2 * p.W > cols) return {};
    if (const KernelInfo *o = later([&](const KnobValues &ov) { return data_block_columns(params(ov)) < cols; }))
        return "columns: w = " + std::to_string(p.W) + " fills at most half of the kernel's rows of " +
               std::to_string(cols) + " pixels; " + o->name + " (" + std::to_string(data_block_columns(params(kernel_knobs(*o)))) +
               ") follows";
    return {};
}

static Selection select_kernel_walk(const Query &q, std::string *why_none) {
    const bool verbose = verbose_dispatch();
    bool why_none_specific = false;
    const std::string key = problem_key(q);
    // Tuning databases: the user's records, then the default ones; the first usable one wins.
    for (const TuningRecord &r : tuning_records(key)) {
        std::string why;
        Selection sel;
        if (const KernelInfo *k = find_kernel(r.kernel); !k)
            why = "kernel not built into this library";
        else if (std::string e = with_launch_knobs(*k, r.launch, &sel); !e.empty())
            why = "bad launch knob: " + e;
        else
            why = cannot_implement(sel, q);
        if (why.empty()) {
            sel.source = "tuning db " + r.where;
            if (verbose)
                std::fprintf(stderr, "convbwd dispatch: [%s] %s -> %s%s%s\n", key.c_str(), sel.source.c_str(),
                             r.kernel.c_str(), r.launch.empty() ? "" : " ", r.launch.c_str());
            return sel;
        }
        if (verbose)
            std::fprintf(stderr, "convbwd dispatch: [%s] skipped tuning db %s (%s): %s\n", key.c_str(), r.where.c_str(),
                         r.kernel.c_str(), why.c_str());
    }
    for (const KernelInfo *k : *kernel_list()) {
        if (k->role != Role::Default) continue;  // candidates and baselines run only when named
        Selection sel = select_as_built(*k, "kernel list");
        std::string why = cannot_implement(sel, q);
        if (why.empty()) why = host_default_misfit(*k, q.problem);
        if (why.empty()) why = gpu_default_misfit(*k, q.problem);
        if (why.empty()) {
            if (verbose) std::fprintf(stderr, "convbwd dispatch: [%s] chose %s\n", key.c_str(), k->name);
            return sel;
        }
        // Kernels of another direction, device, dtype or layout are not worth a line each.
        const bool same_kind = k->dir == q.dir && k->device == q.device && k->dtype == q.problem.dtype &&
                               k->layout == q.problem.layout;
        // Report the first rejection past the class checks (a kernel of the problem's class that
        // still cannot take it), else the first one.
        const bool past_class = why.rfind("stride_class ", 0) != 0 && why.rfind("filter_class ", 0) != 0;
        if (same_kind && why_none && (why_none->empty() || (past_class && !why_none_specific))) {
            *why_none = std::string(k->name) + ": " + why;
            why_none_specific = past_class;
        }
        if (verbose && same_kind)
            std::fprintf(stderr, "convbwd dispatch: [%s] rejected %s: %s\n", key.c_str(), k->name, why.c_str());
    }
    if (verbose) std::fprintf(stderr, "convbwd dispatch: [%s] no kernel\n", key.c_str());
    return {};
}

namespace {

// What select_kernel_walk's choice depends on, as integers: the query (problem, direction, device,
// planes_dense and each alignment), the kernel list (modules only append, so its size names it) and
// the tuning databases loaded (tuning_db_generation()).
struct DispatchKey {
    static constexpr int kMax = 64;
    int v[kMax];
    int n = 0;
    void add(int x) {
        if (n < kMax) v[n++] = x;
    }
    bool operator==(const DispatchKey &o) const { return n == o.n && std::memcmp(v, o.v, n * sizeof(int)) == 0; }
};
struct DispatchKeyHash {
    size_t operator()(const DispatchKey &k) const {
        uint64_t h = 1469598103934665603ull;  // FNV-1a over the integers
        for (int i = 0; i < k.n; i++) h = (h ^ (uint32_t)k.v[i]) * 1099511628211ull;
        return (size_t)h;
    }
};

// False where the key would not fit (a query with more alignments than any run() makes): uncached.
bool dispatch_key(const Query &q, size_t kernels, uint64_t db_generation, DispatchKey *k) {
    const ConvProblem &p = q.problem;
    // Every field of ConvProblem below: a field added there must be added here (else two problems
    // that differ in it would share a choice).
    static_assert(sizeof(ConvProblem) == 20 * sizeof(int), "ConvProblem changed: update dispatch_key");
    for (int x : {p.N, p.C, p.H, p.W, p.K, p.P, p.Q, p.R, p.S, p.G, p.pad_top, p.pad_bottom, p.pad_left, p.pad_right,
                  p.stride_h, p.stride_w, p.dilation_h, p.dilation_w, (int)p.dtype, (int)p.layout, (int)q.dir,
                  (int)q.device, (int)q.planes_dense, (int)kernels, (int)(uint32_t)db_generation,
                  (int)(uint32_t)(db_generation >> 32), (int)q.alignments.size()})
        k->add(x);
    for (const Query::Alignment &al : q.alignments) {
        k->add(al.align);
        k->add(al.dim);
        k->add(al.tensor[0] | al.tensor[1] << 8);  // "dy", "dx", "x": which tensor
    }
    return k->n < DispatchKey::kMax;
}

constexpr size_t kDispatchCacheEntries = 4096;  // past it the cache starts again (a bound, not an LRU)

}  // namespace

std::shared_ptr<const Selection> select_kernel(const Query &q, std::string *why_none) {
    static std::mutex mutex;
    static std::unordered_map<DispatchKey, std::shared_ptr<const Selection>, DispatchKeyHash> cache;
    DispatchKey key;
    const bool cached = !verbose_dispatch() && dispatch_key(q, kernel_list()->size(), tuning_db_generation(), &key);
    if (cached) {
        std::lock_guard<std::mutex> lock(mutex);
        if (auto it = cache.find(key); it != cache.end()) return it->second;
    }
    auto sel = std::make_shared<const Selection>(select_kernel_walk(q, why_none));
    if (cached && sel->kernel) {
        std::lock_guard<std::mutex> lock(mutex);
        if (cache.size() >= kDispatchCacheEntries) cache.clear();
        cache.emplace(key, sel);
    }
    return sel;
}

Status device_of(int t, Device *d) {
    switch (t) {
    case CONVBWD_TARGET_HOST: *d = Device::Host; break;
    case CONVBWD_TARGET_OPENCL: *d = Device::OpenCL; break;
    case CONVBWD_TARGET_CUDA: *d = Device::Cuda; break;
    case CONVBWD_TARGET_AMDGPU: *d = Device::AmdGpu; break;
    default:
        return fail(CONVBWD_BAD_PARAM, "exec.target = " + std::to_string(t) + " is not a convbwd_target");
    }
    if (!device_compiled(*d))
        return fail(CONVBWD_NOT_SUPPORTED, std::string("exec.target = ") + to_string(*d) +
                                               ": this build of convbwd has no kernels for it (CONVBWD_TARGETS)");
    return {};
}

}  // namespace convbwd
