// Links the installed libconvbwd.a: backward-data and backward-weight of one small layer on the
// host, checked against a direct loop. Exit code 0 when both match.
#include <convbwd/convbwd.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
    // NCHW: x 2x8x10x10, w 16x8x3x3, pad 1, stride 1 -> dy 2x16x10x10
    convbwd_problem p{};
    p.n = 2, p.c = 8, p.h = 10, p.w = 10, p.k = 16, p.r = 3, p.s = 3, p.groups = 1;
    p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 1;
    p.stride_h = p.stride_w = 1, p.dilation_h = p.dilation_w = 1;
    const int P = 10, Q = 10;
    std::vector<float> x(2 * 8 * 10 * 10), w(16 * 8 * 9), dy(2 * 16 * P * Q), dx(x.size()), dw(w.size());
    for (size_t i = 0; i < x.size(); i++) x[i] = (float)((i * 7) % 5) - 2;
    for (size_t i = 0; i < w.size(); i++) w[i] = (float)((i * 3) % 5) - 2;
    for (size_t i = 0; i < dy.size(); i++) dy[i] = (float)((i * 11) % 5) - 2;
    auto t = [](std::vector<float> &v) { return convbwd_tensor{v.data(), CONVBWD_F32, CONVBWD_NCHW, {0, 0, 0, 0}}; };
    try {
        convbwd::bwd_data(p, t(dy), t(w), t(dx));
        convbwd::bwd_weight(p, t(x), t(dy), t(dw));
    } catch (const convbwd::Error &e) {
        std::fprintf(stderr, "convbwd: %s\n", e.what());
        return 1;
    }
    // Direct loops for two elements of each.
    auto X = [&](int n, int c, int h, int ww) { return (h < 0 || h >= 10 || ww < 0 || ww >= 10) ? 0.0f : x[((n * 8 + c) * 10 + h) * 10 + ww]; };
    double want_dw = 0;  // dw[3][5][1][2]
    for (int n = 0; n < 2; n++)
        for (int h = 0; h < P; h++)
            for (int q = 0; q < Q; q++) want_dw += X(n, 5, h - 1 + 1, q - 1 + 2) * dy[((n * 16 + 3) * P + h) * Q + q];
    double want_dx = 0;  // dx[1][4][0][9]
    for (int k = 0; k < 16; k++)
        for (int r = 0; r < 3; r++)
            for (int s = 0; s < 3; s++) {
                int ph = 0 + 1 - r, pq = 9 + 1 - s;
                if (ph >= 0 && ph < P && pq >= 0 && pq < Q) want_dx += dy[((1 * 16 + k) * P + ph) * Q + pq] * w[((k * 8 + 4) * 3 + r) * 3 + s];
            }
    float got_dw = dw[((3 * 8 + 5) * 3 + 1) * 3 + 2], got_dx = dx[((1 * 8 + 4) * 10 + 0) * 10 + 9];
    std::printf("dw[3][5][1][2] = %g (want %g), dx[1][4][0][9] = %g (want %g)\n", got_dw, want_dw, got_dx, want_dx);
    return (got_dw == (float)want_dw && got_dx == (float)want_dx) ? 0 : 1;
}
