// The reference itself, on cases computed by hand. This file also holds the test binary's main().
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "common/reference.h"

using namespace convbwd;

TEST_SUITE("reference") {
TEST_CASE("bwd_data 1-D, stride 2, pad 1, 3 taps") {
    // H = 5, R = 3, pad 1, stride 2 -> P = 3. dx[h] = sum over (p, r) with 2p - 1 + r = h of dy[p] w[r].
    ConvProblem p{.N = 1, .C = 1, .H = 1, .W = 5, .K = 1, .R = 1, .S = 3, .pad_left = 1, .pad_right = 1,
                  .stride_w = 2};
    p = with_derived_output(p);
    REQUIRE(p.Q == 3);
    std::vector<float> dy = {1, 10, 100}, w = {1, 2, 3};
    std::vector<double> dx = ref_bwd_data(p, dy, w);
    // h=0: p=0,r=1 -> 1*2; h=1: p=0,r=2 (3) + p=1,r=0 (10) ; h=2: p=1,r=1 -> 20;
    // h=3: p=1,r=2 (30) + p=2,r=0 (100); h=4: p=2,r=1 -> 200
    CHECK(dx == std::vector<double>{2, 13, 20, 130, 200});
}

TEST_CASE("bwd_data: a phase with no taps is zero (2x2 filter, stride 3)") {
    ConvProblem p{.N = 1, .C = 1, .H = 1, .W = 7, .K = 1, .R = 1, .S = 2, .stride_w = 3};
    p = with_derived_output(p);
    REQUIRE(p.Q == 2);
    std::vector<double> dx = ref_bwd_data(p, {1, 2}, {5, 7});
    CHECK(dx == std::vector<double>{5, 7, 0, 10, 14, 0, 0});
}

TEST_CASE("bwd_weight 1-D with dilation 2 and groups") {
    // Two groups of one channel: dw[k][0][s] = sum_q x[k][q + 2s] dy[k][q].
    ConvProblem p{.N = 1, .C = 2, .H = 1, .W = 5, .K = 2, .R = 1, .S = 2, .G = 2, .dilation_w = 2};
    p = with_derived_output(p);
    REQUIRE(p.Q == 3);
    std::vector<float> x = {1, 2, 3, 4, 5, 10, 20, 30, 40, 50}, dy = {1, 1, 1, 1, 0, 2};
    std::vector<double> dw = ref_bwd_weight(p, x, dy);
    // k=0: s=0: 1+2+3 = 6; s=1: 3+4+5 = 12. k=1: s=0: 10 + 0 + 2*30 = 70; s=1: 30 + 0 + 100 = 130
    CHECK(dw == std::vector<double>{6, 12, 70, 130});
}

TEST_CASE("bwd_data and bwd_weight are adjoint: <dx, x> = <dy, conv(x)> = <dw, w>") {
    ConvProblem p{.N = 2, .C = 4, .H = 6, .W = 5, .K = 6, .R = 3, .S = 2, .G = 2, .pad_top = 1, .pad_bottom = 0,
                  .pad_left = 0, .pad_right = 1, .stride_h = 2, .stride_w = 1, .dilation_h = 1, .dilation_w = 2};
    p = with_derived_output(p);
    std::vector<float> x(2 * 4 * 6 * 5), dy((size_t)2 * 6 * p.P * p.Q), w(6 * 2 * 3 * 2);
    for (size_t i = 0; i < x.size(); i++) x[i] = (float)((i * 7) % 5) - 2;
    for (size_t i = 0; i < dy.size(); i++) dy[i] = (float)((i * 3) % 7) - 3;
    for (size_t i = 0; i < w.size(); i++) w[i] = (float)((i * 5) % 3) - 1;
    std::vector<double> dx = ref_bwd_data(p, dy, w), dw = ref_bwd_weight(p, x, dy);
    double a = 0, b = 0;
    for (size_t i = 0; i < x.size(); i++) a += dx[i] * x[i];
    for (size_t i = 0; i < w.size(); i++) b += dw[i] * w[i];
    CHECK(a == b);  // both equal sum over the forward's products; exact in double here
    CHECK(a != 0);
}
}
