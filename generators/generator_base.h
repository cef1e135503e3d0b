// Halide Generators: wrap the algorithms (algorithms.cpp) and the schedules (schedules/). The
// host generators (generators_host.cpp, schedules/host.cpp) and the GPU ones
// (generators_gpu.cpp, schedules/gpu.cpp) are two executables, so a change to one device kind's
// schedules rebuilds only that kind's kernels.
// Every kernel has the same signature, (a, b, prev, stride_h, stride_w, dilation_h, dilation_w,
// pad_top, pad_left, groups, alpha, beta, out):
//   bwd_data:   a = dy (Q, P, K, N), b = w (S, R, C/G, K), prev/out = dx (W, H, C, N)
//   bwd_weight: a = x (W, H, C, N),  b = dy (Q, P, K, N),  prev/out = dw (S, R, C/G, K)
// Dims are listed innermost first in logical order; the layout fixes which one has stride 1.
#pragma once

#include <map>
#include <string>

#include "Halide.h"
#include "../schedules/schedules.h"
#include "../schedules/spaces.h"

namespace convbwd::gen {

using namespace Halide;

inline const std::map<std::string, DType> kDTypes = {{"f32", DType::F32}, {"f16", DType::F16}, {"bf16", DType::BF16}};
inline const std::map<std::string, Layout> kLayouts = {{"nchw", Layout::NCHW}, {"nhwc", Layout::NHWC}};
inline const std::map<std::string, StrideClass> kStrides = {
    {"s1", StrideClass::S1}, {"s2", StrideClass::S2}, {"any", StrideClass::Any}};
inline const std::map<std::string, FilterClass> kFilters = {
    {"k1", FilterClass::K1}, {"k3", FilterClass::K3}, {"k5", FilterClass::K5}, {"any", FilterClass::Any}};

// A family's compile-time knobs as GeneratorParams (launch-time knobs never reach the generator:
// the runtime reads them), from its table in schedules/spaces.h.
#define CONVBWD_GEN_PARAM_Compile(name, def) GeneratorParam<int> name{#name, def};
#define CONVBWD_GEN_PARAM_Launch(name, def)
#define CONVBWD_GEN_PARAM(name, def, kind, ...) CONVBWD_GEN_PARAM_##kind(name, def)
#define CONVBWD_GEN_COPY_Compile(name) p.name = name;
#define CONVBWD_GEN_COPY_Launch(name)
#define CONVBWD_GEN_COPY(name, def, kind, ...) CONVBWD_GEN_COPY_##kind(name)

// Each family's knobs as a member struct of its generator: GeneratorParams (Halide finds them
// anywhere inside the generator object) and the params struct the schedule reads.
#define CONVBWD_GEN_KNOBS(Knobs, Params, TABLE)           \
    struct Knobs {                                        \
        TABLE(CONVBWD_GEN_PARAM)                          \
        Params params() const {                           \
            Params p;                                     \
            TABLE(CONVBWD_GEN_COPY)                       \
            return p;                                     \
        }                                                 \
    };
CONVBWD_GEN_KNOBS(BwdDataHostKnobs, BwdDataHostParams, CONVBWD_BWD_DATA_HOST_KNOBS)
CONVBWD_GEN_KNOBS(BwdWeightHostKnobs, BwdWeightHostParams, CONVBWD_BWD_WEIGHT_HOST_KNOBS)
CONVBWD_GEN_KNOBS(BwdWeightDwHostKnobs, BwdWeightDwHostParams, CONVBWD_BWD_WEIGHT_DW_HOST_KNOBS)
CONVBWD_GEN_KNOBS(BwdWeightNarrowHostKnobs, BwdWeightNarrowHostParams, CONVBWD_BWD_WEIGHT_NARROW_HOST_KNOBS)
CONVBWD_GEN_KNOBS(BwdWeightGroupedHostKnobs, BwdWeightGroupedHostParams, CONVBWD_BWD_WEIGHT_GROUPED_HOST_KNOBS)
CONVBWD_GEN_KNOBS(BwdDataGpuKnobs, BwdDataGpuParams, CONVBWD_BWD_DATA_GPU_KNOBS)
CONVBWD_GEN_KNOBS(BwdDataStagedGpuKnobs, BwdDataStagedGpuParams, CONVBWD_BWD_DATA_STAGED_GPU_KNOBS)
CONVBWD_GEN_KNOBS(BwdDataMmaGpuKnobs, BwdDataMmaGpuParams, CONVBWD_BWD_DATA_MMA_GPU_KNOBS)
CONVBWD_GEN_KNOBS(BwdWeightGpuKnobs, BwdWeightGpuParams, CONVBWD_BWD_WEIGHT_GPU_KNOBS)
CONVBWD_GEN_KNOBS(BwdWeightMmaGpuKnobs, BwdWeightMmaGpuParams, CONVBWD_BWD_WEIGHT_MMA_GPU_KNOBS)
CONVBWD_GEN_KNOBS(BwdWeightStagedGpuKnobs, BwdWeightStagedGpuParams, CONVBWD_BWD_WEIGHT_STAGED_GPU_KNOBS)

// Inputs, outputs and class constraints shared by both directions.
template <class Gen>
class ConvGeneratorBase : public Generator<Gen> {
public:
    GeneratorParam<DType> dtype{"dtype", DType::F32, kDTypes};
    GeneratorParam<Layout> layout{"layout", Layout::NCHW, kLayouts};
    GeneratorParam<StrideClass> stride_class{"stride_class", StrideClass::Any, kStrides};
    GeneratorParam<FilterClass> filter_class{"filter_class", FilterClass::Any, kFilters};
    // Autoscheduler baselines (convbwd-tune --baseline): with autoscheduler=Adams2019 (host) or
    // Anderson2021 (GPU) the hand schedule is left out and the autoscheduler schedules the same
    // Funcs for the problem "n,c,h,w,k,r,s,stride,pad,dilation,groups" given here.
    GeneratorParam<std::string> estimates{"estimates", ""};

    using Generator<Gen>::add_requirement;
    using Generator<Gen>::get_target;

    // The device this compile is for: the kernel list's amdgpu kernels are OpenCL C compiled with
    // cl_half (cmake/ConvbwdKernels.cmake), its opencl ones without.
    Device device() const {
        const Target t = get_target();
        if (t.has_feature(Target::CUDA)) return Device::Cuda;
        if (t.has_feature(Target::OpenCL)) return t.has_feature(Target::CLHalf) ? Device::AmdGpu : Device::OpenCL;
        return Device::Host;
    }
    // The family's valid() for these params and this kernel's class: an invalid point is never
    // compiled (the manifest tool refuses it first; this catches direct generator runs).
    template <class Params>
    void require_valid(const Params &p, const char *family) {
        KnobValues kv = default_values(*find_family(family));
        size_t i = 0;
        Params::visit(p, [&](const int &v, const char *name) {
            const std::vector<int> &dom = kv.family->knobs()[i].domain;
            _halide_user_assert(std::find(dom.begin(), dom.end(), v) != dom.end())
                << family << ": knob " << name << " = " << v << " is outside its domain";
            kv.v[i++] = v;
        });
        const std::string why = valid(kv, KernelClass{Gen::kDir, dtype, layout, stride_class, filter_class, device()});
        _halide_user_assert(why.empty()) << family << ": " << why;
    }

    void configure() {
        set_half_as_bits(f16_as_bits(device()));  // f16 as 16-bit storage (algorithms.h)
        Type t = storage_type(dtype);
        a = this->template add_input<Buffer<>>("a", t, 4);
        b = this->template add_input<Buffer<>>("b", t, 4);
        prev = this->template add_input<Buffer<>>("prev", t, 4);
        for (const char *name : {"stride_h", "stride_w", "dilation_h", "dilation_w", "pad_top", "pad_left", "groups"})
            ints.push_back(this->template add_input<int>(name));
        alpha = this->template add_input<float>("alpha");
        beta = this->template add_input<float>("beta");
        // Backward-weight: the number of reduction splits, chosen per problem by the dispatcher.
        if (Gen::kHasWorkspace) splits = this->template add_input<int>("splits");
        // Backward-weight writes its split-reduction partials to the caller's workspace.
        if (Gen::kHasWorkspace) ws = this->template add_output<Buffer<>>("ws", Float(32), 5);
        out = this->template add_output<Buffer<>>("out", t, 4);
    }

    // The autoscheduler's estimates for the problem in `estimates` (inputs, scalars, outputs);
    // true when this compile is an autoscheduler baseline (then no hand schedule is applied).
    bool autoscheduled() {
        if (!this->using_autoscheduler()) return false;
        int v[11];
        const std::string e = estimates;
        _halide_user_assert(std::sscanf(e.c_str(), "%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d", &v[0], &v[1], &v[2], &v[3], &v[4],
                                        &v[5], &v[6], &v[7], &v[8], &v[9], &v[10]) == 11)
            << "an autoscheduled kernel needs estimates=n,c,h,w,k,r,s,stride,pad,dilation,groups (got '" << e << "')";
        const int N = v[0], C = v[1], H = v[2], W = v[3], K = v[4], R = v[5], S = v[6], st = v[7], pad = v[8], dil = v[9],
                  G = v[10];
        const int P = (H + 2 * pad - dil * (R - 1) - 1) / st + 1, Q = (W + 2 * pad - dil * (S - 1) - 1) / st + 1;
        const Region dy = {{0, Q}, {0, P}, {0, K}, {0, N}}, xr = {{0, W}, {0, H}, {0, C}, {0, N}},
                     wr = {{0, S}, {0, R}, {0, C / G}, {0, K}};
        const bool data = Gen::kDir == Direction::BwdData;
        a->set_estimates(data ? dy : xr);
        b->set_estimates(data ? wr : dy);
        prev->set_estimates(data ? xr : wr);
        out->set_estimates(data ? xr : wr);
        for (int i : {0, 1}) ints[i]->set_estimate(st);
        for (int i : {2, 3}) ints[i]->set_estimate(dil);
        for (int i : {4, 5}) ints[i]->set_estimate(pad);
        ints[6]->set_estimate(G);
        alpha->set_estimate(1.0f);
        beta->set_estimate(0.0f);
        if (Gen::kHasWorkspace) {
            // One split: the run-time count depends on the problem (often 1 on small ones), and
            // Adams2019 tiles an output's dims by their estimates with the tail shifted inwards,
            // so a tile of the workspace's splits larger than the count ran it at -1 (estimate 4).
            const int splits_est = 1;
            splits->set_estimate(splits_est);
            ws->set_estimates({{0, S}, {0, R}, {0, C / G}, {0, K}, {0, splits_est}});
        }
        return true;
    }

protected:
    GeneratorInput<Buffer<>> *a = nullptr, *b = nullptr, *prev = nullptr;
    std::vector<GeneratorInput<int> *> ints;
    GeneratorInput<float> *alpha = nullptr, *beta = nullptr;
    GeneratorInput<int> *splits = nullptr;
    GeneratorOutput<Buffer<>> *ws = nullptr, *out = nullptr;

    // Activation-like buffers are (x, y, c, n); filter-like (s, r, cg, k): dim 2 is channels.
    template <class B>
    void constrain_layout(B &buf) {
        for (int d = 0; d < 4; d++) buf.dim(d).set_min(0);
        if (layout == Layout::NHWC) {
            buf.dim(0).set_stride(Expr());  // drop Halide's default "dim 0 is dense"
            buf.dim(2).set_stride(1);
        }
    }
    template <class B>
    void constrain_filter(B &buf) {
        ClassConsts k = class_consts(stride_class, filter_class);
        if (k.filter > 0) {
            buf.dim(0).set_extent(k.filter);
            buf.dim(1).set_extent(k.filter);
        }
    }

    ConvArgs make_args(Expr N, Expr C, Expr H, Expr W, Expr K, Expr P, Expr Q, Expr R, Expr S) {
        ConvArgs r{N, C, H, W, K, P, Q, R, S, *ints[0], *ints[1], *ints[2], *ints[3], *ints[4], *ints[5], *ints[6],
                   *alpha, *beta, this->using_autoscheduler()};
        r.sum_from_partial = this->using_autoscheduler() && device() != Device::Host;
        // A kernel built for a class refuses problems outside it rather than compute them wrong.
        ClassConsts k = class_consts(stride_class, filter_class);
        if (k.stride > 0)
            add_requirement(r.stride_h == k.stride && r.stride_w == k.stride, "kernel built for stride ", k.stride);
        if (k.dilation > 0 && k.filter != 1)
            add_requirement(r.dilation_h == k.dilation && r.dilation_w == k.dilation, "kernel built for dilation 1");
        if (k.pad >= 0) add_requirement(r.pad_top == k.pad && r.pad_left == k.pad, "kernel built for pad 0");
        return r;
    }

    // Backward-data's buffers: dy (a), w (b), prev and dx (out) in the layout, w of the class's filter.
    void constrain_bwd_data_buffers() {
        for (auto *buf : {a, b, prev}) constrain_layout(*buf);
        constrain_layout(*out);
        constrain_filter(*b);
    }

    // The algorithm over this generator's buffers, with the layout and class constraints.
    // Backward-data: a = dy, b = w, out = dx.
    ConvArgs bwd_data_args() {
        ConvArgs r = make_args(out->dim(3).extent(), out->dim(2).extent(), out->dim(1).extent(), out->dim(0).extent(),
                               a->dim(2).extent(), a->dim(1).extent(), a->dim(0).extent(), b->dim(1).extent(),
                               b->dim(0).extent());
        r.w_channel_stride = b->dim(2).stride();
        return r;
    }
    // Depthwise generators (Gen::kGroups == Depthwise): one input and one output channel per
    // group, required on entry (the dispatcher checks first) and known to the algorithm.
    void require_groups(const ConvArgs &args) {
        if constexpr (Gen::kGroups == GroupClass::Depthwise)
            add_requirement(args.C == args.groups && args.K == args.groups,
                            "depthwise kernel: needs c = k = groups (one channel per group)");
    }
    BwdDataGraph build_bwd_data(const ConvArgs &args, int w_tile = 0) {
        require_groups(args);
        BwdDataGraph g =
            define_bwd_data(*a, *b, *prev, Func(*out), args, dtype, stride_class, filter_class, Gen::kGroups, w_tile);
        constrain_bwd_data_buffers();
        if constexpr (Gen::kGroups == GroupClass::Depthwise) b->dim(2).set_extent(1);  // w's C / G
        return g;
    }
    // Backward-weight: a = x, b = dy, out = dw, plus the workspace output ws.
    ConvArgs bwd_weight_args() {
        return make_args(a->dim(3).extent(), a->dim(2).extent(), a->dim(1).extent(), a->dim(0).extent(),
                         b->dim(2).extent(), b->dim(1).extent(), b->dim(0).extent(), out->dim(1).extent(),
                         out->dim(0).extent());
    }
    BwdWeightGraph build_bwd_weight(const ConvArgs &args, int k_tile = 0) {
        require_groups(args);
        BwdWeightGraph g = define_bwd_weight(*a, *b, *prev, Func(*ws), Func(*out), args, dtype, stride_class,
                                             filter_class, max(*splits, 1), Gen::kGroups, Gen::kImageSplits, k_tile);
        constrain_weight_buffers();
        return g;
    }
    // Backward-weight's layout, class and workspace constraints (every backward-weight family).
    // The workspace's tap dims (s, r) fixed to a class filter's size, where a family's partial
    // sums are per filter tap (not Winograd's transform points): its copy loops then have constant
    // extents and cg's stride is known, so they vectorise (host families).
    void constrain_workspace_taps_to_filter() {
        ClassConsts k = class_consts(stride_class, filter_class);
        if (k.filter > 0) {
            ws->dim(0).set_extent(k.filter);
            ws->dim(1).set_extent(k.filter);
        }
    }
    void constrain_weight_buffers() {
        for (auto *buf : {a, b, prev}) constrain_layout(*buf);
        constrain_layout(*out);
        constrain_filter(*out);
        for (int d = 0; d < 5; d++) ws->dim(d).set_min(0);
        if constexpr (Gen::kGroups == GroupClass::Depthwise) {  // dw's and the workspace's C / G
            out->dim(2).set_extent(1);
            prev->dim(2).set_extent(1);
            ws->dim(2).set_extent(1);
        }
        // The workspace packed in kWorkspaceDimOrder (with r before cg a warp's stores were 36
        // bytes apart; s stays innermost: with cg there, the taps' stores each need an address
        // of their own, AMD: 118 -> 150 VGPRs in the stem's kernel).
        Expr stride = 1;
        for (int d : kWorkspaceDimOrder) {
            ws->dim(d).set_stride(stride);
            stride *= ws->dim(d).extent();
        }
    }
};

// Scatter-then-conv backward-data: materialise the zero-inserted dy (what IREE's baseline and
// naive transposed convolutions do) and run the stride-1 algorithm over it. A comparison
// baseline only (kernel list BASELINE): it executes stride_h * stride_w times the useful work.
template <class Knobs, bool kGpu>
class ConvBwdDataScatter : public ConvGeneratorBase<ConvBwdDataScatter<Knobs, kGpu>> {
public:
    static constexpr bool kHasWorkspace = false;
    static constexpr Direction kDir = Direction::BwdData;
    static constexpr GroupClass kGroups = GroupClass::Any;
    using Base = ConvGeneratorBase<ConvBwdDataScatter<Knobs, kGpu>>;
    Knobs knobs;  // the backward-data family's knobs: the stride-1 schedule runs on the scattered dy
    void generate() {
        auto &a = this->a;  // one declaration each: clang refuses one auto deducing two types
        auto &b = this->b;
        auto &prev = this->prev;
        auto &out = this->out;
        Func dy = *a, w = *b, pv = *prev;
        ConvArgs args = this->bwd_data_args();
        // dyz: dy with stride-1 zeros between its elements, (P-1)*stride_h + 1 rows.
        Var q("q"), p("p"), k("k"), n("n");
        Func dyz("dyz");
        Expr on_grid = q % args.stride_w == 0 && p % args.stride_h == 0;
        dyz(q, p, k, n) = select(on_grid, dy(q / args.stride_w, p / args.stride_h, k, n),
                                 cast(storage_type(this->dtype), 0));
        ConvArgs z = args;
        z.P = (args.P - 1) * args.stride_h + 1;
        z.Q = (args.Q - 1) * args.stride_w + 1;
        BwdDataGraph g = define_bwd_data(dyz, w, pv, Func(*out), z, this->dtype, StrideClass::S1, this->filter_class);
        for (auto *buf : {a, b, prev}) this->constrain_layout(*buf);
        this->constrain_layout(*out);
        dyz.compute_root();  // the materialised scatter (a memset + a strided copy)
        const auto prm = knobs.params();
        this->require_valid(prm, kGpu ? "conv_bwd_data_scatter_gpu" : "conv_bwd_data_scatter_host");
        if constexpr (kGpu) {
            schedule_bwd_data_gpu(g, prm, z, this->layout, StrideClass::S1, this->filter_class);
            Var qo, qi, ko, ki;
            dyz.gpu_tile(k, q, ko, qo, ki, qi, 64, 4, TailStrategy::GuardWithIf);
        } else {
            schedule_bwd_data_host(g, prm, z, this->layout, StrideClass::S1, this->filter_class);
            dyz.parallel(n);
        }
    }
};

}  // namespace convbwd::gen
