// Problem validation: every failure names the field and the value. Sizes are computed in 64 bits
// with every product and sum checked, before anything is allocated, dispatched or launched.
#include <algorithm>
#include <cstdint>
#include <string>

#include "internal.h"

namespace convbwd {

namespace {
std::string field(const char *name, long long v) { return std::string("problem.") + name + " = " + std::to_string(v); }
}  // namespace

Status validate_problem(const convbwd_problem *in, ConvProblem *out) {
    if (!in) return fail(CONVBWD_NULL_POINTER, "problem is NULL");
    const convbwd_problem &p = *in;
    // Ranges first: a stride or dilation of 0 is reported as such, never as a filter that does
    // not fit (the output size formula divides by the stride).
    struct {
        const char *name;
        int value, min;
    } ranges[] = {{"n", p.n, 1},           {"c", p.c, 1},           {"h", p.h, 1},
                  {"w", p.w, 1},           {"k", p.k, 1},           {"r", p.r, 1},
                  {"s", p.s, 1},           {"groups", p.groups, 1}, {"stride_h", p.stride_h, 1},
                  {"stride_w", p.stride_w, 1}, {"dilation_h", p.dilation_h, 1}, {"dilation_w", p.dilation_w, 1},
                  {"pad_top", p.pad_top, 0},   {"pad_bottom", p.pad_bottom, 0}, {"pad_left", p.pad_left, 0},
                  {"pad_right", p.pad_right, 0}, {"p", p.p, 0},       {"q", p.q, 0}};
    for (const auto &f : ranges)
        if (f.value < f.min)
            return fail(CONVBWD_BAD_PARAM, field(f.name, f.value) + " must be >= " + std::to_string(f.min));
    if (p.c % p.groups != 0)
        return fail(CONVBWD_BAD_PARAM, field("groups", p.groups) + " does not divide problem.c = " + std::to_string(p.c));
    if (p.k % p.groups != 0)
        return fail(CONVBWD_BAD_PARAM, field("groups", p.groups) + " does not divide problem.k = " + std::to_string(p.k));

    // Every field is a non-negative int here, so these sums and products fit 64 bits (< 2^63).
    // The kernels index the padded input and the dilated filter with int32 (Halide Exprs):
    // both must fit it.
    struct Dim {
        const char *in, *pad_begin, *pad_end, *filter, *stride, *dilation, *what, *out;
        int64_t in_v, pad_begin_v, pad_end_v, filter_v, stride_v, dilation_v;
    } dims[] = {{"h", "pad_top", "pad_bottom", "r", "stride_h", "dilation_h", "height", "p", p.h, p.pad_top,
                 p.pad_bottom, p.r, p.stride_h, p.dilation_h},
                {"w", "pad_left", "pad_right", "s", "stride_w", "dilation_w", "width", "q", p.w, p.pad_left,
                 p.pad_right, p.s, p.stride_w, p.dilation_w}};
    int64_t outs[2], strides[2];
    for (int i = 0; i < 2; i++) {
        const Dim &d = dims[i];
        const int64_t padded = d.in_v + d.pad_begin_v + d.pad_end_v;
        const int64_t eff = d.dilation_v * (d.filter_v - 1) + 1;
        if (padded > INT32_MAX)  // h and w are ints: a padding is the cause
            return fail(CONVBWD_BAD_PARAM, (d.pad_end_v ? field(d.pad_end, d.pad_end_v) : field(d.pad_begin, d.pad_begin_v)) +
                                               ": padded input " + d.what + " " +
                                               std::to_string(padded) + " (problem." + d.in + " + " + d.pad_begin +
                                               " + " + d.pad_end + ") overflows int32");
        if (eff > INT32_MAX)
            return fail(CONVBWD_BAD_PARAM, field(d.dilation, d.dilation_v) + ": dilated filter " + d.what + " " +
                                               std::to_string(eff) + " (problem." + d.dilation + " * (" + d.filter +
                                               " - 1) + 1) overflows int32");
        // The dilated filter must fit in the padded input (else the forward output is empty).
        if (eff > padded)
            return fail(CONVBWD_BAD_PARAM, field(d.filter, d.filter_v) + ": the dilated filter (" + d.what + " " +
                                               std::to_string(eff) + ") does not fit the padded input (" + d.what +
                                               " " + std::to_string(padded) + ")");
        // A stride past the padded input gives one output row (column), and with one output row
        // the stride takes no part in either direction (only p = 0 exists): the problem is the one
        // with stride = the padded extent, which the kernels run (their stride phases cost time in
        // proportion to the stride: a stride of 1e8 ran for minutes, found by fuzz_problem).
        // PyTorch and cuDNN take such strides (a 1x1 stride-2 layer on a 1x1 map), so convbwd
        // does too; the problem key is the canonical problem's.
        strides[i] = std::min<int64_t>(d.stride_v, padded);
        const int64_t o = conv_out_size(d.in_v, d.pad_begin_v, d.pad_end_v, d.filter_v, strides[i], d.dilation_v);
        if (o < 1 || o > INT32_MAX)  // cannot happen after the checks above; kept as the stated bound
            return fail(CONVBWD_BAD_PARAM, std::string("problem.") + d.out + ": output " + d.what + " " +
                                               std::to_string(o) + " is outside [1, 2^31-1]");
        outs[i] = o;
    }
    const int64_t P = outs[0], Q = outs[1];
    if (p.p != 0 && p.p != P)
        return fail(CONVBWD_BAD_PARAM, field("p", p.p) + " is inconsistent with h, pad_top, pad_bottom, r, stride_h, "
                                                       "dilation_h (expected " + std::to_string(P) + ")");
    if (p.q != 0 && p.q != Q)
        return fail(CONVBWD_BAD_PARAM, field("q", p.q) + " is inconsistent with w, pad_left, pad_right, s, stride_w, "
                                                       "dilation_w (expected " + std::to_string(Q) + ")");

    ConvProblem c;
    c.N = p.n, c.C = p.c, c.H = p.h, c.W = p.w, c.K = p.k, c.P = (int)P, c.Q = (int)Q, c.R = p.r, c.S = p.s;
    c.G = p.groups;
    c.pad_top = p.pad_top, c.pad_bottom = p.pad_bottom, c.pad_left = p.pad_left, c.pad_right = p.pad_right;
    c.stride_h = (int)strides[0], c.stride_w = (int)strides[1];
    // A filter of one tap along a dim has no dilation there: the problem is the one with
    // dilation 1 (its class too: a 1x1 filter with dilation 2 is a pointwise problem).
    c.dilation_h = p.r == 1 ? 1 : p.dilation_h, c.dilation_w = p.s == 1 ? 1 : p.dilation_w;
    *out = c;
    return {};
}

Status validate_sizes(const ConvProblem &p, Direction dir) {
    const int64_t eb = dtype_bytes(p.dtype);
    struct {
        const char *tensor, *fields;
        int64_t dims[4];
        int64_t elem_bytes;
    } tensors[] = {
        {dir == Direction::BwdData ? "dx" : "x", "n * c * h * w", {p.N, p.C, p.H, p.W}, eb},
        {"dy", "n * k * p * q", {p.N, p.K, p.P, p.Q}, eb},
        {dir == Direction::BwdData ? "w" : "dw", "k * (c / groups) * r * s", {p.K, p.C / p.G, p.R, p.S}, eb},
        // Backward-weight's f32 partial sums of one split (the workspace's unit; an int32-indexed
        // Halide buffer too).
        {"the f32 partial sums of dw", "k * (c / groups) * r * s", {p.K, p.C / p.G, p.R, p.S}, 4},
    };
    const int count = dir == Direction::BwdWeight ? 4 : 3;
    for (int i = 0; i < count; i++) {
        const auto &t = tensors[i];
        std::string dims = std::to_string(t.dims[0]);
        for (int d = 1; d < 4; d++) dims += " * " + std::to_string(t.dims[d]);
        int64_t elems = 1, bytes = 0;
        for (int64_t e : t.dims)
            if (__builtin_mul_overflow(elems, e, &elems))
                return fail(CONVBWD_BAD_PARAM, std::string(t.tensor) + ": problem." + t.fields + " = " + dims +
                                                   " elements overflows int64");
        // Halide buffers without large_buffers: the kernels address a tensor's bytes with int32.
        if (__builtin_mul_overflow(elems, t.elem_bytes, &bytes) || bytes > INT32_MAX)
            return fail(CONVBWD_NOT_SUPPORTED, std::string(t.tensor) + ": problem." + t.fields + " = " + dims + " = " +
                                                   std::to_string(elems) + " elements of " +
                                                   std::to_string(t.elem_bytes) +
                                                   " bytes: tensors over 2^31-1 bytes are not supported");
    }
    return {};
}

}  // namespace convbwd
