// oneDNN (v2.x C++ API, Debian libdnnl-dev 2.6) as a peer: the problem's convolution backward
// primitive (convolution_backward_data / convolution_backward_weights, with a forward_training
// hint), on plain memory formats that match HostTensor's packed storage exactly, so the
// tensors are bound as memory handles without copies.
#include <chrono>
#include "common/onednn_peer.h"

#include <array>
#include <cstdint>
#include <string>

#include <oneapi/dnnl/dnnl.hpp>

namespace convbwd {

namespace {

using dnnl::memory;
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

// One CPU engine for the process, created on first use and never destroyed (the peer may be
// used from static destructors' time in the driver; oneDNN keeps its own thread pools).
struct SharedEngine {
    bool ok = false;
    std::string error;
    dnnl::engine engine;
};
const SharedEngine &shared_engine() {
    static SharedEngine *e = [] {
        auto *s = new SharedEngine;
        try {
            if (dnnl::engine::get_count(dnnl::engine::kind::cpu) == 0) {
                s->error = "oneDNN: no CPU engine";
            } else {
                s->engine = dnnl::engine(dnnl::engine::kind::cpu, 0);
                s->ok = true;
            }
        } catch (const dnnl::error &err) {
            s->error = std::string("oneDNN: engine creation failed: ") + err.what();
        }
        return s;
    }();
    return *e;
}

dt dnnl_type(DType t) { return t == DType::F32 ? dt::f32 : t == DType::F16 ? dt::f16 : dt::bf16; }

const char *status_name(dnnl_status_t s) {
    switch (s) {
    case dnnl_success: return "success";
    case dnnl_out_of_memory: return "out_of_memory";
    case dnnl_invalid_arguments: return "invalid_arguments";
    case dnnl_unimplemented: return "unimplemented";
    case dnnl_iterator_ends: return "iterator_ends";
    case dnnl_runtime_error: return "runtime_error";
    case dnnl_not_required: return "not_required";
    default: return "status?";
    }
}

std::string err_msg(const std::string &what, const dnnl::error &e) {
    return what + ": " + e.what() + " (dnnl_" + status_name(e.status) + ")";
}

}  // namespace

struct OnednnPeer::Impl {
    ConvProblem p;
    Direction dir = Direction::BwdData;
    bool ok = false;
    std::string why;

    memory::desc x_md, w_md, dy_md;  // x / dx, w / dw, dy
    dnnl::primitive prim;
    dnnl::stream stream;
    memory mem_a, mem_b, mem_out;  // the caller's tensors (handles rebound on each run)
    // oneDNN picks its own (blocked) formats, as benchdnn lets it; the caller's packed tensors are
    // reordered in and out around the primitive, outside primitive_ms, inside layout_ms.
    memory in_a, in_b, in_out;     // the primitive's tensors (== mem_* where formats agree)
    bool reorder_a = false, reorder_b = false, reorder_out = false;
    dnnl::primitive ra, rb, rout;  // the reorders (made once, where needed)
    int arg_a = 0, arg_b = 0, arg_out = 0;
    double primitive_ms = 0, layout_ms = 0;

    bool fail(const std::string &m) {
        why = m;
        ok = false;
        return false;
    }
    bool init();
    bool check(const HostTensor &t, const char *name, const std::array<int64_t, 4> &want, const memory::desc &md);
};

bool OnednnPeer::Impl::init() {
    const SharedEngine &se = shared_engine();
    if (!se.ok) return fail(se.error);
    const dnnl::engine &eng = se.engine;
    const ConvProblem &q = p;
    if (q.N < 1 || q.C < 1 || q.H < 1 || q.W < 1 || q.K < 1 || q.R < 1 || q.S < 1 || q.G < 1 || q.C % q.G != 0 ||
        q.K % q.G != 0 || q.stride_h < 1 || q.stride_w < 1 || q.dilation_h < 1 || q.dilation_w < 1 || q.pad_top < 0 ||
        q.pad_bottom < 0 || q.pad_left < 0 || q.pad_right < 0)
        return fail("oneDNN peer: invalid problem");
    if (q.P < 1 || q.Q < 1 ||
        q.P != conv_out_size(q.H, q.pad_top, q.pad_bottom, q.R, q.stride_h, q.dilation_h) ||
        q.Q != conv_out_size(q.W, q.pad_left, q.pad_right, q.S, q.stride_w, q.dilation_w))
        return fail("oneDNN peer: P, Q must be filled and consistent with the forward formula (with_derived_output)");

    const dt type = dnnl_type(q.dtype);
    const bool nhwc = q.layout == Layout::NHWC;
    const tag act = nhwc ? tag::nhwc : tag::nchw;
    x_md = memory::desc({q.N, q.C, q.H, q.W}, type, act);
    dy_md = memory::desc({q.N, q.K, q.P, q.Q}, type, act);
    // Filters K x C/G x R x S packed as KCYX (oihw) or KYXC (ohwi); with groups the same bytes
    // are (G, K/G, C/G, R, S) as goihw / gohwi (k = g * K/G + o).
    if (q.G == 1)
        w_md = memory::desc({q.K, q.C, q.R, q.S}, type, nhwc ? tag::ohwi : tag::oihw);
    else
        w_md = memory::desc({q.G, q.K / q.G, q.C / q.G, q.R, q.S}, type, nhwc ? tag::gohwi : tag::goihw);

    const memory::dims strides{q.stride_h, q.stride_w};
    const memory::dims dilates{q.dilation_h - 1, q.dilation_w - 1};  // oneDNN: 0 = dense
    const memory::dims pad_l{q.pad_top, q.pad_left}, pad_r{q.pad_bottom, q.pad_right};
    const std::string what = std::string("oneDNN ") + to_string(dir) + " " + to_string(q.dtype) + " " +
                             to_string(q.layout) + (q.G > 1 ? " groups=" + std::to_string(q.G) : std::string());

    dnnl::convolution_forward::primitive_desc fwd_pd;
    try {
        dnnl::convolution_forward::desc fwd(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                            x_md, w_md, dy_md, strides, dilates, pad_l, pad_r);
        fwd_pd = dnnl::convolution_forward::primitive_desc(fwd, eng);
    } catch (const dnnl::error &e) {
        return fail(err_msg(what + ": forward hint primitive_desc", e));
    }
    try {
        const memory::desc any_x(x_md.dims(), type, tag::any), any_dy(dy_md.dims(), type, tag::any),
            any_w(w_md.dims(), type, tag::any);
        memory::desc pa, pb, pout, ua, ub, uout;
        if (dir == Direction::BwdData) {
            dnnl::convolution_backward_data::desc d(dnnl::algorithm::convolution_direct, any_x, any_w, any_dy, strides,
                                                    dilates, pad_l, pad_r);
            dnnl::convolution_backward_data::primitive_desc pd(d, eng, fwd_pd);
            prim = dnnl::convolution_backward_data(pd);
            arg_a = DNNL_ARG_DIFF_DST, arg_b = DNNL_ARG_WEIGHTS, arg_out = DNNL_ARG_DIFF_SRC;
            pa = pd.diff_dst_desc(), pb = pd.weights_desc(), pout = pd.diff_src_desc();
            ua = dy_md, ub = w_md, uout = x_md;
        } else {
            dnnl::convolution_backward_weights::desc d(dnnl::algorithm::convolution_direct, any_x, any_w, any_dy,
                                                       strides, dilates, pad_l, pad_r);
            dnnl::convolution_backward_weights::primitive_desc pd(d, eng, fwd_pd);
            prim = dnnl::convolution_backward_weights(pd);
            arg_a = DNNL_ARG_SRC, arg_b = DNNL_ARG_DIFF_DST, arg_out = DNNL_ARG_DIFF_WEIGHTS;
            pa = pd.src_desc(), pb = pd.diff_dst_desc(), pout = pd.diff_weights_desc();
            ua = x_md, ub = dy_md, uout = w_md;
        }
        mem_a = memory(ua, eng, DNNL_MEMORY_NONE);
        mem_b = memory(ub, eng, DNNL_MEMORY_NONE);
        mem_out = memory(uout, eng, DNNL_MEMORY_NONE);
        reorder_a = pa != ua, reorder_b = pb != ub, reorder_out = pout != uout;
        in_a = reorder_a ? memory(pa, eng) : mem_a;
        in_b = reorder_b ? memory(pb, eng) : mem_b;
        in_out = reorder_out ? memory(pout, eng) : mem_out;
        if (reorder_a) ra = dnnl::reorder(mem_a, in_a);
        if (reorder_b) rb = dnnl::reorder(mem_b, in_b);
        if (reorder_out) rout = dnnl::reorder(in_out, mem_out);
        stream = dnnl::stream(eng);
    } catch (const dnnl::error &e) {
        return fail(err_msg(what + ": backward primitive", e));
    }
    ok = true;
    why.clear();
    return true;
}

bool OnednnPeer::Impl::check(const HostTensor &t, const char *name, const std::array<int64_t, 4> &want,
                             const memory::desc &md) {
    if (t.dims != want || t.dtype != p.dtype || t.layout != p.layout)
        why = std::string("oneDNN peer run: ") + name + " has the wrong dims, dtype or layout";
    else if (t.storage.size() < md.get_size())
        why = std::string("oneDNN peer run: ") + name + " storage is smaller than the memory descriptor";
    else
        return true;
    return false;  // a bad call does not break the peer (ok() stays true); why() says what was wrong
}

OnednnPeer::OnednnPeer(const ConvProblem &p, Direction dir) : impl_(new Impl) {
    impl_->p = p;
    impl_->dir = dir;
    impl_->init();
}

OnednnPeer::~OnednnPeer() = default;

bool OnednnPeer::ok() const { return impl_->ok; }

const std::string &OnednnPeer::why() const { return impl_->why; }

double OnednnPeer::primitive_ms() const { return impl_->primitive_ms; }

double OnednnPeer::layout_ms() const { return impl_->layout_ms; }

bool OnednnPeer::run(const HostTensor &a, const HostTensor &b, HostTensor &out) {
    Impl &m = *impl_;
    if (!m.ok) return false;
    const ConvProblem &p = m.p;
    const bool data = m.dir == Direction::BwdData;
    if (data ? !(m.check(a, "dy", dy_dims(p), m.dy_md) && m.check(b, "w", w_dims(p), m.w_md) &&
                 m.check(out, "dx", x_dims(p), m.x_md))
             : !(m.check(a, "x", x_dims(p), m.x_md) && m.check(b, "dy", dy_dims(p), m.dy_md) &&
                 m.check(out, "dw", w_dims(p), m.w_md)))
        return false;
    try {
        // oneDNN never writes its inputs; the const_cast is for the memory handle's signature.
        m.mem_a.set_data_handle(const_cast<uint8_t *>(a.storage.data()));
        m.mem_b.set_data_handle(const_cast<uint8_t *>(b.storage.data()));
        m.mem_out.set_data_handle(out.storage.data());
        using clock = std::chrono::steady_clock;
        auto ms = [](clock::time_point a, clock::time_point b) {
            return std::chrono::duration<double, std::milli>(b - a).count();
        };
        // Each piece waited for, so that the primitive's own time is its alone.
        const auto t_in = clock::now();
        if (m.reorder_a) m.ra.execute(m.stream, {{DNNL_ARG_FROM, m.mem_a}, {DNNL_ARG_TO, m.in_a}});
        if (m.reorder_b) m.rb.execute(m.stream, {{DNNL_ARG_FROM, m.mem_b}, {DNNL_ARG_TO, m.in_b}});
        m.stream.wait();
        const auto t0 = clock::now();
        m.prim.execute(m.stream, {{m.arg_a, m.in_a}, {m.arg_b, m.in_b}, {m.arg_out, m.in_out}});
        m.stream.wait();
        const auto t1 = clock::now();
        if (m.reorder_out) m.rout.execute(m.stream, {{DNNL_ARG_FROM, m.in_out}, {DNNL_ARG_TO, m.mem_out}});
        m.stream.wait();
        m.primitive_ms = ms(t0, t1);
        m.layout_ms = ms(t_in, clock::now());
    } catch (const dnnl::error &e) {
        m.why = err_msg("oneDNN execute", e);
        return false;
    }
    return true;
}

}  // namespace convbwd
