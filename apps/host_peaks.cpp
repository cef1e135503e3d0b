// Measures this CPU's ceilings for the roofline in docs/PERFORMANCE.md: f32 FMA throughput
// (all cores, AVX2/FMA when the compiler targets it) and copy bandwidth (read + write).
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
#else
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
    std::vector<std::thread> pool;
    std::vector<float> sink(threads);
    double t0 = seconds();
    for (int t = 0; t < threads; t++) pool.emplace_back([&, t] { sink[t] = fma_loop(iters); });
    for (auto &th : pool) th.join();
    double gflops = kFlopsPerIter * iters * threads / (seconds() - t0) / 1e9;

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
    std::printf("threads %d  f32 FMA peak %.1f GFLOP/s  copy bandwidth %.1f GB/s (read + write)  [%g]\n", threads,
                gflops, gbps, (double)sink[0] + dst[7]);
    return 0;
}
