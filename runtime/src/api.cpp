// The C API: validate, dispatch, wrap the caller's memory in halide_buffer_t, run the kernel.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "device_glue.h"
#include "internal.h"

namespace convbwd {

namespace {

thread_local std::string t_last_error;
// Set when t_last_error itself could not be allocated: a fixed message instead.
thread_local const char *t_fixed_error = nullptr;


extern "C" void convbwd_halide_error(void *uc, const char *msg) noexcept {
    // Called from Halide's runtime (C): nothing may throw through it. A message that cannot be
    // kept is cut to what fits; the status says the kernel failed either way.
    if (!uc) return;
    try {
        static_cast<CallContext *>(uc)->error += msg;
    } catch (...) {
    }
}

struct RuntimeSetup {
    RuntimeSetup() {
        halide_set_error_handler(&convbwd_halide_error);
        // Keep device allocations Halide makes inside a pipeline for the next call.
        halide_reuse_device_allocations(nullptr, true);
        install_host_isa_hook();  // CONVBWD_MAX_CPU_ISA (host_isa.cpp)
    }
} g_runtime_setup;

struct TensorArg {
    const char *name;  // "dy", "w", ... (for messages)
    const convbwd_tensor *t;
    bool filter;       // (K, C/G, R, S) instead of (N, C, H, W)
    int64_t extents[4];  // logical order: N, C, H, W (or K, C/G, R, S)
};

// halide_buffer_t over the caller's memory; dims innermost-first in logical order (W, H, C, N).
struct HalideView {
    halide_buffer_t buf{};
    halide_dimension_t dim[4]{};
};

// The element type kernel k's buffers have for dtype t: f16 is 16-bit storage (uint16) where
// f16_as_bits (generators/conv_problem.h), Halide's float16 elsewhere.
halide_type_t halide_type_of(DType t, const KernelInfo &k) {
    switch (t) {
    case DType::F32: return halide_type_t(halide_type_float, 32);
    case DType::F16:
        return f16_as_bits(k.device) ? halide_type_t(halide_type_uint, 16) : halide_type_t(halide_type_float, 16);
    case DType::BF16: return halide_type_t(halide_type_uint, 16);  // 16-bit storage (generators/algorithms.h)
    }
    return halide_type_t(halide_type_float, 32);
}

// Packed strides in logical order for a layout: NCHW/KCYX or NHWC/KYXC.
void packed_strides(Layout l, const int64_t e[4], int64_t s[4]) {
    if (l == Layout::NCHW) {
        s[3] = 1, s[2] = e[3], s[1] = e[2] * e[3], s[0] = e[1] * e[2] * e[3];
    } else {
        s[1] = 1, s[3] = e[1], s[2] = e[3] * e[1], s[0] = e[2] * e[3] * e[1];
    }
}

// The tensors' pointers, dtypes and layouts (which fill p's), then the problem's sizes for that
// dtype (validate_sizes), then each tensor's strides.
Status check_tensors(TensorArg *args, int count, Direction dir, ConvProblem *p) {
    for (int i = 0; i < count; i++) {
        TensorArg &a = args[i];
        std::string n = a.name;
        if (!a.t) return fail(CONVBWD_NULL_POINTER, n + " is NULL");
        if (!a.t->data) return fail(CONVBWD_NULL_POINTER, n + ".data is NULL");
        const int dt = raw_enum(a.t->dtype), lay = raw_enum(a.t->layout);
        if (dt != CONVBWD_F32 && dt != CONVBWD_F16 && dt != CONVBWD_BF16)
            return fail(CONVBWD_NOT_SUPPORTED, n + ".dtype = " + std::to_string(dt) + " is not a convbwd_dtype");
        if (lay != CONVBWD_NCHW && lay != CONVBWD_NHWC)
            return fail(CONVBWD_NOT_SUPPORTED, n + ".layout = " + std::to_string(lay) + " is not a convbwd_layout");
        DType t = (DType)dt;
        Layout l = lay == CONVBWD_NCHW ? Layout::NCHW : Layout::NHWC;
        if (i == 0) {
            p->dtype = t;
            p->layout = l;
        } else if (t != p->dtype) {
            return fail(CONVBWD_NOT_SUPPORTED, n + ".dtype = " + to_string(t) + " differs from " + args[0].name +
                                                   ".dtype = " + to_string(p->dtype) + " (mixed dtypes)");
        } else if (l != p->layout) {
            return fail(CONVBWD_NOT_SUPPORTED, n + ".layout = " + to_string(l) + " differs from " + args[0].name +
                                                   ".layout = " + to_string(p->layout));
        }
    }
    if (Status s = validate_sizes(*p, dir); !s.ok()) return s;
    const int64_t kMaxBytes = INT32_MAX;  // Halide buffers without large_buffers
    for (int i = 0; i < count; i++) {
        TensorArg &a = args[i];
        std::string n = a.name;
        const DType t = p->dtype;
        const Layout l = p->layout;
        const int64_t *s = a.t->strides;
        if (s[0] || s[1] || s[2] || s[3]) {
            int inner = l == Layout::NCHW ? 3 : 1;
            const char *dimnames = a.filter ? "KCRS" : "NCHW";
            auto stride_field = [&](int d) {
                return n + ".strides[" + std::to_string(d) + "] (" + dimnames[d] + ") = " + std::to_string(s[d]);
            };
            for (int d = 0; d < 4; d++)
                if (s[d] <= 0) return fail(CONVBWD_BAD_PARAM, stride_field(d) + " must be > 0");
            if (s[inner] != 1)
                return fail(CONVBWD_NOT_SUPPORTED, n + ".strides[" + std::to_string(inner) + "] (" + dimnames[inner] +
                                                       ") must be 1 for layout " + to_string(l));
            // The offset of the last element, every product and sum checked: a stride whose
            // span wraps around int64 would pass a plain sum.
            int64_t span = 0;
            for (int d = 0; d < 4; d++) {
                int64_t step = 0;
                if (__builtin_mul_overflow(a.extents[d] - 1, s[d], &step) || __builtin_add_overflow(span, step, &span))
                    return fail(CONVBWD_BAD_PARAM, stride_field(d) + ": the tensor's span (extent " +
                                                       std::to_string(a.extents[d]) + " along it) overflows int64");
            }
            for (int d = 0; d < 4; d++)
                if (s[d] > INT32_MAX)
                    return fail(CONVBWD_NOT_SUPPORTED, stride_field(d) + " does not fit int32 (the kernels' strides)");
            if (span >= kMaxBytes / dtype_bytes(t))
                return fail(CONVBWD_NOT_SUPPORTED, n + ".strides span " + std::to_string(span) + " elements of " +
                                                       std::to_string(dtype_bytes(t)) + " bytes: over 2^31-1 bytes");
            // The output (the last tensor) is written: no two of its elements may share an address.
            // Taking its dims of extent > 1 from the smallest stride up, each stride must step past
            // the last offset of the dims before it (nested, as every packed or padded layout is).
            if (i == count - 1) {
                int order[4] = {0, 1, 2, 3};
                std::sort(order, order + 4, [&](int x, int y) { return s[x] < s[y]; });
                int64_t inner_span = 0;  // last offset of the dims taken so far
                for (int d : order) {
                    if (a.extents[d] == 1) continue;
                    if (s[d] <= inner_span)
                        return fail(CONVBWD_BAD_PARAM, stride_field(d) + ": the output's elements overlap (its strides "
                                                       "must nest: each one past the span of the smaller ones, " +
                                                       std::to_string(inner_span) + ")");
                    inner_span += (a.extents[d] - 1) * s[d];
                }
            }
        }
    }
    return {};
}

// A tensor's strides in N, C, H, W order: the caller's, or packed for the layout where all are 0.
void strides_of(const TensorArg &a, Layout l, int64_t s[4]) {
    if (a.t->strides[0] || a.t->strides[1] || a.t->strides[2] || a.t->strides[3])
        std::memcpy(s, a.t->strides, 4 * sizeof(int64_t));
    else
        packed_strides(l, a.extents, s);
}

void make_view(const TensorArg &a, halide_type_t t, Layout l, HalideView *v) {
    int64_t s[4];
    strides_of(a, l, s);
    // halide dim d (innermost first) = logical dim 3 - d
    for (int d = 0; d < 4; d++) {
        v->dim[d].min = 0;
        v->dim[d].extent = (int32_t)a.extents[3 - d];
        v->dim[d].stride = (int32_t)s[3 - d];
        v->dim[d].flags = 0;
    }
    v->buf.host = (uint8_t *)a.t->data;
    v->buf.type = t;
    v->buf.dimensions = 4;
    v->buf.dim = v->dim;
}

// Fills the query's alignment fields from the activation tensors (args 0 and 2 for backward-data,
// 0 and 1 for backward-weight): kernels that load columns as vectors check them. On OpenCL a
// tensor's data is a cl_mem handle, whose buffer the driver aligns (CL_DEVICE_MEM_BASE_ADDR_ALIGN):
// only its strides count there.
void describe_activations(const TensorArg *args, Layout l, Query *q) {
    auto pow2_of = [](int64_t v) { return (int)std::min<int64_t>(16, v == 0 ? 16 : (v & -v)); };
    bool dense = true;
    const int acts[2] = {0, q->dir == Direction::BwdData ? 2 : 1};
    for (int i : acts) {
        const TensorArg &a = args[i];
        int64_t s[4];
        strides_of(a, l, s);
        const int64_t eb = dtype_bytes((DType)a.t->dtype);
        const uintptr_t addr = (uintptr_t)a.t->data;
        if (q->device != Device::OpenCL)
            q->alignments.push_back({addr % eb ? 1 : pow2_of((int64_t)(addr / eb)), -1, a.name, 0});
        for (int d : {0, 1, 2, 3}) q->alignments.push_back({pow2_of(s[d]), d, a.name, s[d]});
        if (s[2] != a.extents[3] * s[3]) dense = false;
    }
    q->planes_dense = dense;
}

// exec.flags: only the CONVBWD_FLAG_* bits. CONVBWD_FLAG_DETERMINISTIC needs nothing more: every
// kernel is deterministic (no atomics; backward-weight sums its splits, whose number depends on
// the problem and the selection only, in a fixed order: registry.cpp, generators/algorithms.h).
Status check_flags(unsigned flags) {
    const unsigned known = CONVBWD_FLAG_DETERMINISTIC;
    if (flags & ~known) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "exec.flags = 0x%x has unknown bits 0x%x (known: CONVBWD_FLAG_DETERMINISTIC = 0x%x)",
                      flags, flags & ~known, known);
        return fail(CONVBWD_BAD_PARAM, buf);
    }
    return {};
}

// The kernel a query runs: the one exec.kernel names ("NAME [launch-time knob=value ...]"), if it
// can implement the query, else the dispatcher's choice.
Status resolve_kernel(const Query &q, const char *forced, std::shared_ptr<const Selection> *chosen) {
    if (forced) {
        auto sel = std::make_shared<Selection>();
        Selection *out = sel.get();
        *chosen = sel;
        const std::string spec = forced;
        const size_t sp = spec.find_first_of(" \t");
        const std::string name = spec.substr(0, sp), launch = sp == std::string::npos ? "" : spec.substr(sp + 1);
        const KernelInfo *k = find_kernel(name);
        if (!k) return fail(CONVBWD_NO_KERNEL, "exec.kernel = " + name + ": no such kernel");
        if (std::string e = with_launch_knobs(*k, launch, out); !e.empty())
            return fail(CONVBWD_BAD_PARAM, "exec.kernel = " + spec + ": " + e);
        out->source = "exec.kernel";
        std::string why = cannot_implement(*out, q);
        if (!why.empty())
            return fail(CONVBWD_NO_KERNEL, "exec.kernel = " + spec + " cannot implement the problem: " + why);
        return {};
    }
    std::string why;
    *chosen = select_kernel(q, &why);
    if (!(*chosen)->kernel)
        return fail(CONVBWD_NO_KERNEL, "no kernel for " + problem_key(q) + (why.empty() ? "" : "; " + why) +
                                           " (CONVBWD_VERBOSE=dispatch lists every rejection)");
    return {};
}

// The workspace of a host call without an exec, as oneDNN's library-managed scratchpad: one buffer
// a thread, grown to the largest need so far and kept. A fresh buffer per call was zero-filled
// and, past glibc's mmap threshold, faulted in page by page every call (~135 page faults a call on
// Inception's 7x1 backward-weight). Not zero-filled: a kernel writes every partial it reads (as
// with a caller's workspace). An allocation that fails leaves the old buffer in place.
float *host_scratch(size_t floats) {
    thread_local std::unique_ptr<float[]> buf;
    thread_local size_t have = 0;
    if (floats > have) {
        buf.reset(new float[floats]);
        have = floats;
    }
    return buf.get();
}

convbwd_status run(Direction dir, const convbwd_problem *problem, TensorArg args[3], float alpha, float beta,
                   const convbwd_exec *exec) {
    ConvProblem p;
    Status s = validate_problem(problem, &p);
    if (!s.ok()) return report(s);
    const int Cg = p.C / p.G;
    if (dir == Direction::BwdData) {  // a = dy, b = w, out = dx
        args[0].extents[0] = p.N, args[0].extents[1] = p.K, args[0].extents[2] = p.P, args[0].extents[3] = p.Q;
        args[1].extents[0] = p.K, args[1].extents[1] = Cg, args[1].extents[2] = p.R, args[1].extents[3] = p.S;
        args[2].extents[0] = p.N, args[2].extents[1] = p.C, args[2].extents[2] = p.H, args[2].extents[3] = p.W;
    } else {  // a = x, b = dy, out = dw
        args[0].extents[0] = p.N, args[0].extents[1] = p.C, args[0].extents[2] = p.H, args[0].extents[3] = p.W;
        args[1].extents[0] = p.N, args[1].extents[1] = p.K, args[1].extents[2] = p.P, args[1].extents[3] = p.Q;
        args[2].extents[0] = p.K, args[2].extents[1] = Cg, args[2].extents[2] = p.R, args[2].extents[3] = p.S;
    }
    s = check_tensors(args, 3, dir, &p);
    if (!s.ok()) return report(s);
    if (!std::isfinite(alpha)) return report(fail(CONVBWD_BAD_PARAM, "alpha is not finite"));
    if (!std::isfinite(beta)) return report(fail(CONVBWD_BAD_PARAM, "beta is not finite"));

    Query q{p, dir, Device::Host};
    convbwd_exec defaults{};
    const convbwd_exec &ex = exec ? *exec : defaults;
    s = device_of(raw_enum(ex.target), &q.device);
    if (!s.ok()) return report(s);
    s = check_flags(ex.flags);
    if (!s.ok()) return report(s);
    describe_activations(args, p.layout, &q);

    std::shared_ptr<const Selection> chosen;
    s = resolve_kernel(q, ex.kernel, &chosen);
    if (!s.ok()) return report(s);
    const Selection &sel = *chosen;
    const KernelInfo *k = sel.kernel;

    // Workspace: with an exec the caller provides it (NULL or short is an error); without one
    // (host convenience, as oneDNN's library-managed scratchpad) the call allocates it.
    const int64_t ws_bytes = workspace_bytes(sel, p);
    void *ws_ptr = nullptr;
    if (ws_bytes > 0) {
        if (exec) {
            if (!ex.workspace)
                return report(fail(CONVBWD_BAD_WORKSPACE, "exec.workspace is NULL but " + std::string(k->name) + " needs " +
                                                              std::to_string(ws_bytes) + " bytes (convbwd_workspace_size)"));
            if ((int64_t)ex.workspace_bytes < ws_bytes)
                return report(fail(CONVBWD_BAD_WORKSPACE, "exec.workspace_bytes = " + std::to_string(ex.workspace_bytes) +
                                                              " is less than the " + std::to_string(ws_bytes) + " bytes " +
                                                              k->name + " needs"));
            ws_ptr = ex.workspace;
        } else {  // exec == NULL: host target
            ws_ptr = host_scratch((size_t)ws_bytes / sizeof(float));
        }
    }

    HalideView a, b, out;
    const halide_type_t elem = halide_type_of(p.dtype, *k);
    make_view(args[0], elem, p.layout, &a);
    make_view(args[1], elem, p.layout, &b);
    make_view(args[2], elem, p.layout, &out);
    // Kernels built for it (flat) see a pointwise stride-1 problem with dense dy and dx planes as
    // one row of H*W columns: late layers' rows of 7 or 14 columns would leave most of a block's
    // column threads idle.
    if (flattens_pointwise_plane(sel, p) && q.planes_dense)  // dy and dx; x and dy
        for (HalideView *v : {&a, dir == Direction::BwdData ? &out : &b}) {
            v->dim[0].extent *= v->dim[1].extent;
            v->dim[1].extent = 1;
            // A one-row dim's stride is never used: the row's span, a multiple of the column
            // stride as a vec kernel's constraints want (dy's strides, multiples of its vector).
            v->dim[1].stride = v->dim[0].extent * v->dim[0].stride;
        }
    HalideView prev = out;  // out is read (as prev) only when beta != 0
    prev.buf.dim = prev.dim;
    CallContext ctx;
    ctx.stream = ex.stream;
    ctx.aligned_load_bytes = input_channel_vector(*k) * (int)dtype_bytes(p.dtype);
    ctx.copies_ahead = copies_ahead(*k);
    const bool on_device = q.device != Device::Host;
    // ws(s, r, cg, k, split), packed in kWorkspaceDimOrder (the generators' constraint)
    halide_dimension_t wd[5];
    halide_buffer_t ws{};
    if (dir == Direction::BwdWeight) {
        const WeightTaps taps = weight_partial_taps(sel.knobs, p.S, p.R);  // Winograd: its transform points
        const int64_t ext[5] = {taps.s, taps.r, p.C / p.G, p.K, weight_splits(sel, q)};
        int64_t stride = 1;
        for (int d : kWorkspaceDimOrder) {
            wd[d] = halide_dimension_t(0, (int32_t)ext[d], (int32_t)stride);
            stride *= ext[d];
        }
        // An empty workspace (a direct kernel's: no splits) still needs an address; a workspace with
        // splits always has the caller's or the scratchpad's (ws_bytes > 0 above).
        static float no_workspace;
        ws.host = (uint8_t *)(ext[4] == 0 ? &no_workspace : ws_ptr);
        ws.type = halide_type_t(halide_type_float, 32);
        ws.dimensions = 5;
        ws.dim = wd;
    }
    std::vector<halide_buffer_t *> wrapped;
    auto detach_all = [&] {
        for (halide_buffer_t *b : wrapped) detach_device(q.device, &ctx, b);
    };
    if (on_device) {
        std::pair<halide_buffer_t *, void *> bufs[] = {{&a.buf, args[0].t->data}, {&b.buf, args[1].t->data},
                                                       {&prev.buf, args[2].t->data}, {&out.buf, args[2].t->data},
                                                       {&ws, ws_ptr}};
        for (auto &bp : bufs) {
            if (bp.first == &ws && dir != Direction::BwdWeight) continue;
            Status w = wrap_device(q.device, &ctx, bp.first, bp.second);
            if (!w.ok()) {
                detach_all();
                return report(fail(w.code, w.message + ": " + ctx.error));
            }
            wrapped.push_back(bp.first);
        }
    }
    int rc;
    if (dir == Direction::BwdData) {
        rc = k->fn.data(&ctx, &a.buf, &b.buf, &prev.buf, p.stride_h, p.stride_w, p.dilation_h, p.dilation_w, p.pad_top,
                        p.pad_left, p.G, alpha, beta, &out.buf);
    } else {
        rc = k->fn.weight(&ctx, &a.buf, &b.buf, &prev.buf, p.stride_h, p.stride_w, p.dilation_h, p.dilation_w,
                          p.pad_top, p.pad_left, p.G, alpha, beta, (int)weight_max_splits(sel, p), &ws, &out.buf);
    }
    detach_all();
    if (rc != 0)
        return report(fail(CONVBWD_EXECUTION_FAILED, std::string(k->name) + " failed (Halide error " + std::to_string(rc) +
                                                         "): " + (ctx.error.empty() ? "no message" : ctx.error)));
    return report({});
}

}  // namespace

convbwd_status report(const Status &s) {
    t_fixed_error = nullptr;
    if (s.ok())
        t_last_error.clear();
    else
        t_last_error = s.message.empty() ? std::string(convbwd_status_string(s.code)) + " (no further detail)" : s.message;
    return s.code;
}

namespace {

// A status and a message that need no allocation (the one that failed may have been ours).
convbwd_status report_fixed(convbwd_status code, const char *msg) noexcept {
    try {
        t_last_error = msg;
        t_fixed_error = nullptr;
    } catch (...) {
        t_fixed_error = msg;
    }
    return code;
}

// Every C entry point runs inside guard(): a C++ exception (an allocation that failed, mostly)
// becomes a status and a message, never a throw across the C boundary, which would terminate
// the caller's process.
template <class F>
convbwd_status guard(F &&f) noexcept {
    try {
        return f();
    } catch (const std::bad_alloc &) {
        return report_fixed(CONVBWD_ALLOC_FAILED, "out of host memory inside convbwd (std::bad_alloc); nothing was written");
    } catch (const std::exception &e) {
        try {
            return report(fail(CONVBWD_INTERNAL_ERROR, std::string("internal error: ") + e.what()));
        } catch (...) {
            return report_fixed(CONVBWD_INTERNAL_ERROR, "internal error (its message could not be kept)");
        }
    } catch (...) {
        return report_fixed(CONVBWD_INTERNAL_ERROR, "internal error (a non-standard exception)");
    }
}

}  // namespace

}  // namespace convbwd

using namespace convbwd;

extern "C" {

convbwd_status convbwd_bwd_data(const convbwd_problem *problem, const convbwd_tensor *dy, const convbwd_tensor *w,
                                const convbwd_tensor *dx, float alpha, float beta, const convbwd_exec *exec) {
    return guard([&]() -> convbwd_status {
        TensorArg args[3] = {{"dy", dy, false, {}}, {"w", w, true, {}}, {"dx", dx, false, {}}};
        return run(Direction::BwdData, problem, args, alpha, beta, exec);
    });
}

convbwd_status convbwd_bwd_weight(const convbwd_problem *problem, const convbwd_tensor *x, const convbwd_tensor *dy,
                                  const convbwd_tensor *dw, float alpha, float beta, const convbwd_exec *exec) {
    return guard([&]() -> convbwd_status {
        TensorArg args[3] = {{"x", x, false, {}}, {"dy", dy, false, {}}, {"dw", dw, true, {}}};
        return run(Direction::BwdWeight, problem, args, alpha, beta, exec);
    });
}

// The enums by reference: a C caller may pass any int, and copying one that is not an enum value
// is already undefined in C++ (raw_enum reads it as an int).
static convbwd_status make_query(const convbwd_problem *problem, const convbwd_direction &direction, const convbwd_dtype &dtype,
                                 const convbwd_layout &layout, const convbwd_exec *exec, Query *q) {
    Status s = validate_problem(problem, &q->problem);
    if (!s.ok()) return report(s);
    const int dir_raw = raw_enum(direction), dt = raw_enum(dtype), lay = raw_enum(layout);
    if (dir_raw != CONVBWD_BWD_DATA && dir_raw != CONVBWD_BWD_WEIGHT)
        return report(fail(CONVBWD_BAD_PARAM, "direction = " + std::to_string(dir_raw) + " is not a convbwd_direction"));
    if (dt != CONVBWD_F32 && dt != CONVBWD_F16 && dt != CONVBWD_BF16)
        return report(fail(CONVBWD_NOT_SUPPORTED, "dtype = " + std::to_string(dt) + " is not a convbwd_dtype"));
    if (lay != CONVBWD_NCHW && lay != CONVBWD_NHWC)
        return report(fail(CONVBWD_NOT_SUPPORTED, "layout = " + std::to_string(lay) + " is not a convbwd_layout"));
    q->dir = direction == CONVBWD_BWD_DATA ? Direction::BwdData : Direction::BwdWeight;
    q->problem.dtype = (DType)dtype;
    q->problem.layout = layout == CONVBWD_NCHW ? Layout::NCHW : Layout::NHWC;
    s = validate_sizes(q->problem, q->dir);
    if (!s.ok()) return report(s);
    s = device_of(exec ? raw_enum(exec->target) : (int)CONVBWD_TARGET_HOST, &q->device);
    if (!s.ok()) return report(s);
    s = check_flags(exec ? exec->flags : 0);
    if (!s.ok()) return report(s);
    return CONVBWD_SUCCESS;
}

convbwd_status convbwd_select_kernel(const convbwd_problem *problem, convbwd_direction direction, convbwd_dtype dtype,
                                     convbwd_layout layout, const convbwd_exec *exec, const char **kernel_name) {
    return guard([&]() -> convbwd_status {
        if (!kernel_name) return report(fail(CONVBWD_NULL_POINTER, "kernel_name is NULL"));
        Query q;
        convbwd_status st = make_query(problem, direction, dtype, layout, exec, &q);
        if (st != CONVBWD_SUCCESS) return st;
        std::shared_ptr<const Selection> sel;
        Status s = resolve_kernel(q, exec ? exec->kernel : nullptr, &sel);
        if (!s.ok()) return report(s);
        *kernel_name = sel->kernel->name;
        return report({});
    });
}

convbwd_status convbwd_workspace_size(const convbwd_problem *problem, convbwd_direction direction, convbwd_dtype dtype,
                                      convbwd_layout layout, const convbwd_exec *exec, size_t *bytes) {
    return guard([&]() -> convbwd_status {
        if (!bytes) return report(fail(CONVBWD_NULL_POINTER, "bytes is NULL"));
        Query q;
        convbwd_status st = make_query(problem, direction, dtype, layout, exec, &q);
        if (st != CONVBWD_SUCCESS) return st;
        std::shared_ptr<const Selection> sel;
        Status s = resolve_kernel(q, exec ? exec->kernel : nullptr, &sel);
        if (!s.ok()) return report(s);
        *bytes = (size_t)workspace_bytes(*sel, q.problem);
        return report({});
    });
}

convbwd_status convbwd_problem_key(const convbwd_problem *problem, convbwd_direction direction, convbwd_dtype dtype,
                                   convbwd_layout layout, const convbwd_exec *exec, char *key, size_t key_bytes) {
    return guard([&]() -> convbwd_status {
        if (!key) return report(fail(CONVBWD_NULL_POINTER, "key is NULL"));
        Query q;
        convbwd_status st = make_query(problem, direction, dtype, layout, exec, &q);
        if (st != CONVBWD_SUCCESS) return st;
        const std::string k = problem_key(q);
        if (k.size() + 1 > key_bytes)
            return report(fail(CONVBWD_BAD_PARAM, "key_bytes = " + std::to_string(key_bytes) + " is less than the " +
                                                      std::to_string(k.size() + 1) + " bytes of the key"));
        std::memcpy(key, k.c_str(), k.size() + 1);
        return report({});
    });
}

convbwd_status convbwd_load_tuning_db(const char *path) {
    return guard([&]() -> convbwd_status {
        Status s = load_tuning_db(path);
        if (!s.ok()) return report(s);
        return report({});
    });
}

convbwd_status convbwd_load_kernel_module(const char *path) {
    return guard([&]() -> convbwd_status {
        if (!path) return report(fail(CONVBWD_NULL_POINTER, "path is NULL"));
        return report(load_kernel_module(path, nullptr));
    });
}

int convbwd_kernel_count(void) {
    int n = 0;
    guard([&]() -> convbwd_status {
        n = (int)kernel_list()->size();
        return CONVBWD_SUCCESS;  // leaves convbwd_last_error() as it is (convbwd.h)
    });
    return n;
}

convbwd_status convbwd_kernel_info(int index, convbwd_kernel_desc *desc) {
    return guard([&]() -> convbwd_status {
        if (!desc) return report(fail(CONVBWD_NULL_POINTER, "desc is NULL"));
        if (index < 0 || index >= convbwd_kernel_count())
            return report(fail(CONVBWD_BAD_PARAM, "index = " + std::to_string(index) + " is out of range [0, " +
                                                      std::to_string(convbwd_kernel_count()) + ")"));
        const KernelList list = kernel_list();  // entries live for the process: the pointers stay valid
        if ((size_t)index >= list->size()) return report(fail(CONVBWD_BAD_PARAM, "index = " + std::to_string(index) + " is out of range"));
        const KernelInfo &k = *(*list)[(size_t)index];
        desc->name = k.name;
        desc->direction = k.dir == Direction::BwdData ? CONVBWD_BWD_DATA : CONVBWD_BWD_WEIGHT;
        desc->dtype = (convbwd_dtype)k.dtype;
        desc->layout = k.layout == Layout::NCHW ? CONVBWD_NCHW : CONVBWD_NHWC;
        desc->target = k.device == Device::Host     ? CONVBWD_TARGET_HOST
                       : k.device == Device::OpenCL ? CONVBWD_TARGET_OPENCL
                       : k.device == Device::Cuda   ? CONVBWD_TARGET_CUDA
                                                    : CONVBWD_TARGET_AMDGPU;
        desc->stride_class = to_string(k.stride);
        desc->filter_class = to_string(k.filter);
        desc->schedule = k.all_knobs;  // every knob with its value, in table order
        desc->family = k.family;
        desc->role = to_string(k.role);
        desc->launch = k.launch;
        desc->module = k.module;
        desc->exact_on_integers = k.exact_on_integers ? 1 : 0;
        return report({});
    });
}

const char *convbwd_status_string(convbwd_status s) {
    switch (s) {
    case CONVBWD_SUCCESS: return "success";
    case CONVBWD_BAD_PARAM: return "bad parameter";
    case CONVBWD_NULL_POINTER: return "null pointer";
    case CONVBWD_NOT_SUPPORTED: return "not supported";
    case CONVBWD_BAD_WORKSPACE: return "bad workspace";
    case CONVBWD_NO_KERNEL: return "no kernel";
    case CONVBWD_EXECUTION_FAILED: return "execution failed";
    case CONVBWD_DEVICE_ERROR: return "device error";
    case CONVBWD_ALLOC_FAILED: return "allocation failed";
    case CONVBWD_INTERNAL_ERROR: return "internal error";
    }
    return "unknown status";
}

const char *convbwd_last_error(void) { return t_fixed_error ? t_fixed_error : t_last_error.c_str(); }

}  // extern "C"
