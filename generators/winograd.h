// Winograd minimal filtering F(m, r) (Lavin and Gray, "Fast Algorithms for Convolutional Neural
// Networks", 2016): a correlation y[i] = sum_k d[i + k] g[k] of m outputs from an alpha = m + r - 1
// input tile as y = A^T [(G g) . (B^T d)], and in two dims Y = A^T [(G g G^T) . (B^T d B)] A: alpha^2
// products for m^2 r^2. The matrices come from the Cook-Toom construction over the points
// 0, 1, -1, 2, -2, 1/2, -1/2 (the first alpha - 1 of them) and infinity, in exact rationals, with
// each row of B^T scaled to integers (its factor moved into G's row): for F(4, 3) these are Lavin's
// matrices. No Halide here: the generators build the transforms from it, the runtime and the
// harness ask it whether a kernel's arithmetic is exact on integer data (dyadic()).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <vector>

namespace convbwd::winograd {

struct Rational {
    int64_t num = 0, den = 1;
    Rational(int64_t n = 0, int64_t d = 1) : num(n), den(d) { normalise(); }
    void normalise() {
        if (den < 0) num = -num, den = -den;
        const int64_t g = std::gcd(num < 0 ? -num : num, den);
        if (g > 1) num /= g, den /= g;
    }
    Rational operator+(Rational o) const { return {num * o.den + o.num * den, den * o.den}; }
    Rational operator-(Rational o) const { return {num * o.den - o.num * den, den * o.den}; }
    Rational operator*(Rational o) const { return {num * o.num, den * o.den}; }
    Rational operator/(Rational o) const { return {num * o.den, den * o.num}; }
    bool zero() const { return num == 0; }
    double value() const { return (double)num / (double)den; }
};

struct Transform {
    int m = 0, r = 0, alpha = 0;
    std::vector<Rational> at;  // A^T, m x alpha (row-major)
    std::vector<Rational> g;   // G, alpha x r
    std::vector<Rational> bt;  // B^T, alpha x alpha
    double a_t(int i, int j) const { return at[i * alpha + j].value(); }
    double g_(int i, int j) const { return g[i * r + j].value(); }
    double b_t(int i, int j) const { return bt[i * alpha + j].value(); }
    // Every entry a dyadic rational (a power of 2 in the denominator; A^T and B^T are integers):
    // on small-integer data every intermediate value is then exact in f32, as a direct sum's.
    bool dyadic() const {
        for (const auto *v : {&at, &g, &bt})
            for (const Rational &x : *v)
                if ((x.den & (x.den - 1)) != 0) return false;
        return true;
    }
};

// The input tile (transform points per dim) of F(m, r): one definition for the transforms and the
// runtime's sizes of what they make (schedules/spaces.h: workspace points, intermediates).
inline int alpha_of(int m, int r) { return m + r - 1; }

// F(m, r); m + r - 1 <= 8 (the seven finite points above and infinity).
inline Transform transform(int m, int r) {
    Transform t;
    t.m = m, t.r = r, t.alpha = alpha_of(m, r);
    const int a = t.alpha;
    if (m < 1 || r < 1 || a > 8) std::abort();
    const Rational pts[7] = {{0}, {1}, {-1}, {2}, {-2}, {1, 2}, {-1, 2}};
    // Rows j < a - 1: the powers of point j; row a - 1 (infinity): the leading coefficient.
    auto vandermonde = [&](int cols) {
        std::vector<Rational> v(a * cols);
        for (int j = 0; j + 1 < a; j++) {
            Rational pw = 1;
            for (int k = 0; k < cols; k++) v[j * cols + k] = pw, pw = pw * pts[j];
        }
        v[(a - 1) * cols + cols - 1] = 1;
        return v;
    };
    // Inverse of the a x a matrix by Gauss-Jordan (exact).
    std::vector<Rational> vm = vandermonde(a), inv(a * a);
    for (int i = 0; i < a; i++) inv[i * a + i] = 1;
    for (int c = 0; c < a; c++) {
        int p = c;
        while (vm[p * a + c].zero()) p++;
        for (int k = 0; k < a; k++) std::swap(vm[c * a + k], vm[p * a + k]), std::swap(inv[c * a + k], inv[p * a + k]);
        const Rational pv = vm[c * a + c];
        for (int k = 0; k < a; k++) vm[c * a + k] = vm[c * a + k] / pv, inv[c * a + k] = inv[c * a + k] / pv;
        for (int i = 0; i < a; i++) {
            if (i == c || vm[i * a + c].zero()) continue;
            const Rational f = vm[i * a + c];
            for (int k = 0; k < a; k++) vm[i * a + k] = vm[i * a + k] - f * vm[c * a + k], inv[i * a + k] = inv[i * a + k] - f * inv[c * a + k];
        }
    }
    // Correlation is the transpose of the convolution (Winograd's transposition principle):
    // A^T = (powers of the points up to m - 1)^T, G = powers up to r - 1, B^T = (V^-1)^T.
    const std::vector<Rational> hm = vandermonde(m);
    t.at.resize(m * a);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < a; j++) t.at[i * a + j] = hm[j * m + i];
    t.g = vandermonde(r);
    t.bt.resize(a * a);
    for (int i = 0; i < a; i++)
        for (int j = 0; j < a; j++) t.bt[i * a + j] = inv[j * a + i];
    // Row j of B^T times the lcm of its denominators, G's row j divided by it.
    for (int j = 0; j < a; j++) {
        int64_t l = 1;
        for (int k = 0; k < a; k++) l = std::lcm(l, t.bt[j * a + k].den);
        for (int k = 0; k < a; k++) t.bt[j * a + k] = t.bt[j * a + k] * Rational(l);
        for (int k = 0; k < r; k++) t.g[j * r + k] = t.g[j * r + k] / Rational(l);
    }
    return t;
}

}  // namespace convbwd::winograd
