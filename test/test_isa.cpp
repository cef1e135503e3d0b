// The host kernels are multi-target libraries (AVX-512, AVX2+FMA, SSE4.1 on x86-64), each call
// running the best variant this CPU has, capped by CONVBWD_MAX_CPU_ISA. ctest runs this suite,
// and the host kernels' conformance, once per cap (kernels-host-avx2, kernels-host-sse41): a
// library built on an AVX-512 machine must run where only SSE4.1 is present.
#include <cstdlib>
#include <cstring>
#include <string>

#include "conformance.h"
#include "runtime/src/internal.h"

using namespace convbwd;
using namespace convbwd::test;

namespace {
int rank_of(const std::string &isa) { return isa == "sse41" ? 0 : isa == "avx2" ? 1 : isa == "avx512" ? 2 : -1; }
}  // namespace

TEST_SUITE("isa") {

TEST_CASE("isa: host kernels run the variant convbwd_host_isa() names, within CONVBWD_MAX_CPU_ISA") {
    const std::string isa = convbwd_host_isa();
    const char *cap_env = std::getenv("CONVBWD_MAX_CPU_ISA");
    const std::string cap = cap_env ? cap_env : "";
    MESSAGE("host ISA: " << isa << (cap.empty() ? "" : " (CONVBWD_MAX_CPU_ISA=" + cap + ")"));
#if defined(__x86_64__)
    REQUIRE(rank_of(isa) >= 0);
    if (!cap.empty()) CHECK(rank_of(isa) <= rank_of(cap));
    // One call of each direction through the dispatcher, on fresh inputs, against the reference.
    std::mt19937 rng(11);
    const ConvProblem p = with_derived_output(ConvProblem{.N = 2, .C = 16, .H = 9, .W = 9, .K = 16, .R = 3, .S = 3,
                                                          .pad_top = 1, .pad_bottom = 1, .pad_left = 1, .pad_right = 1});
    for (Direction d : {Direction::BwdData, Direction::BwdWeight}) {
        RunSpec s;
        s.p = p, s.dir = d;
        const RunResult r = run_case(s, rng);
        CHECK_MESSAGE(r.ok(s), r.error << r.verify.first_bad);
    }
    // Halide's multi-target wrappers asked for their variants (on a wrapper's first call, every
    // variant but the baseline, which needs no asking) and the level named above was granted:
    // nothing above it ever was (with no wrapper, as in a single-target build, nothing would be
    // asked at all).
    // The baseline (SSE4.1) is the wrapper's fallback, taken without asking: there, every
    // better variant was asked for and refused.
    const std::string names[3] = {"sse41", "avx2", "avx512"};
#if CONVBWD_HOST_TARGET_COUNT > 1
    for (int i = 1; i < 3; i++) {
        const long granted = host_variant_runs(names[i].c_str());
        CAPTURE(names[i]);
        if (i == rank_of(isa)) CHECK(granted >= 2);
        else if (i > rank_of(isa)) CHECK(granted == 0);
    }
    if (isa == "sse41") CHECK(host_variant_runs("refused") >= 2);
    if (cap.empty()) CHECK(host_variant_runs("refused") == 0);
#else  // one host target: no wrapper, nothing asked (convbwd_host_isa() still names no level above it)
    for (const std::string &n : names) CHECK(host_variant_runs(n.c_str()) == 0);
#endif
#else
    CHECK(isa == "baseline");
#endif
}

TEST_CASE("isa: the dispatcher's defaults have vectors no wider than the ISA the host kernels run at") {
    // Inception-v3's 1x7 layer (batch 1): its NHWC defaults are vec=16 kernels, followed by ones
    // for 8-lane vectors; those run where the kernels run at AVX2 or below, or where the channels
    // do not fill two of the wide kernel's tiles (a kernel named by a tuning database or --kernel
    // still runs at any width: kernels-host-avx2 runs them).
    const std::string isa = convbwd_host_isa();
    ConvProblem p{.N = 1, .C = 128, .H = 17, .W = 17, .K = 128, .R = 1, .S = 7, .pad_left = 3, .pad_right = 3,
                  .layout = Layout::NHWC};
    p = with_derived_output(p);
    for (convbwd_direction d : {CONVBWD_BWD_DATA, CONVBWD_BWD_WEIGHT}) {
        convbwd_problem c = to_c(p);
        const char *name = nullptr;
        REQUIRE(convbwd_select_kernel(&c, d, CONVBWD_F32, CONVBWD_NHWC, nullptr, &name) == CONVBWD_SUCCESS);
        const std::string k = name;
        const KernelInfo *info = find_kernel(k);
        REQUIRE(info);
        const int vec = kernel_knobs(*info).get("vec");
        CAPTURE(k);
        CAPTURE(isa);
        CHECK(vec <= (isa == "avx512" ? 16 : 8));
        const bool wide_default = find_kernel(d == CONVBWD_BWD_DATA ? "bwdd_f32_nhwc_s1_any_host_c2x5v16pr16"
                                                                    : "bwdw_f32_nhwc_s1_any_host_c2k8v16o") != nullptr;
        if (isa == "avx512" && wide_default) CHECK(vec == 16);
        // 48 channels fill no two 32-channel tiles of those kernels: both directions' one-vector
        // 16-lane kernels take it on AVX-512 (the dispatcher's 16-lane rules), else 8-lane ones.
        ConvProblem narrow = p;
        narrow.C = 48;
        convbwd_problem cn = to_c(narrow);
        REQUIRE(convbwd_select_kernel(&cn, d, CONVBWD_F32, CONVBWD_NHWC, nullptr, &name) == CONVBWD_SUCCESS);
        const KernelInfo *ninfo = find_kernel(name);
        REQUIRE(ninfo);
        CAPTURE(std::string(name));
        const char *one_vector = d == CONVBWD_BWD_WEIGHT ? "bwdw_f32_nhwc_s1_any_host_c1k8v16d" : "bwdd_f32_nhwc_s1_any_host_c1x7v16pr4";
        if (isa == "avx512" && find_kernel(one_vector)) CHECK(std::string(name) == one_vector);
        else CHECK(kernel_knobs(*ninfo).get("vec") <= 8);
    }
}

}  // TEST_SUITE
