#include "common/reference.h"

#include <algorithm>
#include <thread>

namespace convbwd {

namespace {
// Runs f(i) for i in [0, n) on the host's cores (the reference must not dominate test time).
template <class F>
void parallel_for(int64_t n, F f) {
    int threads = (int)std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++)
        pool.emplace_back([&, t] {
            for (int64_t i = t; i < n; i += threads) f(i);
        });
    for (auto &th : pool) th.join();
}
}  // namespace

std::vector<double> ref_bwd_data(const ConvProblem &p, const std::vector<float> &dy, const std::vector<float> &w) {
    const int Cg = p.C / p.G, Kg = p.K / p.G;
    std::vector<double> dx((size_t)p.N * p.C * p.H * p.W, 0.0);
    parallel_for((int64_t)p.N * p.C, [&](int64_t nc) {
        const int n = (int)(nc / p.C), c = (int)(nc % p.C), g = c / Cg, cg = c % Cg;
        for (int h = 0; h < p.H; h++)
            for (int x = 0; x < p.W; x++) {
                double acc = 0;
                for (int kg = 0; kg < Kg; kg++) {
                    const int k = g * Kg + kg;
                    for (int r = 0; r < p.R; r++) {
                        const int th = h + p.pad_top - r * p.dilation_h;  // = oh * stride_h
                        if (th < 0 || th % p.stride_h) continue;
                        const int oh = th / p.stride_h;
                        if (oh >= p.P) continue;
                        for (int s = 0; s < p.S; s++) {
                            const int tw = x + p.pad_left - s * p.dilation_w;
                            if (tw < 0 || tw % p.stride_w) continue;
                            const int ow = tw / p.stride_w;
                            if (ow >= p.Q) continue;
                            acc += (double)dy[(((size_t)n * p.K + k) * p.P + oh) * p.Q + ow] *
                                   (double)w[(((size_t)k * Cg + cg) * p.R + r) * p.S + s];
                        }
                    }
                }
                dx[(((size_t)n * p.C + c) * p.H + h) * p.W + x] = acc;
            }
    });
    return dx;
}

std::vector<double> ref_bwd_weight(const ConvProblem &p, const std::vector<float> &x, const std::vector<float> &dy) {
    const int Cg = p.C / p.G, Kg = p.K / p.G;
    std::vector<double> dw((size_t)p.K * Cg * p.R * p.S, 0.0);
    parallel_for((int64_t)p.K * Cg, [&](int64_t kc) {
        const int k = (int)(kc / Cg), cg = (int)(kc % Cg), c = (k / Kg) * Cg + cg;
        for (int r = 0; r < p.R; r++)
            for (int s = 0; s < p.S; s++) {
                double acc = 0;
                for (int n = 0; n < p.N; n++)
                    for (int oh = 0; oh < p.P; oh++) {
                        const int h = oh * p.stride_h - p.pad_top + r * p.dilation_h;
                        if (h < 0 || h >= p.H) continue;
                        for (int ow = 0; ow < p.Q; ow++) {
                            const int w = ow * p.stride_w - p.pad_left + s * p.dilation_w;
                            if (w < 0 || w >= p.W) continue;
                            acc += (double)x[(((size_t)n * p.C + c) * p.H + h) * p.W + w] *
                                   (double)dy[(((size_t)n * p.K + k) * p.P + oh) * p.Q + ow];
                        }
                    }
                dw[(((size_t)k * Cg + cg) * p.R + r) * p.S + s] = acc;
            }
    });
    return dw;
}

}  // namespace convbwd
