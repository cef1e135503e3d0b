// Measures this CPU's ceilings for the roofline in docs/PERFORMANCE.md: f32 FMA throughput
// (all cores: AVX2/FMA when the compiler targets it, and AVX-512 where the CPU has it; the peak is
// the larger) and copy bandwidth (read + write).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include <immintrin.h>

namespace {
double seconds() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

#if defined(__AVX2__) && defined(__FMA__)
float fma_loop(long iters) {
    __m256 a[12], b = _mm256_set1_ps(0.999f), c = _mm256_set1_ps(0.001f);
    for (auto &v : a) v = _mm256_set1_ps(1.0f);
    for (long i = 0; i < iters; i++)
        for (auto &v : a) v = _mm256_fmadd_ps(v, b, c);
    __m256 s = a[0];
    for (int i = 1; i < 12; i++) s = _mm256_add_ps(s, a[i]);
    float out[8];
    _mm256_storeu_ps(out, s);
    return out[0];
}
const double kFlopsPerIter = 12 * 8 * 2;

// The same with 16-lane vectors where the CPU has AVX-512 (the build targets AVX2): a core whose
// 512-bit FMAs run at full width (Zen 5, Intel's server cores) doubles the AVX2 figure, one that
// splits them in halves (Zen 4) does not.
__attribute__((target("avx512f"))) float fma_loop512(long iters) {
    __m512 a[12], b = _mm512_set1_ps(0.999f), c = _mm512_set1_ps(0.001f);
    for (auto &v : a) v = _mm512_set1_ps(1.0f);
    for (long i = 0; i < iters; i++)
        for (auto &v : a) v = _mm512_fmadd_ps(v, b, c);
    __m512 s = a[0];
    for (int i = 1; i < 12; i++) s = _mm512_add_ps(s, a[i]);
    float out[16];
    _mm512_storeu_ps(out, s);
    return out[0];
}
const double kFlopsPerIter512 = 12 * 16 * 2;
bool has_avx512() { return __builtin_cpu_supports("avx512f"); }
#else
float fma_loop512(long) { return 0; }
const double kFlopsPerIter512 = 0;
bool has_avx512() { return false; }
float fma_loop(long iters) {
    float a[16] = {};
    for (long i = 0; i < iters; i++)
        for (float &v : a) v = v * 0.999f + 0.001f;
    return a[0];
}
const double kFlopsPerIter = 16 * 2;
#endif
}  // namespace

int main() {
    const int threads = (int)std::thread::hardware_concurrency();
    const long iters = 200000000 / 12;
    std::vector<float> sink(threads);
    // One FMA loop on every core at once: its GFLOP/s.
    auto peak = [&](float (*loop)(long), double flops_per_iter) {
        std::vector<std::thread> pool;
        const double t0 = seconds();
        for (int t = 0; t < threads; t++) pool.emplace_back([&, t] { sink[t] += loop(iters); });
        for (auto &th : pool) th.join();
        return flops_per_iter * iters * threads / (seconds() - t0) / 1e9;
    };
    const double gflops = peak(fma_loop, kFlopsPerIter);
    const double gflops512 = has_avx512() ? peak(fma_loop512, kFlopsPerIter512) : 0;

    const size_t bytes = 256u << 20;
    std::vector<char> src(bytes, 1), dst(bytes, 0);
    double best = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        double s = seconds();
        std::vector<std::thread> cp;
        for (int t = 0; t < threads; t++)
            cp.emplace_back([&, t] {
                size_t chunk = bytes / threads;
                std::memcpy(dst.data() + t * chunk, src.data() + t * chunk, chunk);
            });
        for (auto &th : cp) th.join();
        best = std::min(best, seconds() - s);
    }
    double gbps = 2.0 * bytes / best / 1e9;
    char wide[32] = "none";
    if (gflops512 > 0) std::snprintf(wide, sizeof wide, "%.1f", gflops512);
    std::printf("threads %d  f32 FMA peak %.1f GFLOP/s (AVX2 %.1f, AVX-512 %s)  copy bandwidth %.1f GB/s (read + write)  [%g]\n",
                threads, std::max(gflops, gflops512), gflops, wide, gbps, (double)sink[0] + dst[7]);
    return 0;
}
