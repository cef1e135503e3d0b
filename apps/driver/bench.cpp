#include "apps/driver/bench.h"

#include <algorithm>
#include <functional>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "apps/driver/json.h"
#include "common/reference.h"
#include "common/shapes.h"
#include "common/verify.h"
#ifdef CONVBWD_WITH_ONEDNN
#include "common/onednn_peer.h"
#endif
#ifdef CONVBWD_WITH_CUDA
#include "common/cudnn_peer.h"
#endif

namespace convbwd::driver {

namespace {

// Inputs smaller than this (all three tensors of one call) rotate among kCacheSets copies while
// timing, so that repeated runs do not just measure a warm cache.
constexpr size_t kCacheBytes = 32u << 20;
constexpr int kCacheSets = 3;

double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// One set of buffers for a call: host tensors, and their copies on the target (GPU only).
struct BufferSet {
    HostTensor a, b, out;
    std::unique_ptr<TargetBuffer> da, db, dout;
    convbwd_tensor ta{}, tb{}, tout{};
};

std::string fmt(const char *f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

}  // namespace

bool run_one(const ConvProblem &p, Direction dir, const Options &o, TargetDevice *dev, const Inputs *loaded,
             int line_no, HostTensor *result) {
    const bool bwd_data = dir == Direction::BwdData;
    const std::string line = to_driver_line(p, bwd_data ? 2 : 4);
    const convbwd_direction cd = bwd_data ? CONVBWD_BWD_DATA : CONVBWD_BWD_WEIGHT;
    JsonObject row;
    row.str("problem", line).str("direction", to_string(dir)).str("dtype", to_string(p.dtype));
    row.str("layout", to_string(p.layout)).str("target", o.target);
    if (dev) row.str("device", dev->name());
    if (line_no > 0) row.integer("line", line_no);
    if (!o.shapes.empty()) row.str("shapes", o.shapes);

    // A failure before any number exists: one report, a row with "error".
    auto failed = [&](const std::string &why, const char *kernel) {
        std::fprintf(stderr, "convbwd-driver: %s %s: %s\n", to_string(dir), line.c_str(), why.c_str());
        if (o.json) {
            if (kernel) row.str("kernel", kernel);
            else row.null("kernel");
            row.null("time_ms").null("tflops").null("gbps").boolean("verified", false).str("error", why);
            if (!o.compare.empty()) row.str("peer", o.compare).null("peer_time_ms").null("peer_verified");
            std::printf("%s\n", row.text().c_str());
        } else {
            std::printf("%s %s\n  error: %s\n", to_string(dir), line.c_str(), why.c_str());
        }
        std::fflush(stdout);
        return false;
    };

    convbwd_problem cp = to_c(p);
    convbwd_exec exec{};
    exec.target = o.target_enum;
    // The key tuning databases use for this problem (runtime/src/dispatch.cpp).
    if (char key[256]; convbwd_problem_key(&cp, cd, to_c(p.dtype), to_c(p.layout), &exec, key, sizeof key) == CONVBWD_SUCCESS)
        row.str("problem_key", key);
    // Launch-time knobs forced with the kernel ("--kernel 'NAME knob=value ...'"): a tuning record's tail.
    if (const size_t sp = o.kernel.find(' '); sp != std::string::npos) row.str("launch", o.kernel.substr(sp + 1));
    exec.kernel = o.kernel.empty() ? nullptr : o.kernel.c_str();
    exec.stream = dev ? dev->stream() : nullptr;
    const char *kname = nullptr;
    size_t ws_bytes = 0;
    if (convbwd_select_kernel(&cp, cd, to_c(p.dtype), to_c(p.layout), &exec, &kname) != CONVBWD_SUCCESS ||
        convbwd_workspace_size(&cp, cd, to_c(p.dtype), to_c(p.layout), &exec, &ws_bytes) != CONVBWD_SUCCESS)
        return failed(convbwd_last_error(), nullptr);

    // Set 0: the inputs (loaded, or random small integers: exact in every dtype), output poisoned.
    const auto a_dims = bwd_data ? dy_dims(p) : x_dims(p), b_dims = bwd_data ? w_dims(p) : dy_dims(p);
    const auto out_dims = bwd_data ? x_dims(p) : w_dims(p);
    std::vector<BufferSet> sets(1);
    sets.reserve(kCacheSets);  // s0 stays valid
    BufferSet &s0 = sets[0];
    if (loaded) {
        s0.a = loaded->at(bwd_data ? "dy" : "x");
        s0.b = loaded->at(bwd_data ? "w" : "dy");
    } else {
        std::mt19937 rng(o.seed + (unsigned)line_no * 7919u + (bwd_data ? 0u : 1u));
        s0.a = HostTensor(a_dims, p.dtype, p.layout), s0.b = HostTensor(b_dims, p.dtype, p.layout);
        s0.a.fill_random_ints(rng);
        s0.b.fill_random_ints(rng);
    }
    s0.out = HostTensor(out_dims, p.dtype, p.layout);
    s0.out.fill_nan();
    const size_t set_bytes = s0.a.storage.size() + s0.b.storage.size() + s0.out.storage.size();
    const int nsets = o.time && set_bytes < kCacheBytes ? kCacheSets : 1;
    for (int i = 1; i < nsets; i++) sets.push_back(BufferSet{s0.a, s0.b, s0.out, {}, {}, {}, {}, {}, {}});

    // Tensors as the C API sees them; on a GPU target, copies on the device.
    std::string call_error;
    std::vector<uint8_t> host_ws(dev ? 0 : ws_bytes);
    std::unique_ptr<TargetBuffer> dev_ws;
    auto to_device = [&](const HostTensor &t, std::unique_ptr<TargetBuffer> *d) {
        *d = dev->alloc(t.storage.size(), &call_error);
        return *d && (*d)->upload(t.storage.data(), t.storage.size(), &call_error);
    };
    for (BufferSet &s : sets) {
        s.ta = s.a.desc(), s.tb = s.b.desc(), s.tout = s.out.desc();
        if (!dev) continue;
        if (!to_device(s.a, &s.da) || !to_device(s.b, &s.db) || !to_device(s.out, &s.dout))
            return failed("device memory: " + call_error, kname);
        s.ta.data = s.da->handle(), s.tb.data = s.db->handle(), s.tout.data = s.dout->handle();
    }
    if (dev && ws_bytes && !(dev_ws = dev->alloc(ws_bytes, &call_error)))
        return failed("device memory: " + call_error, kname);
    exec.workspace = dev_ws ? dev_ws->handle() : (ws_bytes ? host_ws.data() : nullptr);
    exec.workspace_bytes = ws_bytes;
    // One call; on a GPU target it has finished when this returns.
    auto call = [&](BufferSet &s) {
        convbwd_status st = bwd_data ? convbwd_bwd_data(&cp, &s.ta, &s.tb, &s.tout, 1.0f, 0.0f, &exec)
                                     : convbwd_bwd_weight(&cp, &s.ta, &s.tb, &s.tout, 1.0f, 0.0f, &exec);
        if (st != CONVBWD_SUCCESS) call_error = convbwd_last_error();
        else if (dev && !dev->sync(&call_error)) st = CONVBWD_DEVICE_ERROR;
        return st;
    };

    // First call, on set 0: its output is the one verified and saved.
    if (call(s0) != CONVBWD_SUCCESS) return failed(call_error, kname);
    if (dev && !s0.dout->download(s0.out.storage.data(), s0.out.storage.size(), &call_error))
        return failed("device memory: " + call_error, kname);
    *result = s0.out;

    // Verification against the naive reference: exact for random small integers (every
    // partial sum is exact, the output rounded once), a tolerance for loaded data.
    const int64_t n_acc = bwd_data ? (int64_t)p.K / p.G * p.R * p.S : (int64_t)p.N * p.P * p.Q;
    std::vector<double> ref;
    VerifyResult v;
    if (o.verify) {
        ref = bwd_data ? ref_bwd_data(p, s0.a.to_logical(), s0.b.to_logical())
                       : ref_bwd_weight(p, s0.a.to_logical(), s0.b.to_logical());
        v = verify_output(s0.out, ref, n_acc, loaded == nullptr);
    }

    // Timing: warm-up, then the median of -i runs, rotating among the buffer sets.
    double t_ms = NAN;
    if (o.time) {
        for (int i = 0; i < o.warmup; i++) call(sets[i % nsets]);
        std::vector<double> ts;
        for (int i = 0; i < o.iters; i++) {
            BufferSet &s = sets[i % nsets];
            double ms = 0, t0 = now_ms();
            bool ok = dev ? dev->time([&] { return call(s) == CONVBWD_SUCCESS; }, &ms, &call_error)
                          : call(s) == CONVBWD_SUCCESS;
            ts.push_back(dev ? ms : now_ms() - t0);
            if (!ok) return failed("timed run: " + call_error, kname);
        }
        t_ms = median(ts);
    }

    // The peer: same inputs and buffer sets on the host, its own poisoned outputs.
    double peer_ms = NAN;
    int peer_verified = -1;  // -1: not checked
    std::string peer_note;
    // Times any peer that runs like a convbwd call; used by cudnn and scatter.
    auto time_peer = [&](const std::function<bool(BufferSet &)> &run1) {
        for (int i = 0; i < o.warmup; i++) run1(sets[i % nsets]);
        std::vector<double> ts;
        for (int i = 0; i < o.iters; i++) {
            BufferSet &s = sets[i % nsets];
            double ms = 0, t0 = now_ms();
            if (dev) dev->time([&] { return run1(s); }, &ms, &call_error);
            else run1(s);
            ts.push_back(dev ? ms : now_ms() - t0);
        }
        return median(ts);
    };
    auto check_peer = [&](const HostTensor &pout) {
        if (o.verify) {
            VerifyResult pv = verify_output(pout, ref, n_acc, loaded == nullptr);
            peer_verified = pv.ok;
            peer_note = pv.ok ? "verified" : std::to_string(pv.mismatches) + " mismatches, first " + pv.first_bad;
        } else {  // no reference: agreement with convbwd within the tolerance of the dtype
            std::vector<double> mine(s0.out.size());
            std::vector<float> got = s0.out.to_logical();
            for (size_t i = 0; i < mine.size(); i++) mine[i] = got[i];
            VerifyResult pv = verify_output(pout, mine, n_acc, false);
            peer_verified = pv.ok;
            peer_note = pv.ok ? "agrees with convbwd" : std::to_string(pv.mismatches) + " differ from convbwd, first " + pv.first_bad;
        }
    };
    if (o.compare == "scatter") {
        // The scatter-then-conv baseline kernel (a kernel of a scatter family, never dispatched) of
        // this dtype, layout and target.
        std::string base = "(none built)";
        for (int i = 0; i < convbwd_kernel_count(); i++) {
            convbwd_kernel_desc d;
            convbwd_kernel_info(i, &d);
            if (std::strstr(d.family, "_scatter_") && d.dtype == to_c(p.dtype) && d.layout == to_c(p.layout) &&
                d.target == o.target_enum) {
                base = d.name;
                break;
            }
        }
        convbwd_exec bexec = exec;
        bexec.kernel = base.c_str();
        HostTensor pout = s0.out;
        pout.fill_nan();
        std::unique_ptr<TargetBuffer> pdev;
        convbwd_tensor pout_t = pout.desc();
        if (dev && (pdev = dev->alloc(pout.storage.size(), &call_error))) pout_t.data = pdev->handle();
        auto run1 = [&](BufferSet &s) {
            convbwd_tensor to = pout_t;
            bool ok = convbwd_bwd_data(&cp, &s.ta, &s.tb, &to, 1.0f, 0.0f, &bexec) == CONVBWD_SUCCESS;
            return ok && (!dev || dev->sync(&call_error));
        };
        if (!bwd_data) {
            peer_note = "scatter baseline: backward-data only";
        } else if ((dev && !pdev) || !run1(s0) ||
                   (dev && !pdev->download(pout.storage.data(), pout.storage.size(), &call_error))) {
            peer_note = std::string("scatter baseline ") + base + ": " + convbwd_last_error() + call_error;
            peer_verified = 0;
        } else {
            check_peer(pout);
            if (o.time) peer_ms = time_peer(run1);
        }
    } else if (o.compare == "cudnn") {
#ifdef CONVBWD_WITH_CUDA
        CudnnPeer peer(p, dir);
        std::unique_ptr<TargetBuffer> pdev;
        HostTensor pout = s0.out;
        pout.fill_nan();
        if (o.target_enum != CONVBWD_TARGET_CUDA || !dev) {
            peer_note = "cudnn compares with --target cuda only";
        } else if (!peer.ok()) {
            peer_note = "cudnn refused: " + peer.why();
        } else if (!(pdev = dev->alloc(pout.storage.size(), &call_error)) ||
                   !pdev->upload(pout.storage.data(), pout.storage.size(), &call_error)) {
            peer_note = "device memory: " + call_error;
        } else {
            auto run1 = [&](BufferSet &s) { return peer.run(s.da->handle(), s.db->handle(), pdev->handle()); };
            if (!run1(s0) || !dev->sync(&call_error) ||
                !pdev->download(pout.storage.data(), pout.storage.size(), &call_error)) {
                peer_note = "cudnn run failed: " + peer.why() + call_error;
                peer_verified = 0;
            } else {
                check_peer(pout);
                if (o.time) peer_ms = time_peer(run1);
                peer_note += " (" + peer.algo_name() + ")";
            }
        }
#else
        peer_note = "this convbwd-driver was built without CUDA (CONVBWD_TARGETS without cuda)";
#endif
    } else if (!o.compare.empty()) {
#ifdef CONVBWD_WITH_ONEDNN
        OnednnPeer peer(p, dir);
        if (!peer.ok()) {
            peer_note = "onednn refused: " + peer.why();
        } else {
            std::vector<HostTensor> pouts(nsets, s0.out);
            for (HostTensor &t : pouts) t.fill_nan();
            if (!peer.run(s0.a, s0.b, pouts[0])) {
                peer_note = "onednn run failed";
                peer_verified = 0;
            } else {
                if (o.verify) {
                    VerifyResult pv = verify_output(pouts[0], ref, n_acc, loaded == nullptr);
                    peer_verified = pv.ok;
                    peer_note = pv.ok ? "verified" : std::to_string(pv.mismatches) + " mismatches, first " + pv.first_bad;
                }
                if (o.time) {
                    for (int i = 0; i < o.warmup; i++) peer.run(sets[i % nsets].a, sets[i % nsets].b, pouts[i % nsets]);
                    std::vector<double> ts;
                    for (int i = 0; i < o.iters; i++) {
                        peer.run(sets[i % nsets].a, sets[i % nsets].b, pouts[i % nsets]);
                        ts.push_back(peer.primitive_ms());  // the primitive alone, as benchdnn times it
                    }
                    peer_ms = median(ts);
                }
            }
        }
#else
        peer_note = "this convbwd-driver was built without oneDNN (configure with -DCONVBWD_WITH_ONEDNN=ON)";
#endif
    }

    const double flops = nominal_flops(p);
    const double bytes = (double)dtype_bytes(p.dtype) * (double)(s0.a.size() + s0.b.size() + s0.out.size());
    const double tflops = flops / t_ms / 1e9, gbps = bytes / t_ms / 1e6;  // NaN when not timed
    std::string verify_note = !o.verify ? "not run"
                              : v.ok    ? (loaded ? "ok (max error " + fmt("%.3g", v.max_err) + ", tolerance " +
                                                         fmt("%.3g", v.tol) + ")"
                                                  : "ok (exact)")
                                        : "FAILED: " + std::to_string(v.mismatches) + " mismatches (" +
                                              std::to_string(v.unwritten) + " unwritten), first " + v.first_bad;
    if (o.json) {
        row.str("kernel", kname).num("time_ms", t_ms).num("tflops", tflops).num("gbps", gbps);
        if (o.verify) row.boolean("verified", v.ok);
        else row.null("verified");
        row.num("flops", flops).num("bytes", bytes).integer("iters", o.time ? o.iters : 0);
        // Executed multiply-adds over useful ones (taps that land inside dy): the stride-phase
        // kernels skip every zero of the scatter; what remains is the zero border of dy.
        const double useful = (double)useful_macs(p);
        if (bwd_data && useful > 0) {
            row.num("mac_ratio", (double)executed_macs_phases(p) / useful);
            if (o.compare == "scatter") row.num("peer_mac_ratio", (double)executed_macs_scatter(p) / useful);
        }
        row.integer("buffer_sets", nsets).str("inputs", loaded ? "loaded" : "random");
        if (o.verify) row.num("max_err", v.max_err).num("tolerance", v.tol);
        if (o.verify && !v.ok) row.str("verify_note", verify_note);
        if (!o.compare.empty()) {
            row.str("peer", o.compare).num("peer_time_ms", peer_ms);
            if (peer_verified < 0) row.null("peer_verified");
            else row.boolean("peer_verified", peer_verified == 1);
            row.str("peer_note", peer_note);
        }
        std::printf("%s\n", row.text().c_str());
    } else {
        std::printf("%s %s\n  kernel %s  verify %s\n", to_string(dir), line.c_str(), kname, verify_note.c_str());
        if (o.time)
            std::printf("  time %.4f ms (median of %d, %d buffer set%s)  %.2f GFLOP/s  %.2f GB/s\n", t_ms, o.iters, nsets,
                        nsets > 1 ? "s" : "", tflops * 1e3, gbps);
        if (!o.compare.empty()) {
            std::printf("  peer %s: %s", o.compare.c_str(), peer_note.c_str());
            if (o.time && peer_ms == peer_ms)
                std::printf("  time %.4f ms  %.2f GFLOP/s  peer-time/convbwd-time %.2fx", peer_ms, flops / peer_ms / 1e6,
                            peer_ms / t_ms);
            std::printf("\n");
        }
    }
    std::fflush(stdout);
    if (o.verify && !v.ok)
        std::fprintf(stderr, "convbwd-driver: %s %s: verification %s\n", to_string(dir), line.c_str(), verify_note.c_str());
    if (peer_verified == 0)
        std::fprintf(stderr, "convbwd-driver: %s %s: peer %s: %s\n", to_string(dir), line.c_str(), o.compare.c_str(),
                     peer_note.c_str());
    return (!o.verify || v.ok) && peer_verified != 0;
}

}  // namespace convbwd::driver
