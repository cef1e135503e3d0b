// convbwd-accuracy: backward-weight's error against a double reference as the reduction grows
// (docs/KERNELS.md, "Accuracy"). A 1x1 stride-1 NHWC layer of C = K channels on 64 x 64 images,
// N = terms / 4096 of them, so every filter element sums `terms` products. Inputs uniform in
// [0, 1) (one sign: the worst case for a running f32 sum, whose ulp outgrows the terms) or in
// [-1, 1). Prints, per size, the largest relative error of any filter element, and the largest
// error over the bound's scale sum |x * dy| (Higham's normwise form of the summation bound).
//
//   convbwd-accuracy [--terms 1e6,1e8,5e8] [--channels 8] [--dist pos|sym|both] [--kernel NAME]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <convbwd/convbwd.h>

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Fills v with uniform values in [lo, 1) from per-thread generators (seeded by chunk: the same
// data whatever the thread count).
void fill(std::vector<float> &v, float lo, unsigned seed) {
    const size_t chunk = size_t{1} << 22, chunks = (v.size() + chunk - 1) / chunk;
    const unsigned T = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> th;
    for (unsigned t = 0; t < T; t++)
        th.emplace_back([&, t] {
            for (size_t c = t; c < chunks; c += T) {
                std::mt19937 rng(seed * 1000003u + (unsigned)c);
                std::uniform_real_distribution<float> u(lo, 1.0f);
                for (size_t i = c * chunk; i < std::min(v.size(), (c + 1) * chunk); i++) v[i] = u(rng);
            }
        });
    for (auto &t : th) t.join();
}

// dw[k][c] = sum over pixels of dy[pixel][k] * x[pixel][c] in double, and sum |...| (the scale).
void reference(const std::vector<float> &x, const std::vector<float> &dy, int64_t pixels, int C, int K,
               std::vector<double> &ref, std::vector<double> &scale) {
    const unsigned T = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::vector<double>> r(T, std::vector<double>((size_t)K * C)), a = r;
    std::vector<std::thread> th;
    for (unsigned t = 0; t < T; t++)
        th.emplace_back([&, t] {
            const int64_t lo = pixels * t / T, hi = pixels * (t + 1) / T;
            for (int64_t i = lo; i < hi; i++)
                for (int k = 0; k < K; k++) {
                    const double d = dy[(size_t)i * K + k];
                    for (int c = 0; c < C; c++) {
                        const double p = d * x[(size_t)i * C + c];
                        r[t][(size_t)k * C + c] += p;
                        a[t][(size_t)k * C + c] += std::fabs(p);
                    }
                }
        });
    for (auto &t : th) t.join();
    ref.assign((size_t)K * C, 0.0), scale.assign((size_t)K * C, 0.0);
    for (unsigned t = 0; t < T; t++)
        for (size_t e = 0; e < ref.size(); e++) ref[e] += r[t][e], scale[e] += a[t][e];
}

std::vector<double> parse_list(const char *s) {
    std::vector<double> out;
    for (const char *p = s; *p;) {
        char *end = nullptr;
        out.push_back(std::strtod(p, &end));
        if (end == p) break;
        p = *end == ',' ? end + 1 : end;
    }
    return out;
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<double> terms = {1e6, 1e8, 5e8};
    int C = 8;
    std::string dist = "both";
    const char *kernel = nullptr;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        const bool more = i + 1 < argc;
        if (a == "--terms" && more) terms = parse_list(argv[++i]);
        else if (a == "--channels" && more) C = std::atoi(argv[++i]);
        else if (a == "--dist" && more) dist = argv[++i];
        else if (a == "--kernel" && more) kernel = argv[++i];
        else {
            std::fprintf(stderr,
                         "usage: convbwd-accuracy [--terms 1e6,1e8,5e8] [--channels C] [--dist pos|sym|both] "
                         "[--kernel NAME]\nunknown or incomplete argument: %s\n",
                         a.c_str());
            return 2;
        }
    }
    if (C < 1 || C > 64 || (dist != "pos" && dist != "sym" && dist != "both")) {
        std::fprintf(stderr, "convbwd-accuracy: --channels must be 1..64 and --dist pos, sym or both\n");
        return 2;
    }
    const int K = C, H = 64, W = 64;
    std::printf("%-10s %-4s %-42s %8s %12s %12s %8s\n", "terms", "dist", "kernel", "splits", "max_rel_err",
                "err/sum|xy|", "seconds");
    for (double t : terms) {
        const int64_t N = std::max<int64_t>(1, (int64_t)std::llround(t / (H * W)));
        const int64_t pixels = N * H * W;
        for (const char *d : {"pos", "sym"}) {
            if (dist != "both" && dist != d) continue;
            std::vector<float> x((size_t)pixels * C), dy((size_t)pixels * K), dw((size_t)K * C, NAN);
            fill(x, d[0] == 'p' ? 0.0f : -1.0f, 1), fill(dy, d[0] == 'p' ? 0.0f : -1.0f, 2);
            convbwd_problem p{};
            p.n = (int)N, p.c = C, p.h = H, p.w = W, p.k = K, p.r = 1, p.s = 1, p.groups = 1;
            p.stride_h = p.stride_w = p.dilation_h = p.dilation_w = 1;
            convbwd_tensor tx{x.data(), CONVBWD_F32, CONVBWD_NHWC, {}}, tdy{dy.data(), CONVBWD_F32, CONVBWD_NHWC, {}},
                tdw{dw.data(), CONVBWD_F32, CONVBWD_NHWC, {}};
            convbwd_exec ex{};
            ex.kernel = kernel;
            const char *name = "?";
            size_t ws = 0;
            if (convbwd_select_kernel(&p, CONVBWD_BWD_WEIGHT, CONVBWD_F32, CONVBWD_NHWC, &ex, &name) != CONVBWD_SUCCESS ||
                convbwd_workspace_size(&p, CONVBWD_BWD_WEIGHT, CONVBWD_F32, CONVBWD_NHWC, &ex, &ws) != CONVBWD_SUCCESS) {
                std::fprintf(stderr, "convbwd-accuracy: %s\n", convbwd_last_error());
                return 1;
            }
            std::vector<char> workspace(std::max<size_t>(ws, 1));
            ex.workspace = workspace.data(), ex.workspace_bytes = ws;
            const double t0 = now();
            if (convbwd_bwd_weight(&p, &tx, &tdy, &tdw, 1.0f, 0.0f, &ex) != CONVBWD_SUCCESS) {
                std::fprintf(stderr, "convbwd-accuracy: %s\n", convbwd_last_error());
                return 1;
            }
            const double secs = now() - t0;
            std::vector<double> ref, scale;
            reference(x, dy, pixels, C, K, ref, scale);
            double rel = 0, norm = 0;
            for (size_t e = 0; e < ref.size(); e++) {
                const double err = std::fabs((double)dw[e] - ref[e]);
                if (std::isnan(dw[e])) rel = norm = INFINITY;
                rel = std::max(rel, err / std::max(std::fabs(ref[e]), 1e-300));
                norm = std::max(norm, err / std::max(scale[e], 1e-300));
            }
            std::printf("%-10.3g %-4s %-42s %8zu %12.3e %12.3e %8.2f\n", (double)pixels, d, name,
                        ws / ((size_t)K * C * sizeof(float)), rel, norm, secs);
            std::fflush(stdout);
        }
    }
    return 0;
}
