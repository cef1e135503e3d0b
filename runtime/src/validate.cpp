// Problem validation: every failure names the field and the value.
#include <string>

#include "internal.h"

namespace convbwd {

namespace {
std::string field(const char *name, long long v) { return std::string("problem.") + name + " = " + std::to_string(v); }
}  // namespace

Status validate_problem(const convbwd_problem *in, ConvProblem *out) {
    if (!in) return fail(CONVBWD_NULL_POINTER, "problem is NULL");
    const convbwd_problem &p = *in;
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

    // The dilated filter must fit in the padded input (else the forward output is empty).
    const int64_t eff_r = (int64_t)p.dilation_h * (p.r - 1) + 1, eff_s = (int64_t)p.dilation_w * (p.s - 1) + 1;
    const int64_t padded_h = (int64_t)p.h + p.pad_top + p.pad_bottom, padded_w = (int64_t)p.w + p.pad_left + p.pad_right;
    if (eff_r > padded_h)
        return fail(CONVBWD_BAD_PARAM, field("r", p.r) + ": dilated filter height " + std::to_string(eff_r) +
                                           " exceeds padded input height " + std::to_string(padded_h));
    if (eff_s > padded_w)
        return fail(CONVBWD_BAD_PARAM, field("s", p.s) + ": dilated filter width " + std::to_string(eff_s) +
                                           " exceeds padded input width " + std::to_string(padded_w));

    const int64_t P = conv_out_size(p.h, p.pad_top, p.pad_bottom, p.r, p.stride_h, p.dilation_h);
    const int64_t Q = conv_out_size(p.w, p.pad_left, p.pad_right, p.s, p.stride_w, p.dilation_w);
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
    c.stride_h = p.stride_h, c.stride_w = p.stride_w, c.dilation_h = p.dilation_h, c.dilation_w = p.dilation_w;
    *out = c;
    return {};
}

}  // namespace convbwd
