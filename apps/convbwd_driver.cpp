// convbwd-driver: MIOpenDriver-style benchmark and verification CLI.
//   convbwd-driver conv -n 32 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -F 6 -t 1 -V 1
//   convbwd-driver --shapes shapes/resnet50.txt -n 4 --compare onednn --json
//   convbwd-driver --list-kernels
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <set>
#include <sstream>

#include "common/reference.h"
#include "common/shapes.h"
#include "common/tensor.h"
#include "common/verify.h"
#include "convbwd/convbwd.h"
#ifdef CONVBWD_WITH_ONEDNN
#include "common/onednn_peer.h"
#endif

using namespace convbwd;

namespace {

const char *kUsage =
    "usage: convbwd-driver conv|convfp16|convbfp16 [MIOpenDriver flags] [options]\n"
    "       convbwd-driver --shapes FILE [flag overrides] [options]\n"
    "       convbwd-driver --list-kernels\n"
    "MIOpenDriver flags: -n -c -H -W -k -y -x -p -q -u -v -l -j -g -F (2 bwd data, 4 bwd weight, 6/0 both)\n"
    "                    -t 1 (time) -i ITER -V 0|1 (verify) -I/-f/-O NCHW|NHWC -m conv --spatial_dim 2\n"
    "options: --target host  --kernel NAME  --compare onednn  --json  --warmup N  --seed N\n"
    "         --pad_bottom N --pad_right N (asymmetric padding)\n";

// Flags that take part in the problem (common/shapes.cpp) and flags the driver itself reads.
const std::set<std::string> kProblemFlags = {"-n", "-c", "-H", "-W", "-k", "-y", "-x", "-p", "-q", "-u", "-v",
                                             "-l", "-j", "-g", "-F", "-I", "-f", "-O", "-m", "--spatial_dim",
                                             "--pad_bottom", "--pad_right", "--in_layout", "--fil_layout",
                                             "--out_layout", "--mode"};
const std::set<std::string> kOptionFlags = {"-t", "-i", "-V", "--target", "--kernel", "--compare", "--json",
                                            "--warmup", "--seed", "--shapes", "--list-kernels", "-h", "--help"};
// MIOpenDriver flags we know and refuse, rather than ignore silently.
const std::set<std::string> kRefused = {"-b", "-a", "-z", "-s", "-w", "-S", "-C", "-P", "-o", "-d", "-e",
                                        "--in_data", "--weights", "--dout_data", "--in_bias", "--bias"};

struct Options {
    bool time = false, verify = true, json = false;
    int iters = 10, warmup = 3;
    unsigned seed = 1;
    std::string kernel, compare, target = "host";
};

double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

int list_kernels() {
    std::printf("%-40s %-10s %-5s %-6s %-6s %-6s %-6s %s\n", "kernel", "direction", "dtype", "layout", "target",
                "stride", "filter", "schedule");
    for (int i = 0; i < convbwd_kernel_count(); i++) {
        convbwd_kernel_desc d;
        convbwd_kernel_info(i, &d);
        const char *dt[] = {"f32", "f16", "bf16"};
        std::printf("%-40s %-10s %-5s %-6s %-6s %-6s %-6s %s\n", d.name,
                    d.direction == CONVBWD_BWD_DATA ? "bwd_data" : "bwd_weight", dt[d.dtype],
                    d.layout == CONVBWD_NCHW ? "nchw" : "nhwc", "host", d.stride_class, d.filter_class, d.schedule);
    }
    return 0;
}

// Runs one (problem, direction): returns false on a failed call or verification.
bool run_one(const ConvProblem &p, Direction dir, const Options &o, int line_no) {
    std::mt19937 rng(o.seed + line_no * 7919u + (dir == Direction::BwdData ? 0 : 1));
    HostTensor a, b, out;
    if (dir == Direction::BwdData) {
        a = HostTensor(dy_dims(p), p.dtype, p.layout), b = HostTensor(w_dims(p), p.dtype, p.layout);
        out = HostTensor(x_dims(p), p.dtype, p.layout);
    } else {
        a = HostTensor(x_dims(p), p.dtype, p.layout), b = HostTensor(dy_dims(p), p.dtype, p.layout);
        out = HostTensor(w_dims(p), p.dtype, p.layout);
    }
    a.fill_random_ints(rng);
    b.fill_random_ints(rng);
    out.fill_nan();
    convbwd_problem cp = to_c(p);
    convbwd_exec exec{};
    exec.kernel = o.kernel.empty() ? nullptr : o.kernel.c_str();
    convbwd_direction cd = dir == Direction::BwdData ? CONVBWD_BWD_DATA : CONVBWD_BWD_WEIGHT;
    const char *kname = "";
    convbwd_tensor ta = a.desc(), tb = b.desc(), to = out.desc();
    auto call = [&] {
        return dir == Direction::BwdData ? convbwd_bwd_data(&cp, &ta, &tb, &to, 1.0f, 0.0f, &exec)
                                         : convbwd_bwd_weight(&cp, &ta, &tb, &to, 1.0f, 0.0f, &exec);
    };
    const std::string line = to_driver_line(p, dir == Direction::BwdData ? 2 : 4);
    if (convbwd_select_kernel(&cp, cd, to_c(p.dtype), to_c(p.layout), &exec, &kname) != CONVBWD_SUCCESS ||
        call() != CONVBWD_SUCCESS) {
        std::fprintf(stderr, "error: %s: %s\n", line.c_str(), convbwd_last_error());
        return false;
    }
    bool verified = true;
    std::string verify_note = "not run";
    if (o.verify) {
        std::vector<double> ref = dir == Direction::BwdData ? ref_bwd_data(p, a.to_logical(), b.to_logical())
                                                            : ref_bwd_weight(p, a.to_logical(), b.to_logical());
        int64_t n_acc = dir == Direction::BwdData ? (int64_t)p.K / p.G * p.R * p.S : (int64_t)p.N * p.P * p.Q;
        VerifyResult v = verify_output(out, ref, n_acc, true);
        verified = v.ok;
        verify_note = v.ok ? "ok" : ("FAILED: " + std::to_string(v.mismatches) + " mismatches, first " + v.first_bad);
    }
    double t_ms = 0, peer_ms = 0;
    std::string peer_note;
    if (o.time) {
        for (int i = 0; i < o.warmup; i++) call();
        std::vector<double> ts;
        for (int i = 0; i < o.iters; i++) {
            double t0 = now_ms();
            call();
            ts.push_back(now_ms() - t0);
        }
        t_ms = median(ts);
    }
    bool peer_ok = true;
    if (o.compare == "onednn") {
#ifdef CONVBWD_WITH_ONEDNN
        OnednnPeer peer(p, dir);
        if (!peer.ok()) {
            peer_note = "onednn refused: " + peer.why();
            peer_ok = false;
        } else {
            HostTensor pout = out;
            pout.fill_nan();
            peer_ok = peer.run(a, b, pout);
            if (peer_ok) {
                std::vector<float> x = out.to_logical(), y = pout.to_logical();
                int64_t diff = 0;
                for (size_t i = 0; i < x.size(); i++) diff += x[i] != y[i];
                peer_ok = diff == 0 || p.dtype != DType::F32;
                peer_note = diff == 0 ? "same as convbwd" : std::to_string(diff) + " elements differ";
            }
            if (o.time) {
                for (int i = 0; i < o.warmup; i++) peer.run(a, b, pout);
                std::vector<double> ts;
                for (int i = 0; i < o.iters; i++) {
                    double t0 = now_ms();
                    peer.run(a, b, pout);
                    ts.push_back(now_ms() - t0);
                }
                peer_ms = median(ts);
            }
        }
#else
        peer_note = "built without oneDNN";
        peer_ok = false;
#endif
    }
    const double flops = nominal_flops(p);
    const double bytes = (double)dtype_bytes(p.dtype) * (a.size() + b.size() + out.size());
    if (o.json) {
        std::printf("{\"problem\": \"%s\", \"direction\": \"%s\", \"dtype\": \"%s\", \"layout\": \"%s\", "
                    "\"target\": \"%s\", \"kernel\": \"%s\", \"time_ms\": %.6f, \"tflops\": %.6f, \"gbps\": %.3f, "
                    "\"verified\": %s",
                    line.c_str(), to_string(dir), to_string(p.dtype), to_string(p.layout), o.target.c_str(), kname,
                    t_ms, t_ms > 0 ? flops / t_ms / 1e9 : 0.0, t_ms > 0 ? bytes / t_ms / 1e6 : 0.0,
                    o.verify ? (verified ? "true" : "false") : "null");
        if (!o.compare.empty())
            std::printf(", \"peer\": \"%s\", \"peer_time_ms\": %.6f, \"peer_verified\": %s, \"peer_note\": \"%s\"",
                        o.compare.c_str(), peer_ms, peer_ok ? "true" : "false", peer_note.c_str());
        std::printf("}\n");
    } else {
        std::printf("%s %s\n  kernel %s  verify %s\n", to_string(dir), line.c_str(), kname, verify_note.c_str());
        if (o.time)
            std::printf("  time %.3f ms  %.1f GFLOP/s  %.1f GB/s\n", t_ms, flops / t_ms / 1e6, bytes / t_ms / 1e6);
        if (!o.compare.empty()) {
            std::printf("  peer %s: %s", o.compare.c_str(), peer_note.c_str());
            if (o.time && peer_ms > 0)
                std::printf("  time %.3f ms  %.1f GFLOP/s  peer-time/convbwd-time %.2fx", peer_ms,
                            flops / peer_ms / 1e6, peer_ms / t_ms);
            std::printf("\n");
        }
    }
    std::fflush(stdout);
    return verified && (o.compare.empty() || peer_ok);
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "-h" || args[0] == "--help") {
        std::fputs(kUsage, args.empty() ? stderr : stdout);
        return args.empty() ? 2 : 0;
    }
    if (args[0] == "--list-kernels") return list_kernels();
    std::string joined;
    for (auto &a : args) joined += a + " ";
    bool shapes_mode = args[0] == "--shapes" || joined.find("--shapes") != std::string::npos;
    DriverLine dl;
    std::string err;
    if (!tokenize_driver_line((shapes_mode ? "conv " : "") + joined, &dl, &err)) {
        std::fprintf(stderr, "convbwd-driver: %s\n%s", err.c_str(), kUsage);
        return 2;
    }
    for (const auto &kv : dl.flags) {
        if (kRefused.count(kv.first)) {
            std::fprintf(stderr, "convbwd-driver: MIOpenDriver flag %s is not supported by convbwd\n", kv.first.c_str());
            return 2;
        }
        if (!kProblemFlags.count(kv.first) && !kOptionFlags.count(kv.first)) {
            std::fprintf(stderr, "convbwd-driver: unknown flag %s\n%s", kv.first.c_str(), kUsage);
            return 2;
        }
    }
    Options o;
    auto flag = [&](const char *f) -> const std::string * {
        auto it = dl.flags.find(f);
        return it == dl.flags.end() ? nullptr : &it->second;
    };
    if (auto *v = flag("-t")) o.time = *v != "0";
    if (auto *v = flag("-i")) o.iters = std::max(1, std::atoi(v->c_str()));
    if (auto *v = flag("-V")) o.verify = *v != "0";
    if (auto *v = flag("--warmup")) o.warmup = std::max(0, std::atoi(v->c_str()));
    if (auto *v = flag("--seed")) o.seed = (unsigned)std::atoi(v->c_str());
    if (auto *v = flag("--kernel")) o.kernel = *v;
    if (auto *v = flag("--compare")) o.compare = *v;
    if (auto *v = flag("--target")) o.target = *v;
    o.json = flag("--json") != nullptr;
    if (o.target != "host") {
        std::fprintf(stderr, "convbwd-driver: --target %s: this build has host kernels only\n", o.target.c_str());
        return 2;
    }
    if (!o.compare.empty() && o.compare != "onednn") {
        std::fprintf(stderr, "convbwd-driver: --compare %s: only onednn is available in this build\n", o.compare.c_str());
        return 2;
    }

    struct Item {
        ConvProblem p;
        int dirs;
        int line_no;
    };
    std::vector<Item> items;
    if (shapes_mode) {
        const std::string *file = flag("--shapes");
        if (!file || file->empty()) {
            std::fprintf(stderr, "convbwd-driver: --shapes needs a file\n");
            return 2;
        }
        std::vector<ShapeEntry> entries;
        try {
            entries = load_shapes(*file);
        } catch (const std::exception &e) {
            std::fprintf(stderr, "convbwd-driver: %s\n", e.what());
            return 2;
        }
        for (const ShapeEntry &e : entries) {
            // Flags given beside --shapes override that flag on every line.
            DriverLine line;
            tokenize_driver_line(e.text, &line, &err);
            for (const auto &kv : dl.flags)
                if (kProblemFlags.count(kv.first)) line.flags[kv.first] = kv.second;
            Item it;
            it.line_no = e.line_no;
            if (!problem_from_line(line, &it.p, &it.dirs, &err)) {
                std::fprintf(stderr, "convbwd-driver: %s:%d: %s\n", file->c_str(), e.line_no, err.c_str());
                return 2;
            }
            items.push_back(it);
        }
    } else {
        Item it;
        it.line_no = 0;
        if (!problem_from_line(dl, &it.p, &it.dirs, &err)) {
            std::fprintf(stderr, "convbwd-driver: %s\n", err.c_str());
            return 2;
        }
        items.push_back(it);
    }
    int failures = 0, n = 0;
    for (const Item &it : items) {
        ++n;
        if (shapes_mode) std::fprintf(stderr, "[%d/%zu] %s\n", n, items.size(), to_driver_line(it.p, it.dirs).c_str());
        for (Direction d : {Direction::BwdData, Direction::BwdWeight})
            if (it.dirs & (d == Direction::BwdData ? 2 : 4)) failures += !run_one(it.p, d, o, it.line_no);
    }
    if (failures) std::fprintf(stderr, "convbwd-driver: %d failed\n", failures);
    return failures ? 1 : 0;
}
