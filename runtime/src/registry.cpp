// The kernel registry, generated from the kernel manifest (schedules/kernels.manifest) and
// extended by kernel modules (convbwd/convbwd_module.h), and the geometry the runtime needs of a
// kernel, asked of its params (schedules/spaces.h).
#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "all_kernels.h"
#include "convbwd/convbwd_module.h"
#include "device_glue.h"
#include "internal.h"
#include "schedules/manifest.h"

namespace convbwd {
namespace {

// A kernel whose signature matches neither function type fails to compile here.
const KernelInfo kBuiltIn[] = {
#define CONVBWD_KERNEL(name, dir, dtype, layout, stride, filter, on, family, role, sched, launch)                    \
    {#name,  Direction::dir, DType::dtype, Layout::layout, StrideClass::stride, FilterClass::filter, Device::on, \
     family, Role::role,     sched,        launch,         KernelFn(&kernels::name)},
#include "kernel_list.inc"
#undef CONVBWD_KERNEL
};

// One registered kernel: its row, its knob values parsed once (the dispatcher asks for them on
// every candidate of every call) and, for a module's kernel, the strings its row points into.
struct Entry {
    KernelInfo info;
    KnobValues knobs;
    std::string all_knobs, name, family, schedule, launch, module;
};

// The registry: the built-in kernels in manifest order, then the kernels of loaded modules.
// Entries never move or die (a deque, modules never unloaded); readers take the published list.
struct Registry {
    std::mutex mutex;
    std::deque<Entry> entries;                                   // guarded by mutex
    std::shared_ptr<const std::vector<const KernelInfo *>> list;  // atomic_load / atomic_store
};

void add_entry(Registry &r, const KernelInfo &k, KnobValues kv) {
    r.entries.push_back(Entry{k, std::move(kv), {}, {}, {}, {}, {}, {}});
    Entry &e = r.entries.back();
    e.all_knobs = print_knobs(e.knobs);
    e.info.knobs = &e.knobs;
    e.info.all_knobs = e.all_knobs.c_str();
    e.info.exact_on_integers = exact_on_integers(e.knobs, e.info.filter);  // derived once (a Winograd transform's rationals)
}

void publish(Registry &r) {
    auto list = std::make_shared<std::vector<const KernelInfo *>>();
    for (const Entry &e : r.entries) list->push_back(&e.info);
    std::atomic_store(&r.list, std::shared_ptr<const std::vector<const KernelInfo *>>(std::move(list)));
}

Registry &registry() {
    static Registry *r = [] {
        // Never destroyed once built (kernels may be asked for during exit); an allocation failing
        // while it is built frees what was built, and the next call builds it again.
        auto reg = std::make_unique<Registry>();
        for (const KernelInfo &k : kBuiltIn) {
            // The manifest tool checked these strings against the same tables: a failure here is
            // a build bug.
            const Family *f = find_family(k.family);
            KnobValues kv = default_values(*f);
            parse_knobs(std::string(k.schedule) + " " + k.launch, &kv);
            add_entry(*reg, k, std::move(kv));
        }
        publish(*reg);
        return reg.release();
    }();
    return *r;
}

}  // namespace

KernelList kernel_list() { return std::atomic_load(&registry().list); }

const KnobValues &kernel_knobs(const KernelInfo &k) { return *k.knobs; }

Status load_kernel_module(const std::string &path, int *added) {
    if (added) *added = 0;
    if (path.empty()) return fail(CONVBWD_BAD_PARAM, "kernel module: path is empty");
    // RTLD_LOCAL: the module's own symbols (its pipelines) stay its own; its references to the
    // Halide runtime resolve to the one this program exports (convbwd::convbwd's link options).
    void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        std::string why = e ? e : "dlopen failed";
        if (why.find("undefined symbol: halide_") != std::string::npos ||
            why.find("undefined symbol: convbwd_opencl_fragments_") != std::string::npos ||
            why.find("undefined symbol: convbwd_cuda_fragments_") != std::string::npos)
            why += " (the program does not export the Halide runtime inside libconvbwd.a: link it with "
                   "convbwd::convbwd, or add -Wl,--export-dynamic-symbol=halide_* "
                   "-Wl,--export-dynamic-symbol=convbwd_opencl_fragments_* "
                   "-Wl,--export-dynamic-symbol=convbwd_cuda_fragments_*)";
        return fail(CONVBWD_BAD_PARAM, "kernel module " + path + ": " + why);
    }
    auto entry = (convbwd_module_entry)dlsym(h, CONVBWD_MODULE_ENTRY);
    const convbwd_module *m = entry ? entry() : nullptr;
    auto refuse = [&](const std::string &why) {
        dlclose(h);
        return fail(CONVBWD_BAD_PARAM, "kernel module " + path + ": " + why);
    };
    if (!m) return refuse(std::string("no ") + CONVBWD_MODULE_ENTRY + " (not a convbwd kernel module)");
    if (m->abi != CONVBWD_MODULE_ABI)
        return refuse("abi " + std::to_string(m->abi) + ", this library reads abi " + std::to_string(CONVBWD_MODULE_ABI));
    if (m->halide_major != HALIDE_VERSION_MAJOR)
        return refuse("built with Halide " + std::to_string(m->halide_major) + ", this library's runtime is Halide " +
                      std::to_string(HALIDE_VERSION_MAJOR));
    if (m->count < 0 || (m->count > 0 && !m->kernels)) return refuse("count = " + std::to_string(m->count) + " with no kernels");
    // Every record checked before any is registered: a bad module adds nothing.
    std::vector<ManifestRecord> records;
    for (int i = 0; i < m->count; i++) {
        const convbwd_module_kernel &mk = m->kernels[i];
        const std::string at = "kernel " + std::to_string(i);
        if (!mk.name || !mk.record || !mk.function) return refuse(at + ": name, record and function must be set");
        std::vector<ManifestRecord> one;
        if (std::string e = parse_manifest(mk.record, path + ": " + at, &one); !e.empty()) return refuse(e);
        if (one.size() != 1) return refuse(at + ": record: '" + std::string(mk.record) + "' is not one manifest record");
        // An autoscheduler baseline may carry its class's group class (baseline_kernel_name()).
        bool named = one[0].name == mk.name;
        if (!named && one[0].family->autoscheduler)
            for (GroupClass gc : {GroupClass::Depthwise, GroupClass::Narrow})
                named = named || mk.name == baseline_kernel_name(one[0].name, gc);
        if (!named)
            return refuse(at + ": name: '" + mk.name + "' is not the name its record derives (" + one[0].name +
                          (one[0].family->autoscheduler ? ", or it followed by dw or narrow" : "") + ")");
        one[0].name = mk.name;
        if (one[0].role == Role::Default)
            return refuse(at + ": role: a module's kernels are candidates or baselines (a default comes from the manifest)");
        if (!device_compiled(one[0].cls.device))
            return refuse(at + ": device: this build of convbwd has no " + std::string(to_string(one[0].cls.device)) +
                          " runtime (CONVBWD_TARGETS)");
        records.push_back(std::move(one[0]));
    }
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    int n = 0;
    for (int i = 0; i < m->count; i++) {
        const ManifestRecord &rec = records[(size_t)i];
        bool known = false;  // the same name is the same compile-time point: keep the first
        for (const Entry &e : r.entries) known = known || rec.name == e.info.name;
        if (known) continue;
        const KnobKind compile = KnobKind::Compile, launch = KnobKind::Launch;
        KernelInfo k{nullptr, rec.cls.dir, rec.cls.dtype, rec.cls.layout, rec.cls.stride, rec.cls.filter, rec.cls.device,
                     nullptr, rec.role, nullptr, nullptr,
                     rec.cls.dir == Direction::BwdData ? KernelFn((BwdDataFn)m->kernels[i].function)
                                                       : KernelFn((BwdWeightFn)m->kernels[i].function)};
        add_entry(r, k, rec.knobs);
        Entry &e = r.entries.back();
        e.name = rec.name;
        e.family = rec.family->name;
        e.schedule = print_knobs(rec.knobs, &compile);
        e.launch = print_knobs(rec.knobs, &launch);
        e.module = path;
        e.info.name = e.name.c_str();
        e.info.family = e.family.c_str();
        e.info.schedule = e.schedule.c_str();
        e.info.launch = e.launch.c_str();
        e.info.module = e.module.c_str();
        n++;
    }
    publish(r);
    if (added) *added = n;
    return {};
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
    const WeightTaps taps = weight_partial_taps(s.knobs, p.S, p.R);
    const int64_t partial_bytes = (int64_t)p.K * Cg * taps.r * taps.s * (int64_t)sizeof(float);
    // Workspace at most 256 MiB, whatever the cap.
    const int64_t by_workspace = std::max<int64_t>(1, (int64_t{256} << 20) / std::max<int64_t>(partial_bytes, 1));
    int64_t want, need = 1;  // need: the accuracy floor (host)
    if (weight_sums_direct(s.knobs)) return 1;  // one split, no workspace (weight_splits: 0)
    if (k.device == Device::Host) {
        want = s.knobs.get("max_splits");  // every host backward-weight family has it
        // split_pixels (conv_bwd_weight_host; 0 or absent: max_splits alone).
        if (const int64_t px = s.knobs.get("split_pixels"); px > 0)
            want = std::min<int64_t>(want, std::max<int64_t>(1, rows * p.Q / px));
        // Accuracy, before speed: at most kWgradTermsPerSplit of the N*P*Q terms go into one f32
        // partial (its running sum must not outgrow its terms: a 1x1 layer summing 5.4e8 terms
        // into 16 partials lost 12%), whatever max_splits says; then the splits are summed in a
        // fixed order. The workspace cap below still holds (docs/KERNELS.md, "Accuracy").
        need = (rows * p.Q + kWgradTermsPerSplit - 1) / kWgradTermsPerSplit;
        want = std::max<int64_t>(want, need);
    } else if (calls_fragments(*s.knobs.family)) {
        // Enough waves per launch to fill a large GPU: split_blocks over the waves one split
        // has (every tap's blocks, each of warps_m x warps_n waves of tile_m x tile_n fragments).
        // The kernel runs at most as many splits as its k-blocks (mma_weight_kblocks): weight_splits.
        const BwdWeightMmaGpuParams g = params_of<BwdWeightMmaGpuParams>(s);
        const frag::Shape fs = frag::shape(g.frag);
        const int64_t bm = weight_block_rows(g), bn = fs.N * weight_block_frags_n(g);
        const int64_t tiles = ((p.K + bm - 1) / bm) * ((Cg + bn - 1) / bn) * p.R * p.S * g.warps_m * g.warps_n;
        want = std::min<int64_t>(g.max_splits, (g.split_blocks + tiles - 1) / tiles);
        return std::max<int64_t>(1, std::min(want, by_workspace));
    } else if (s.knobs.family->knobs == &BwdWeightStagedGpuParams::knobs) {
        // Enough blocks per launch (every tap's tiles in one) to fill a large GPU: split_blocks.
        const BwdWeightStagedGpuParams g = params_of<BwdWeightStagedGpuParams>(s);
        const int64_t bc = weight_block_channels(g), bk = weight_block_k(g);
        const int64_t tiles = ((Cg + bc - 1) / bc) * ((p.K + bk - 1) / bk) * taps.r * taps.s;
        want = std::min<int64_t>(g.max_splits, (g.split_blocks + tiles - 1) / tiles);
    } else {
        // Enough blocks per launch (one launch per filter tap) to fill a large GPU: split_blocks
        // (528 = 4 x 132 multiprocessors) from the tiles one split has.
        const BwdWeightGpuParams g = params_of<BwdWeightGpuParams>(s);
        want = std::min<int64_t>(g.max_splits,
                                 gpu_weight_splits_for_blocks(g, s.knobs.family->groups, Cg, p.K, p.R, p.S, g.split_blocks));
    }
    const int64_t most = std::min(by_workspace, rows);
    int64_t splits = std::max<int64_t>(1, std::min(want, most));
    // Splits of whole images (spaces.h): a divisor of N, the largest at most `splits`; where
    // that falls below the accuracy floor (N = 4 * 1831 has no divisor between 4 and 1831), the
    // smallest one at or above it that the workspace allows.
    if (weight_image_splits(*s.knobs.family)) {
        const int64_t cap = splits;
        while (p.N % splits != 0) splits--;
        if (splits < need) {
            int64_t best = 0;  // divisors in pairs (i, N / i): at most sqrt(N) steps
            for (int64_t i = 1; i * i <= p.N; i++) {
                if (p.N % i != 0) continue;
                for (int64_t d : {i, (int64_t)p.N / i})
                    if (d >= need && d > cap && d <= most && (best == 0 || d < best)) best = d;
            }
            if (best) splits = best;
        }
    }
    return splits;
}

bool flattens_pointwise_plane(const Selection &s, const ConvProblem &p) {
    return s.knobs.get("flat") && p.R == 1 && p.S == 1 && p.stride_h == 1 && p.stride_w == 1 &&
           p.pad_top == 0 && p.pad_bottom == 0 && p.pad_left == 0 && p.pad_right == 0;
}

int channel_vector(const KernelInfo &k) {
    if (k.device == Device::Host) return 1;
    const KnobValues &kv = kernel_knobs(k);  // compile-time knobs: no launch override matters
    if (calls_fragments(*kv.family))
        return k.dir == Direction::BwdData ? to_params<BwdDataMmaGpuParams>(kv).channel_vector()
                                           : to_params<BwdWeightMmaGpuParams>(kv).channel_vector();
    if (kv.family->knobs == &BwdDataStagedGpuParams::knobs) return to_params<BwdDataStagedGpuParams>(kv).channel_vector();
    if (kv.family->knobs == &BwdWeightStagedGpuParams::knobs) return to_params<BwdWeightStagedGpuParams>(kv).channel_vector();
    return k.dir == Direction::BwdData ? to_params<BwdDataGpuParams>(kv).channel_vector()
                                       : to_params<BwdWeightGpuParams>(kv).channel_vector();
}

int input_channel_vector(const KernelInfo &k) {
    const KnobValues &kv = kernel_knobs(k);
    if (!calls_fragments(*kv.family)) return 1;
    return k.dir == Direction::BwdData ? data_mma_input_vector(to_params<BwdDataMmaGpuParams>(kv), k.layout)
                                       : weight_mma_input_vector(to_params<BwdWeightMmaGpuParams>(kv), k.layout);
}

bool copies_ahead(const KernelInfo &k) {
    const KnobValues &kv = kernel_knobs(k);
    return calls_fragments(*kv.family) && k.dir == Direction::BwdData &&
           data_mma_copies_ahead(to_params<BwdDataMmaGpuParams>(kv));
}

StagedBlock staged_block(const KernelInfo &k) {
    const KnobValues &kv = kernel_knobs(k);
    if (kv.family->knobs == &BwdDataStagedGpuParams::knobs) {
        const BwdDataStagedGpuParams p = to_params<BwdDataStagedGpuParams>(kv);
        return {data_block_channels(p), p.block_k};
    }
    if (kv.family->knobs != &BwdWeightStagedGpuParams::knobs) return {};
    const BwdWeightStagedGpuParams p = to_params<BwdWeightStagedGpuParams>(kv);
    return {weight_block_channels(p), weight_block_k(p)};
}

GroupChannels group_channels(const KernelInfo &k) {
    const KnobValues &kv = kernel_knobs(k);
    return kv.family->group_channels ? kv.family->group_channels(kv) : GroupChannels{};
}

int64_t gpu_grid_rows(const Selection &s, const Query &q) {
    const KernelInfo &k = *s.kernel;
    const ConvProblem &p = q.problem;
    if (k.device == Device::Host) return 0;
    const int64_t N = p.N, H = p.H, pads = (int64_t)p.pad_top + p.pad_bottom;
    if (calls_fragments(*s.knobs.family)) {  // no staged copy; backward-weight: tiles, taps, splits
        if (k.dir == Direction::BwdWeight) return 0;
        return flattens_pointwise_plane(s, p) && q.planes_dense ? N : H * N;
    }
    // Staged backward-data: its copy into dx (out) fuses rows and images; its main kernel puts the
    // pixel tiles x images on the grid's first dim (no limit), the channel tiles on the second.
    if (s.knobs.family->knobs == &BwdDataStagedGpuParams::knobs) return H * N;
    if (k.dir == Direction::BwdData) {
        const BwdDataGpuParams g = params_of<BwdDataGpuParams>(s);
        // The output (and a stride phase array) fuses rows and images; a plane read as one row
        // (flat) has one row per image.
        const bool flat = flattens_pointwise_plane(s, p) && q.planes_dense;
        int64_t rows = flat ? N : H * N;
        // fuse_rows: a row's column tiles and the rows share a grid dim, the images another; at
        // most W * H tiles (the 1-column fallback) over the column threads.
        if (g.fuse_rows) {
            const int64_t threads = g.column_threads(p.layout);
            rows = std::max<int64_t>(N, ((int64_t)p.W * H + threads - 1) / threads);
        }
        if (g.stage == 1 || g.stage == 2) {
            // The channels-innermost copies: dy's rows with its border (at stride 1 the filter's
            // reach, dil * (R - 1), whatever the padding), and w's filter rows x k.
            const int64_t dy_rows = flat ? 1 : H + std::max<int64_t>(pads, (int64_t)p.dilation_h * (p.R - 1));
            rows = std::max({rows, dy_rows * N, (int64_t)p.R * p.K});
        }
        return rows;  // stage 3's copy puts its rows on the grid's first dim
    }
    // Staged backward-weight: tiles, taps and splits on the grid, no copy of its own.
    if (s.knobs.family->knobs == &BwdWeightStagedGpuParams::knobs) return 0;
    // Backward-weight: only the channels-innermost copies (x with its border, NCHW dy) fuse rows
    // and images; the kernels themselves put splits and filter taps on the grid.
    return params_of<BwdWeightGpuParams>(s).stage ? std::max(H + pads, (int64_t)p.P) * N : 0;
}

int column_vector(const KernelInfo &k) {
    if (k.device == Device::Host) {
        if (k.dir != Direction::BwdWeight) return 1;
        const KnobValues &kv = kernel_knobs(k);
        return kv.family->knobs == &BwdWeightDwHostParams::knobs ? to_params<BwdWeightDwHostParams>(kv).column_vector() : 1;
    }
    if (k.dir != Direction::BwdData) return 1;
    const KnobValues &kv = kernel_knobs(k);
    if (calls_fragments(*kv.family)) return to_params<BwdDataMmaGpuParams>(kv).column_vector();
    if (kv.family->knobs == &BwdDataStagedGpuParams::knobs) return to_params<BwdDataStagedGpuParams>(kv).column_vector();
    return to_params<BwdDataGpuParams>(kv).column_vector();
}

int64_t weight_splits(const Selection &s, const Query &q) {
    const ConvProblem &p = q.problem;
    if (weight_sums_direct(s.knobs)) return 0;  // the workspace output is empty: dw is written directly
    if (calls_fragments(*s.knobs.family)) {  // splits of the k-blocks (a flat plane is one row)
        const bool flat = flattens_pointwise_plane(s, p) && q.planes_dense;
        const int64_t rows = flat ? p.N : (int64_t)p.N * p.P, cols = flat ? (int64_t)p.P * p.Q : p.Q;
        const int fk = frag::shape(s.knobs.get("frag")).K;
        return wgrad_splits(mma_weight_kblocks<int64_t>(rows, cols, fk), weight_max_splits(s, p));
    }
    return wgrad_splits((int64_t)p.N * p.P, weight_max_splits(s, p));
}

int64_t workspace_bytes(const Selection &s, const ConvProblem &p) {
    if (s.kernel->dir != Direction::BwdWeight) return 0;
    // The fragment kernels' split count depends on the tensors' strides (flat): sized for the
    // most it can be (max_splits; weight_splits <= it).
    Query q{p, Direction::BwdWeight, s.kernel->device};
    const int64_t splits = calls_fragments(*s.knobs.family) ? weight_max_splits(s, p) : weight_splits(s, q);
    const WeightTaps taps = weight_partial_taps(s.knobs, p.S, p.R);  // Winograd: its transform points
    return (int64_t)p.K * (p.C / p.G) * taps.r * taps.s * splits * (int64_t)sizeof(float);
}

const KernelInfo *find_kernel(const std::string &name) {
    for (const KernelInfo *k : *kernel_list())
        if (name == k->name) return k;
    return nullptr;
}

}  // namespace convbwd
