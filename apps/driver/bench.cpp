#include "apps/driver/bench.h"

#include <cstdio>
#include <random>

#include "apps/driver/json.h"
#include "common/harness.h"
#include "common/reference.h"
#include "common/shapes.h"

namespace convbwd::driver {

namespace {

std::string fmt(const char *f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

}  // namespace

bool run_one(const ConvProblem &p, Direction dir, const Options &o, GpuDevice *dev, const Inputs *loaded, int line_no,
             HostTensor *result) {
    const bool bwd_data = dir == Direction::BwdData;
    const std::string line = to_driver_line(p, bwd_data ? 2 : 4);
    JsonObject row;
    row.str("problem", line).str("direction", to_string(dir)).str("dtype", to_string(p.dtype));
    row.str("layout", to_string(p.layout)).str("target", o.target);
    if (dev) row.str("device", dev->name());
    if (line_no > 0) row.integer("line", line_no);
    if (!o.shapes.empty()) row.str("shapes", o.shapes);
    // The key tuning databases use for this problem (runtime/src/dispatch.cpp).
    {
        const convbwd_problem cp = to_c(p);
        convbwd_exec exec{};
        exec.target = o.target_enum;
        char key[256];
        if (convbwd_problem_key(&cp, to_c(dir), to_c(p.dtype), to_c(p.layout), &exec,
                                key, sizeof key) == CONVBWD_SUCCESS)
            row.str("problem_key", key);
    }
    // Launch-time knobs forced with the kernel ("--kernel 'NAME knob=value ...'"): a tuning record's tail.
    if (const size_t sp = o.kernel.find(' '); sp != std::string::npos) row.str("launch", o.kernel.substr(sp + 1));

    RunSpec spec;
    spec.p = p, spec.dir = dir, spec.device = device_of(o.target_enum), spec.kernel = o.kernel;
    spec.verify = o.verify, spec.time = o.time, spec.warmup = o.warmup, spec.iters = o.iters;
    spec.peer = o.compare;
    if (loaded) spec.a = &loaded->at(bwd_data ? "dy" : "x"), spec.b = &loaded->at(bwd_data ? "w" : "dy");
    std::mt19937 rng(o.seed + (unsigned)line_no * 7919u + (bwd_data ? 0u : 1u));
    RunResult r = run_case(spec, rng);

    if (r.status != CONVBWD_SUCCESS) {  // a failure before any number exists: one report, a row with "error"
        std::fprintf(stderr, "convbwd-driver: %s %s: %s\n", to_string(dir), line.c_str(), r.error.c_str());
        if (o.json) {
            if (!r.kernel.empty()) row.str("kernel", r.kernel);
            else row.null("kernel");
            row.null("time_ms").null("tflops").null("gbps").boolean("verified", false).str("error", r.error);
            if (!o.compare.empty()) row.str("peer", o.compare).null("peer_time_ms").null("peer_verified");
            std::printf("%s\n", row.text().c_str());
        } else {
            std::printf("%s %s\n  error: %s\n", to_string(dir), line.c_str(), r.error.c_str());
        }
        std::fflush(stdout);
        return false;
    }
    *result = r.out;

    const VerifyResult &v = r.verify;
    const double t_ms = r.time_ms, peer_ms = r.peer.time_ms;
    const double flops = nominal_flops(p);
    const double bytes = (double)dtype_bytes(p.dtype) * (double)(r.a.size() + r.b.size() + r.out.size());
    const double tflops = flops / t_ms / 1e9, gbps = bytes / t_ms / 1e6;  // NaN when not timed
    const std::string verify_note =
        !o.verify ? "not run"
        : v.ok    ? (loaded ? "ok (max error " + fmt("%.3g", v.max_err) + ", tolerance " + fmt("%.3g", v.tol) + ")"
                            : "ok (exact)")
                  : "FAILED: " + std::to_string(v.mismatches) + " mismatches (" + std::to_string(v.unwritten) +
                     " unwritten), first " + v.first_bad;
    if (o.json) {
        row.str("kernel", r.kernel).num("time_ms", t_ms).num("tflops", tflops).num("gbps", gbps);
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
        row.integer("buffer_sets", r.buffer_sets).str("inputs", loaded ? "loaded" : "random");
        if (o.verify) row.num("max_err", v.max_err).num("tolerance", v.tol);
        if (o.verify && !v.ok) row.str("verify_note", verify_note);
        if (!o.compare.empty()) {
            row.str("peer", o.compare).num("peer_time_ms", peer_ms);
            // The peer from the caller's layout (oneDNN: its reorders in and out), where it differs.
            if (r.peer.layout_time_ms == r.peer.layout_time_ms) row.num("peer_layout_time_ms", r.peer.layout_time_ms);
            if (r.peer.verified < 0) row.null("peer_verified");
            else row.boolean("peer_verified", r.peer.verified == 1);
            row.str("peer_note", r.peer.note);
        }
        std::printf("%s\n", row.text().c_str());
    } else {
        std::printf("%s %s\n  kernel %s  verify %s\n", to_string(dir), line.c_str(), r.kernel.c_str(), verify_note.c_str());
        if (o.time)
            std::printf("  time %.4f ms (median of %d, %d buffer set%s)  %.2f GFLOP/s  %.2f GB/s\n", t_ms, o.iters,
                        r.buffer_sets, r.buffer_sets > 1 ? "s" : "", tflops * 1e3, gbps);
        if (!o.compare.empty()) {
            std::printf("  peer %s: %s", o.compare.c_str(), r.peer.note.c_str());
            if (o.time && peer_ms == peer_ms)
                std::printf("  time %.4f ms  %.2f GFLOP/s  peer-time/convbwd-time %.2fx", peer_ms, flops / peer_ms / 1e6,
                            peer_ms / t_ms);
            const double lay_ms = r.peer.layout_time_ms;
            if (o.time && lay_ms == lay_ms && peer_ms == peer_ms && lay_ms > peer_ms * 1.001)
                std::printf("\n  peer %s from the caller's layout (its reorders in and out included): time %.4f ms  "
                            "peer-time/convbwd-time %.2fx",
                            o.compare.c_str(), lay_ms, lay_ms / t_ms);
            std::printf("\n");
        }
    }
    std::fflush(stdout);
    if (o.verify && !v.ok)
        std::fprintf(stderr, "convbwd-driver: %s %s: verification %s\n", to_string(dir), line.c_str(), verify_note.c_str());
    if (r.peer.verified == 0)
        std::fprintf(stderr, "convbwd-driver: %s %s: peer %s: %s\n", to_string(dir), line.c_str(), o.compare.c_str(),
                     r.peer.note.c_str());
    return r.ok(spec);
}

}  // namespace convbwd::driver
