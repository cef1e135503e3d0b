// The one harness (common/harness.h): operands, the call, verification, timing and the peers.
#include "common/harness.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <functional>

#include "common/reference.h"
#ifdef CONVBWD_WITH_ONEDNN
#include "common/onednn_peer.h"
#endif
#ifdef CONVBWD_WITH_CUDA
#include "common/cudnn_peer.h"
#endif

namespace convbwd {

namespace {

// Whether the named kernel's f32 arithmetic is exact on small-integer data
// (convbwd_kernel_desc.exact_on_integers; Winograd F(4x4, 3x3) is not): the run is verified bit for
// bit only where it is.
bool kernel_exact_on_integers(const std::string &name) {
    convbwd_kernel_desc d;
    for (int i = 0, n = convbwd_kernel_count(); i < n; i++)
        if (convbwd_kernel_info(i, &d) == CONVBWD_SUCCESS && name == d.name) return d.exact_on_integers != 0;
    return true;
}

// Operands smaller than this (all three tensors of one call) rotate among kCacheSets copies
// while timing, so that repeated calls do not just measure a warm cache.
constexpr size_t kCacheBytes = 32u << 20;
constexpr int kCacheSets = 3;

double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// On the host, warm-up calls go on for at least kHostWarmupMs, then in windows of
// kHostWarmupWindowMs until kHostSettledWindows windows in a row have not been faster (by 3%) than
// the fastest window so far (kHostWarmupMaxMs at most). On a 2-core VM a process's first calls ran
// at one thread's speed for 20-90 ms (a per-call trace: a plateau of 0.20 ms calls, then 0.105 ms
// from one call to the next: the pool's second thread had shared the first one's core), and right
// after the other side's calls (the peer's, or the previous problem's) a sub-millisecond kernel
// shared the cores with oneDNN's OpenMP workers, which spin for milliseconds before they sleep: a
// fixed 20 ms warm-up left single-layer timings 2x apart from run to run.
constexpr double kHostWarmupMs = 20, kHostWarmupWindowMs = 25, kHostWarmupMaxMs = 1000;
constexpr int kHostSettledWindows = 4;

// warmup + iters calls of run(set) rotating among the sets; the median time. A call's time is
// the device's measurement on a GPU, the host clock on the host, or own() when that is a number
// (a peer that times itself). NaN with *error when a call failed.
double time_calls(const RunSpec &s, GpuDevice *dev, std::vector<Operands> &sets,
                  const std::function<bool(Operands &, std::string *)> &run, const std::function<double()> &own,
                  std::string *error, const std::function<double()> &second = {}, double *second_ms = nullptr) {
    const int n = (int)sets.size();
    int calls = 0;
    // Calls for at least `ms` (and s.warmup calls in all): the median call's time, NaN on failure.
    auto window = [&](double ms) {
        std::vector<double> w;
        for (const double end = now_ms() + ms; calls < s.warmup || now_ms() < end || w.size() < 3; calls++) {
            const double t0 = now_ms();
            if (!run(sets[calls % n], error)) return (double)NAN;
            w.push_back(now_ms() - t0);
        }
        return median(w);
    };
    if (dev) {
        for (; calls < s.warmup; calls++)
            if (!run(sets[calls % n], error) || !dev->sync(error)) return NAN;
    } else {
        double best = window(kHostWarmupMs);
        const double give_up = now_ms() + kHostWarmupMaxMs;
        for (int settled = 0; best == best && settled < kHostSettledWindows && now_ms() < give_up;) {
            const double m = window(kHostWarmupWindowMs);
            if (m != m) return NAN;
            if (m < 0.97 * best) best = m, settled = 0;
            else settled++;
        }
        if (best != best) return NAN;
    }
    std::vector<double> ts, ts2;
    for (int i = 0; i < s.iters; i++) {
        Operands &o = sets[i % n];
        double ms = 0;
        const double t0 = now_ms();
        bool ok = dev ? dev->time([&] { return run(o, error); }, &ms, error, dev->stream()) : run(o, error);
        if (!ok) return NAN;
        const double mine = own();
        ts.push_back(mine == mine ? mine : dev ? ms : now_ms() - t0);
        if (second) ts2.push_back(second());
    }
    if (second_ms)
        *second_ms = std::any_of(ts2.begin(), ts2.end(), [](double v) { return v != v; }) ? NAN : median(ts2);
    return median(ts);
}

// ---- peers --------------------------------------------------------------------------------

// convbwd's scatter-then-convolve baseline: a kernel of a scatter family (never dispatched) of
// the case's dtype, layout and target, with its own output and workspace.
class ScatterPeer final : public Peer {
public:
    static std::unique_ptr<Peer> make(const RunSpec &s, GpuDevice *dev, const HostTensor &out_like, std::string *why) {
        if (s.dir != Direction::BwdData) return *why = "scatter baseline: backward-data only", nullptr;
        auto peer = std::unique_ptr<ScatterPeer>(new ScatterPeer(s, dev, out_like));
        for (int i = 0; i < convbwd_kernel_count(); i++) {
            convbwd_kernel_desc d;
            if (convbwd_kernel_info(i, &d) == CONVBWD_SUCCESS && std::strstr(d.family, "_scatter_") &&
                d.dtype == to_c(s.p.dtype) && d.layout == to_c(s.p.layout) && d.target == to_c(s.device)) {
                peer->kernel_ = d.name;
                break;
            }
        }
        if (peer->kernel_.empty()) return *why = "scatter baseline: none built for this dtype, layout and target", nullptr;
        peer->exec_.kernel = peer->kernel_.c_str();
        peer->exec_.target = to_c(s.device);
        peer->exec_.stream = dev ? dev->stream() : nullptr;
        size_t ws = 0;
        if (convbwd_workspace_size(&peer->cp_, CONVBWD_BWD_DATA, to_c(s.p.dtype), to_c(s.p.layout), &peer->exec_, &ws) !=
            CONVBWD_SUCCESS)
            return *why = "scatter baseline " + peer->kernel_ + ": " + convbwd_last_error(), nullptr;
        std::string err;
        if (dev) {
            if (!(peer->dout_ = dev->alloc(out_like.storage.size(), &err)) || !(peer->dws_ = dev->alloc(ws, &err)))
                return *why = "scatter baseline: device memory: " + err, nullptr;
            peer->tout_.data = peer->dout_->handle();
            peer->exec_.workspace = peer->dws_->handle();
        } else {
            peer->host_ws_.resize(ws);
            peer->exec_.workspace = peer->host_ws_.data();
        }
        peer->exec_.workspace_bytes = ws;
        return peer;
    }
    bool run(Operands &o, std::string *error) override {
        if (convbwd_bwd_data(&cp_, &o.ta, &o.tb, &tout_, 1.0f, 0.0f, &exec_) == CONVBWD_SUCCESS) return true;
        return *error = convbwd_last_error(), false;
    }
    bool output(HostTensor *out, std::string *error) override {
        if (dout_ && !dout_->download(out_.storage.data(), out_.storage.size(), error)) return false;
        return *out = out_, true;
    }
    std::string detail() const override { return kernel_; }

private:
    ScatterPeer(const RunSpec &s, GpuDevice *dev, const HostTensor &out_like) : cp_(to_c(s.p)), out_(out_like) {
        (void)dev;
        out_.fill_nan();
        tout_ = out_.desc();
    }
    convbwd_problem cp_;
    convbwd_exec exec_{};
    std::string kernel_;
    HostTensor out_;
    convbwd_tensor tout_{};
    std::unique_ptr<DeviceBuffer> dout_, dws_;
    std::vector<uint8_t> host_ws_;
};

#ifdef CONVBWD_WITH_ONEDNN
// oneDNN on the host: the same host tensors; the primitive alone is timed, and from the caller's
// layout (its reorders in and out) beside it.
class OnednnHarnessPeer final : public Peer {
public:
    OnednnHarnessPeer(const RunSpec &s, const HostTensor &out_like) : peer_(s.p, s.dir), out_(out_like) { out_.fill_nan(); }
    bool ok(std::string *why) const {
        if (!peer_.ok()) *why = "onednn refused: " + peer_.why();
        return peer_.ok();
    }
    bool run(Operands &o, std::string *error) override {
        if (peer_.run(o.a, o.b, out_)) return true;
        return *error = "the primitive failed", false;
    }
    bool output(HostTensor *out, std::string *) override { return *out = out_, true; }
    double own_ms() const override { return peer_.primitive_ms(); }
    double layout_ms() const override { return peer_.layout_ms(); }

private:
    OnednnPeer peer_;
    HostTensor out_;
};
#endif

#ifdef CONVBWD_WITH_CUDA
// cuDNN on the CUDA device `cuda`, with its own output. Beside a kernel on the CUDA device it reads
// the same device buffers and the harness times it. Beside a kernel on another device of the same
// GPU (NVIDIA's OpenCL), `beside` is set: it keeps its own CUDA copies of each operand set (read
// back from the other device and uploaded once each) and times itself (CUDA events on its stream;
// the harness's clock is the other device's).
class CudnnHarnessPeer final : public Peer {
public:
    CudnnHarnessPeer(const RunSpec &s, GpuDevice *cuda, bool beside) : peer_(s.p, s.dir), cuda_(cuda), beside_(beside) {
        peer_.set_stream(cuda->stream());
    }
    bool init(const HostTensor &out_like, std::string *why) {
        if (!peer_.ok()) return *why = "cudnn refused: " + peer_.why(), false;
        out_ = out_like;
        out_.fill_nan();
        std::string err;
        if (!(dout_ = cuda_->alloc(out_.storage.size(), &err)) || !dout_->upload(out_.storage.data(), out_.storage.size(), &err))
            return *why = "cudnn: device memory: " + err, false;
        return true;
    }
    bool run(Operands &o, std::string *error) override {
        if (!beside_) {
            if (peer_.run(o.da->handle(), o.db->handle(), dout_->handle())) return true;
            return *error = peer_.why(), false;
        }
        Copies &c = copies_[&o];
        if (!c.a) {  // the set's operands live on the other device only: through the host, once
            auto copy = [&](const DeviceBuffer &from, std::unique_ptr<DeviceBuffer> *to) {
                std::vector<uint8_t> host(from.size());
                return from.download(host.data(), host.size(), error) && (*to = cuda_->alloc(host.size(), error)) &&
                       (*to)->upload(host.data(), host.size(), error);
            };
            if (!o.da || !o.db || !copy(*o.da, &c.a) || !copy(*o.db, &c.b)) return c.a.reset(), false;
        }
        bool ran = false;
        if (!cuda_->time([&] { return ran = peer_.run(c.a->handle(), c.b->handle(), dout_->handle()); }, &ms_, error,
                         cuda_->stream()))
            return ran ? false : (*error = peer_.why(), false);
        return true;
    }
    bool output(HostTensor *out, std::string *error) override {
        if (!dout_->download(out_.storage.data(), out_.storage.size(), error)) return false;
        return *out = out_, true;
    }
    double own_ms() const override { return beside_ ? ms_ : NAN; }
    std::string detail() const override {
        return peer_.algo_name() + (beside_ ? ", on CUDA beside the kernel's device" : "");
    }
    // cuDNN's FFT and Winograd algorithms round in the transformed domain, where the values are
    // larger than the result (its f32 Winograd 5x5 backward-weight: 3.5x the f32 accumulation
    // bound on the H100, docs/PERFORMANCE.md); the others sum products directly.
    double transform_scale(std::string *what) const override {
        const std::string a = peer_.algo_name();
        if (a.find("fft") == std::string::npos && a.find("winograd") == std::string::npos) return 1;
        *what = a.substr(0, a.find(' '));
        return kTransformErrorScale;
    }

private:
    struct Copies {
        std::unique_ptr<DeviceBuffer> a, b;
    };
    CudnnPeer peer_;
    GpuDevice *cuda_;
    const bool beside_;
    HostTensor out_;
    std::unique_ptr<DeviceBuffer> dout_;
    std::map<const Operands *, Copies> copies_;  // beside only
    double ms_ = NAN;
};
#endif

}  // namespace

std::unique_ptr<Peer> make_peer(const std::string &name, const RunSpec &s, GpuDevice *dev, const HostTensor &out_like,
                                std::string *why) {
    if (name == "scatter") return ScatterPeer::make(s, dev, out_like, why);
    if (name == "onednn") {
#ifdef CONVBWD_WITH_ONEDNN
        if (s.device != Device::Host) return *why = "onednn compares with the host target only", nullptr;
        auto peer = std::make_unique<OnednnHarnessPeer>(s, out_like);
        if (!peer->ok(why)) return nullptr;
        return peer;
#else
        return *why = "this build has no oneDNN (configure with -DCONVBWD_WITH_ONEDNN=ON)", nullptr;
#endif
    }
    if (name == "cudnn") {
#ifdef CONVBWD_WITH_CUDA
        // On the cuda target the kernel's device; beside an opencl kernel (the same GPU through
        // NVIDIA's OpenCL: the matrix-fragment kernels) the CUDA device next to it.
        if (s.device != Device::Cuda && s.device != Device::OpenCL)
            return *why = "cudnn compares with the cuda and opencl targets only", nullptr;
        std::string err;
        GpuDevice *cuda = s.device == Device::Cuda ? dev : gpu_device(Device::Cuda, &err);
        if (!cuda) return *why = "cudnn needs a CUDA device" + (err.empty() ? std::string() : ": " + err), nullptr;
        auto peer = std::make_unique<CudnnHarnessPeer>(s, cuda, s.device != Device::Cuda);
        if (!peer->init(out_like, why)) return nullptr;
        return peer;
#else
        return *why = "this build has no CUDA (CONVBWD_TARGETS without cuda)", nullptr;
#endif
    }
    return *why = "unknown peer '" + name + "' (onednn, cudnn, scatter)", nullptr;
}

RunResult run_case(const RunSpec &s, std::mt19937 &rng) {
    RunResult r;
    const ConvProblem &p = s.p;
    const bool bwd_data = s.dir == Direction::BwdData;
    auto fail = [&](convbwd_status st, const std::string &why) {
        r.status = st;
        r.error = why;
        return r;
    };

    // The device first: a GPU case without one fails before anything is allocated.
    GpuDevice *dev = nullptr;
    if (s.device != Device::Host) {
        std::string why;
        if (!(dev = gpu_device(s.device, &why)))
            return fail(CONVBWD_NOT_SUPPORTED, std::string("no usable ") + to_string(s.device) + " device: " + why);
    }

    // Selection and workspace, as a framework would ask (this validates the problem too).
    const convbwd_problem cp = to_c(p);
    convbwd_exec exec{};
    exec.target = to_c(s.device);
    exec.kernel = s.kernel.empty() ? nullptr : s.kernel.c_str();
    exec.stream = dev ? dev->stream() : nullptr;
    const char *kname = nullptr;
    if (convbwd_select_kernel(&cp, to_c(s.dir), to_c(p.dtype), to_c(p.layout), &exec, &kname) != CONVBWD_SUCCESS ||
        convbwd_workspace_size(&cp, to_c(s.dir), to_c(p.dtype), to_c(p.layout), &exec, &r.workspace_bytes) !=
            CONVBWD_SUCCESS)
        return fail(CONVBWD_NO_KERNEL, convbwd_last_error());
    r.kernel = kname ? kname : "";

    // Set 0: the inputs (supplied, or random small integers), the output poisoned (beta = 0) or
    // random (beta != 0, its old value enters the reference).
    const auto a_dims = bwd_data ? dy_dims(p) : x_dims(p), b_dims = bwd_data ? w_dims(p) : dy_dims(p);
    const auto out_dims = bwd_data ? x_dims(p) : w_dims(p);
    const bool supplied = s.a && s.b;
    r.a = supplied ? *s.a : HostTensor(a_dims, p.dtype, p.layout);
    r.b = supplied ? *s.b : HostTensor(b_dims, p.dtype, p.layout);
    std::vector<double> ref;
    CaseData *cache = supplied || s.beta != 0.0f || !s.verify ? nullptr : s.cache;
    if (cache && cache->filled) {
        r.a = cache->a, r.b = cache->b, ref = cache->ref;
    } else for (int attempt = 0; attempt < 8; attempt++) {
        if (!supplied) r.a.fill_random_ints(rng), r.b.fill_random_ints(rng);
        if (!s.verify) break;
        ref = bwd_data ? ref_bwd_data(p, r.a.to_logical(), r.b.to_logical()) : ref_bwd_weight(p, r.a.to_logical(), r.b.to_logical());
        if (supplied || std::any_of(ref.begin(), ref.end(), [](double v) { return v != 0; })) break;
    }
    if (cache && !cache->filled) cache->a = r.a, cache->b = r.b, cache->ref = ref, cache->filled = true;
    r.out = HostTensor(out_dims, p.dtype, p.layout);
    std::vector<float> prev;
    if (s.beta == 0.0f) {
        r.out.fill_nan();
    } else {
        r.out.fill_random_ints(rng);
        prev = r.out.to_logical();
    }

    // Buffer sets, and their device copies.
    std::vector<Operands> sets(1);
    const size_t set_bytes = r.a.storage.size() + r.b.storage.size() + r.out.storage.size();
    const int nsets = s.time && set_bytes < kCacheBytes ? kCacheSets : 1;
    sets.resize(nsets);
    // On the host each set is a copy of the tensors; on a GPU each set is device buffers
    // uploaded from r's tensors (the descriptors keep their dtype, layout and strides).
    std::string err;
    for (Operands &o : sets) {
        if (!dev) {
            o.a = r.a, o.b = r.b, o.out = r.out;
            o.ta = o.a.desc(), o.tb = o.b.desc(), o.tout = o.out.desc();
            continue;
        }
        auto copy = [&](const HostTensor &t, std::unique_ptr<DeviceBuffer> *d) {
            return (*d = dev->alloc(t.storage.size(), &err)) && (*d)->upload(t.storage.data(), t.storage.size(), &err);
        };
        if (!copy(r.a, &o.da) || !copy(r.b, &o.db) || !copy(r.out, &o.dout))
            return fail(CONVBWD_DEVICE_ERROR, "device memory: " + err);
        o.ta = r.a.desc(), o.tb = r.b.desc(), o.tout = r.out.desc();
        o.ta.data = o.da->handle(), o.tb.data = o.db->handle(), o.tout.data = o.dout->handle();
    }
    r.buffer_sets = nsets;
    std::vector<uint8_t> host_ws(dev ? 0 : r.workspace_bytes);
    std::unique_ptr<DeviceBuffer> dev_ws;
    if (dev && !(dev_ws = dev->alloc(r.workspace_bytes, &err))) return fail(CONVBWD_DEVICE_ERROR, "device memory: " + err);
    exec.workspace = dev_ws ? dev_ws->handle() : r.workspace_bytes ? host_ws.data() : nullptr;
    exec.workspace_bytes = r.workspace_bytes;

    convbwd_status last = CONVBWD_SUCCESS;
    auto call = [&](Operands &o, std::string *error) {
        convbwd_status st = last = bwd_data ? convbwd_bwd_data(&cp, &o.ta, &o.tb, &o.tout, s.alpha, s.beta, &exec)
                                     : convbwd_bwd_weight(&cp, &o.ta, &o.tb, &o.tout, s.alpha, s.beta, &exec);
        if (st != CONVBWD_SUCCESS) *error = convbwd_last_error();
        return st == CONVBWD_SUCCESS;
    };

    // The first call, on set 0: its output is the one verified (and returned).
    if (!call(sets[0], &err)) return fail(last, err);
    if (dev) {
        if (!dev->sync(&err) || !sets[0].dout->download(r.out.storage.data(), r.out.storage.size(), &err))
            return fail(CONVBWD_DEVICE_ERROR, "after the call: " + err);
    } else {
        r.out = sets[0].out;
    }

    const int64_t n_acc = accumulation_length(p, s.dir);
    // A kernel computing in a transformed domain (Winograd F(4x4, 3x3)) is held to the allowance cuDNN's
    // transform algorithms get, and never bit for bit.
    const bool kernel_exact = kernel_exact_on_integers(r.kernel);
    r.exact = !supplied && s.alpha == 1.0f && s.beta == 0.0f && kernel_exact;
    if (s.verify) {
        for (size_t i = 0; i < ref.size(); i++) ref[i] = s.alpha * ref[i] + (s.beta != 0.0f ? s.beta * prev[i] : 0.0);
        ErrorModel model;
        if (!kernel_exact) model.acc_scale = kTransformErrorScale, model.why = "a transform-domain kernel: f32 error x16";
        r.verify = verify_output(r.out, ref, n_acc, r.exact, model);
    }

    if (s.time) {
        r.time_ms = time_calls(s, dev, sets, call, [] { return NAN; }, &err);
        if (r.time_ms != r.time_ms) return fail(CONVBWD_DEVICE_ERROR, "timed run: " + err);
    }

    // The peer: same operand sets, its own poisoned output, verified the same way.
    if (!s.peer.empty()) {
        r.peer.name = s.peer;
        std::string why;
        std::unique_ptr<Peer> peer = s.alpha == 1.0f && s.beta == 0.0f
                                         ? make_peer(s.peer, s, dev, r.out, &why)
                                         : (why = "peers run alpha = 1, beta = 0 only", nullptr);
        HostTensor pout;
        if (!peer) {
            r.peer.note = why;
        } else if (!peer->run(sets[0], &err) || (dev && !dev->sync(&err)) || !peer->output(&pout, &err)) {
            r.peer.note = s.peer + " run failed: " + err;
            r.peer.verified = 0;
        } else {
            VerifyResult pv;
            std::string tol_note;
            // Never bit for bit: a peer may reorder its sums (FFT, Winograd, split-K), so it is held
            // to the rounding its algorithm may add, by dtype and reduction length (verify.h,
            // ErrorModel), against the reference and against convbwd's output alike.
            std::string what;
            const double scale = peer->transform_scale(&what);
            const ErrorModel model = peer_error_model(n_acc, scale, what);
            if (s.verify) {  // the note names that bound
                pv = verify_output(pout, ref, n_acc, false, model);
                char tol[96];
                std::snprintf(tol, sizeof tol, " within %.3g (max error %.3g; ", pv.tol, pv.max_err);
                tol_note = tol + model.why + ")";
                r.peer.note = pv.ok ? "verified" + tol_note
                                    : std::to_string(pv.mismatches) + " mismatches, first " + pv.first_bad + ";" +
                                          tol_note;
            } else {  // no reference: agreement with convbwd's output within the peer's rounding
                std::vector<double> mine(r.out.size());
                const std::vector<float> got = r.out.to_logical();
                for (size_t i = 0; i < mine.size(); i++) mine[i] = got[i];
                pv = verify_output(pout, mine, n_acc, false, model);
                r.peer.note = pv.ok ? "agrees with convbwd"
                                    : std::to_string(pv.mismatches) + " differ from convbwd, first " + pv.first_bad;
            }
            r.peer.verified = pv.ok;
            if (const std::string d = peer->detail(); !d.empty()) r.peer.note += " (" + d + ")";
            if (s.time) {
                Peer *pp = peer.get();
                r.peer.time_ms = time_calls(
                    s, dev, sets, [&](Operands &o, std::string *e) { return pp->run(o, e); },
                    [&] { return pp->own_ms(); }, &err, [&] { return pp->layout_ms(); }, &r.peer.layout_time_ms);
                if (r.peer.time_ms != r.peer.time_ms) r.peer.note += "; timed run failed: " + err;
            }
        }
    }
    return r;
}

}  // namespace convbwd
