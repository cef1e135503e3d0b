// The host kernels are Halide multi-target libraries (CONVBWD_HOST_TARGETS: AVX-512, AVX2+FMA,
// SSE4.1 on x86-64): each call runs the first variant whose CPU features this machine has.
// CONVBWD_MAX_CPU_ISA=sse41|avx2|avx512 caps that choice (as oneDNN's ONEDNN_MAX_CPU_ISA), so a
// lower variant can be run and tested on a machine that has more; convbwd_host_isa() says which
// level the host kernels run at.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <HalideRuntime.h>

#include "internal.h"

namespace convbwd {

namespace {

enum class Isa { Sse41 = 0, Avx2 = 1, Avx512 = 2, Unlimited = 3 };

bool has(int count, const uint64_t *f, int feature) {
    const int word = feature / 64;
    return word < count && ((f[word] >> (feature % 64)) & 1);
}

// The ISA level a feature set needs.
Isa level_of(int count, const uint64_t *f) {
    for (int a : {halide_target_feature_avx512, halide_target_feature_avx512_knl, halide_target_feature_avx512_skylake,
                  halide_target_feature_avx512_cannonlake, halide_target_feature_avx512_zen4,
                  halide_target_feature_avx512_zen5, halide_target_feature_avx512_sapphirerapids})
        if (has(count, f, a)) return Isa::Avx512;
    for (int a : {halide_target_feature_avx, halide_target_feature_avx2, halide_target_feature_fma,
                  halide_target_feature_f16c, halide_target_feature_avxvnni})
        if (has(count, f, a)) return Isa::Avx2;
    return Isa::Sse41;
}

const char *name_of(Isa i) {
    switch (i) {
    case Isa::Sse41: return "sse41";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
    case Isa::Unlimited: break;
    }
    return "unlimited";
}

Isa cap_from_env() {
    const char *v = std::getenv("CONVBWD_MAX_CPU_ISA");
    if (!v || !*v) return Isa::Unlimited;
    for (Isa i : {Isa::Sse41, Isa::Avx2, Isa::Avx512})
        if (std::strcmp(v, name_of(i)) == 0) return i;
    std::fprintf(stderr, "convbwd: CONVBWD_MAX_CPU_ISA=%s is not sse41, avx2 or avx512: ignored\n", v);
    return Isa::Unlimited;
}

Isa cap() {
    static const Isa c = cap_from_env();
    return c;
}
// Variants granted, by level, and refused by the cap. A wrapper asks for every variant but the
// last (the baseline, which needs no asking) on its first call and runs the best one granted.
std::atomic<long> g_runs[3], g_refused;

int can_use(int count, const uint64_t *features) {
    const Isa need = level_of(count, features);
    if (cap() != Isa::Unlimited && need > cap()) {
        g_refused++;
        return 0;
    }
    const int ok = halide_default_can_use_target_features(count, features);
    if (ok) g_runs[(int)need]++;
    return ok;
}

// The feature set of each level, as Halide's multi-target wrapper would ask for it.
bool cpu_has(Isa i) {
    uint64_t f[(halide_target_feature_end + 63) / 64] = {};
    auto set = [&](int a) { f[a / 64] |= uint64_t{1} << (a % 64); };
    set(halide_target_feature_sse41);
    if (i >= Isa::Avx2)
        for (int a : {halide_target_feature_avx, halide_target_feature_avx2, halide_target_feature_fma,
                      halide_target_feature_f16c})
            set(a);
    if (i >= Isa::Avx512) set(halide_target_feature_avx512), set(halide_target_feature_avx512_skylake);
    return halide_default_can_use_target_features((int)(sizeof f / sizeof f[0]), f) != 0;
}

}  // namespace

void install_host_isa_hook() { halide_set_custom_can_use_target_features(&can_use); }

#ifndef CONVBWD_HOST_MAX_ISA
#define CONVBWD_HOST_MAX_ISA 2
#endif
namespace {
// The best level this machine has, the cap allows and the build compiled a variant of
// (CONVBWD_HOST_TARGETS: an AVX2-only build runs its AVX2 code on an AVX-512 machine); -1: none
// (not x86). Found once: the CPU and the cap do not change while the process runs (the
// dispatcher asks on every call).
int run_level() {
    static const int level = [] {
        for (Isa i : {Isa::Avx512, Isa::Avx2, Isa::Sse41})
            if ((int)i <= CONVBWD_HOST_MAX_ISA && (cap() == Isa::Unlimited || i <= cap()) && cpu_has(i)) return (int)i;
        return -1;
    }();
    return level;
}
}  // namespace

const char *host_isa() { return run_level() < 0 ? "baseline" : name_of((Isa)run_level()); }

int host_f32_lanes() { return run_level() == (int)Isa::Avx512 ? 16 : run_level() == (int)Isa::Avx2 ? 8 : 4; }

long host_variant_runs(const char *isa) {
    if (std::strcmp(isa, "refused") == 0) return g_refused.load();
    for (Isa i : {Isa::Sse41, Isa::Avx2, Isa::Avx512})
        if (std::strcmp(isa, name_of(i)) == 0) return g_runs[(int)i].load();
    return -1;
}

}  // namespace convbwd

extern "C" const char *convbwd_host_isa(void) {
    return convbwd::host_isa();
}
