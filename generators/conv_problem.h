// ConvProblem, the stride and filter classes and their classifiers.
// Plain C++ (no Halide): shared by the generators, the runtime, the tests and the tools.
//
// Conventions (CUTLASS Conv2dProblemSize naming):
//   x / dx   N x C x H x W        dy   N x K x P x Q        w / dw   K x (C/G) x R x S
//   pad_top/pad_bottom/pad_left/pad_right >= 0, stride >= 1, dilation >= 1 (1 = dense;
//   oneDNN writes dense as 0, we do not).
#pragma once

#include <cstdint>
#include <string>

namespace convbwd {

enum class Direction { BwdData, BwdWeight };
enum class DType { F32, F16, BF16 };
enum class Layout { NCHW, NHWC };  // activations NCHW with filters KCYX; NHWC with KYXC
enum class StrideClass { S1, S2, Any };
enum class FilterClass { K1, K3, K5, Any };  // K1: 1x1 with pad 0; K3, K5: 3x3, 5x5 with dilation 1
enum class Device { Host, OpenCL, Cuda, AmdGpu };  // where a kernel runs (its build target)
// What a kernel knows of the groups at compile time: Depthwise = one input and one output channel
// per group (C / G = K / G = 1: MobileNet's and EfficientNet's 3x3 and 5x5 layers).
// Depthwise: C / G = K / G = 1. Narrow: C / G under kNarrowChannels and not depthwise (first
// layers, small groups), where channel vectors would run mostly empty. (Vectors along the
// columns lose where rows are short: grouped 3x3 layers of 16 and 32 channels a group at 7-14
// columns ran 0.04-0.08 of oneDNN with them, 0.11-0.17 with channel vectors.)
enum class GroupClass { Any, Depthwise, Narrow };
constexpr int kNarrowChannels = 8;

struct ConvProblem {
    int N = 1, C = 1, H = 1, W = 1;  // x and dx
    int K = 1, P = 0, Q = 0;         // dy; P = Q = 0 means "derive from the forward formula"
    int R = 1, S = 1;                // filter height, width
    int G = 1;                       // groups: C and K are totals, both divisible by G
    int pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
    int stride_h = 1, stride_w = 1;
    int dilation_h = 1, dilation_w = 1;
    DType dtype = DType::F32;
    Layout layout = Layout::NCHW;
};

// Forward output size along one dim; may be <= 0 for an invalid problem.
inline int64_t conv_out_size(int64_t in, int64_t pad_begin, int64_t pad_end, int64_t filter,
                             int64_t stride, int64_t dilation) {
    int64_t span = in + pad_begin + pad_end - dilation * (filter - 1) - 1;
    if (span < 0 || stride <= 0) return 0;
    return span / stride + 1;
}

// Fills P and Q from the forward formula where they are 0.
inline ConvProblem with_derived_output(ConvProblem p) {
    if (p.P == 0) p.P = (int)conv_out_size(p.H, p.pad_top, p.pad_bottom, p.R, p.stride_h, p.dilation_h);
    if (p.Q == 0) p.Q = (int)conv_out_size(p.W, p.pad_left, p.pad_right, p.S, p.stride_w, p.dilation_w);
    return p;
}

// The only classifiers: dispatch, tests and autotuning all call these.
inline StrideClass stride_class(const ConvProblem &p) {
    if (p.stride_h == 1 && p.stride_w == 1) return StrideClass::S1;
    if (p.stride_h == 2 && p.stride_w == 2) return StrideClass::S2;
    return StrideClass::Any;
}

inline FilterClass filter_class(const ConvProblem &p) {
    if (p.R == 1 && p.S == 1 && p.pad_top == 0 && p.pad_bottom == 0 && p.pad_left == 0 && p.pad_right == 0)
        return FilterClass::K1;
    if (p.R == 3 && p.S == 3 && p.dilation_h == 1 && p.dilation_w == 1) return FilterClass::K3;
    if (p.R == 5 && p.S == 5 && p.dilation_h == 1 && p.dilation_w == 1) return FilterClass::K5;
    return FilterClass::Any;
}

// The filter size (R = S) a class fixes at compile time, 0 for Any.
inline int class_filter_size(FilterClass f) {
    return f == FilterClass::K1 ? 1 : f == FilterClass::K3 ? 3 : f == FilterClass::K5 ? 5 : 0;
}

inline GroupClass group_class(const ConvProblem &p) {
    if (p.G > 1 && p.C == p.G && p.K == p.G) return GroupClass::Depthwise;
    return p.C / p.G < kNarrowChannels ? GroupClass::Narrow : GroupClass::Any;
}

// Does a kernel built for class `k` accept a problem of class `p`? Any accepts all.
inline bool stride_class_accepts(StrideClass k, StrideClass p) { return k == StrideClass::Any || k == p; }
inline bool filter_class_accepts(FilterClass k, FilterClass p) { return k == FilterClass::Any || k == p; }

inline const char *to_string(Direction d) { return d == Direction::BwdData ? "bwd_data" : "bwd_weight"; }
inline const char *to_string(DType t) { return t == DType::F32 ? "f32" : t == DType::F16 ? "f16" : "bf16"; }
inline const char *to_string(Layout l) { return l == Layout::NCHW ? "nchw" : "nhwc"; }
inline const char *to_string(StrideClass s) { return s == StrideClass::S1 ? "s1" : s == StrideClass::S2 ? "s2" : "any"; }
inline const char *to_string(FilterClass f) {
    return f == FilterClass::K1 ? "k1" : f == FilterClass::K3 ? "k3" : f == FilterClass::K5 ? "k5" : "any";
}
// The filter class a name (to_string's) stands for; Any for "any" and for a name of none.
inline FilterClass filter_class_named(const std::string &name) {
    for (FilterClass f : {FilterClass::K1, FilterClass::K3, FilterClass::K5})
        if (name == to_string(f)) return f;
    return FilterClass::Any;
}
inline const char *to_string(GroupClass g) { return g == GroupClass::Depthwise ? "dw" : g == GroupClass::Narrow ? "narrow" : "any"; }
inline const char *to_string(Device d) {
    return d == Device::Host ? "host" : d == Device::OpenCL ? "opencl" : d == Device::Cuda ? "cuda" : "amdgpu";
}

inline int dtype_bytes(DType t) { return t == DType::F32 ? 4 : 2; }
// Whether device d's kernels carry f16 as 16-bit storage (uint16, converted with integer
// operations: OpenCL C compilers differ in half support) instead of Halide's float16. The
// generator (set_half_as_bits) and the runtime's buffer types both ask here.
inline bool f16_as_bits(Device d) { return d == Device::OpenCL; }

// Splits of the backward-weight reduction over the N*P rows: at most max_splits contiguous
// chunks of equal size (the last one shorter). One definition for the generators (T = Halide::Expr)
// and the runtime (T = int64_t).
template <class T>
T wgrad_rows_per_split(T rows_total, T max_splits) {
    return (rows_total + max_splits - 1) / max_splits;
}
template <class T>
T wgrad_splits(T rows_total, T max_splits) {
    T rows = wgrad_rows_per_split(rows_total, max_splits);
    return (rows_total + rows - 1) / rows;
}

// The matrix fragments' shapes (generators/fragments.h has their lane layouts): kind 0 = 32x32x8
// over a 64-lane wave (AMD MFMA), kind 1 = 16x8x16 over a 32-lane warp (NVIDIA mma.sync); elems
// f32 results per lane, a_per_lane / b_per_lane operand elements per lane.
namespace frag {
struct Shape {
    int kind, lanes, M, N, K, elems, a_per_lane, b_per_lane;
};
inline Shape shape(int kind) {
    return kind == 0 ? Shape{0, 64, 32, 32, 8, 16, 4, 4} : Shape{1, 32, 16, 8, 16, 4, 8, 4};
}
}  // namespace frag

// Staged fragment backward-weight (conv_bwd_weight_mma_gpu, stage > 0) reads x's and dy's
// channels in groups of this many: C, K, the tensors' bases and strides multiples of it. One
// definition for the algorithm, the schedule and the dispatcher (channel_vector()).
constexpr int kStagedChannelGroup = 8;

// Backward-weight on fragments: the reduction's units are k-blocks of fragment-K pixels along a
// row (rows of q columns, n_rows of them; a flat problem is one row of H*W per image). One
// definition for the generator (Halide Exprs) and the dispatcher's split count (integers).
template <class T>
T mma_weight_kblocks(const T &rows, const T &cols, int frag_k) {
    return rows * ((cols + frag_k - 1) / frag_k);
}

// A fragment kernel with knob unroll = u (> 1) runs u k-blocks a step: its k-block count is
// rounded up to a multiple of u, so the schedule's split of the k-block loop has no tail. One
// definition for both fragment families' algorithms.
template <class T>
T round_up_kblocks(const T &kblocks, int unroll) {
    return unroll > 1 ? (kblocks + unroll - 1) / unroll * unroll : kblocks;
}

// The backward-weight workspace ws(s, r, cg, k, split) is packed with its dims in this order,
// innermost first: a GPU thread's partial sums for one filter row (its taps x channels) are
// contiguous and its neighbours' along cg follow, so a warp's stores are too. The generators
// constrain ws's strides to it and the runtime lays the caller's workspace out by it.
inline constexpr int kWorkspaceDimOrder[5] = {0, 2, 3, 1, 4};

inline int64_t gcd64(int64_t a, int64_t b) {
    while (b) { int64_t t = a % b; a = b; b = t; }
    return a;
}

// Multiply-adds a backward pass really needs (taps that land inside dy / x), per direction:
// both directions do the same useful work, the forward's N*K*(C/G)*sum over valid taps.
inline int64_t valid_taps_1d(int64_t in, int64_t out, int64_t filter, int64_t pad, int64_t stride, int64_t dil) {
    int64_t n = 0;
    for (int64_t o = 0; o < out; o++)
        for (int64_t r = 0; r < filter; r++) {
            int64_t i = o * stride - pad + r * dil;
            n += (i >= 0 && i < in);
        }
    return n;
}
inline int64_t useful_macs(const ConvProblem &p) {
    return (int64_t)p.N * p.K * (p.C / p.G) *
           valid_taps_1d(p.H, p.P, p.R, p.pad_top, p.stride_h, p.dilation_h) *
           valid_taps_1d(p.W, p.Q, p.S, p.pad_left, p.stride_w, p.dilation_w);
}
// Multiply-adds the phase-decomposed backward-data executes (every tap that lands on a whole dy
// position of its phase, inside dy or on its zero border), before tile waste: taps are never
// visited for positions no tap reaches. Over useful_macs() this is the border overhead.
inline int64_t executed_macs_phases(const ConvProblem &p) {
    auto per_dim = [](int64_t in, int64_t filter, int64_t pad, int64_t stride, int64_t dil) {
        int64_t n = 0;
        for (int64_t x = 0; x < in; x++)
            for (int64_t r = 0; r < filter; r++) n += ((x + pad - r * dil) % stride + stride) % stride == 0;
        return n;
    };
    return (int64_t)p.N * p.K * (p.C / p.G) * per_dim(p.H, p.R, p.pad_top, p.stride_h, p.dilation_h) *
           per_dim(p.W, p.S, p.pad_left, p.stride_w, p.dilation_w);
}
// Multiply-adds of scatter-then-conv: every tap at every dx position, zeros included.
inline int64_t executed_macs_scatter(const ConvProblem &p) {
    return (int64_t)p.N * p.K * (p.C / p.G) * p.H * p.W * p.R * p.S;
}

// Nominal FLOPs as everyone reports them: 2*N*K*(C/G)*P*Q*R*S, as for forward.
inline double nominal_flops(const ConvProblem &p) {
    return 2.0 * p.N * p.K * (double)(p.C / p.G) * p.P * p.Q * p.R * p.S;
}

}  // namespace convbwd
