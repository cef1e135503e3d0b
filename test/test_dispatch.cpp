// Dispatcher: the specialised kernel is chosen where it applies, the fallback otherwise, no
// problem is left without a kernel, and the chosen kernel matches the reference.
#include "conformance.h"

using namespace convbwd;
using namespace convbwd::test;

namespace {
std::string chosen(const ConvProblem &p, convbwd_direction d) {
    convbwd_problem c = to_c(p);
    const char *name = nullptr;
    REQUIRE(convbwd_select_kernel(&c, d, to_c(p.dtype), to_c(p.layout), nullptr, &name) == CONVBWD_SUCCESS);
    return name;
}
bool has_kernel(const std::string &name) {
    for (int i = 0; i < convbwd_kernel_count(); i++) {
        convbwd_kernel_desc d;
        REQUIRE(convbwd_kernel_info(i, &d) == CONVBWD_SUCCESS);
        if (name == d.name) return true;
    }
    return false;
}
}  // namespace

TEST_SUITE("dispatch") {
TEST_CASE("the specialised class is chosen where it applies") {
    ConvProblem p{.N = 2, .C = 32, .H = 14, .W = 14, .K = 32, .R = 3, .S = 3, .pad_top = 1, .pad_bottom = 1,
                  .pad_left = 1, .pad_right = 1, .layout = Layout::NHWC};
    p = with_derived_output(p);
    std::string k = chosen(p, CONVBWD_BWD_DATA);
    if (has_kernel("bwdd_f32_nhwc_s1_k3_host_c3x4")) CHECK(k == "bwdd_f32_nhwc_s1_k3_host_c3x4");
    CHECK(k.find("_s1_k3_") != std::string::npos);

    p.stride_h = p.stride_w = 2;
    p.P = p.Q = 0;
    p = with_derived_output(p);
    CHECK(chosen(p, CONVBWD_BWD_WEIGHT).find("_s2_k3_") != std::string::npos);
}

TEST_CASE("the generic kernel takes what no class covers") {
    ConvProblem p{.N = 1, .C = 4, .H = 9, .W = 9, .K = 4, .R = 2, .S = 2, .stride_h = 3, .stride_w = 3,
                  .dtype = DType::BF16};
    p = with_derived_output(p);
    CHECK(chosen(p, CONVBWD_BWD_DATA).find("_any_any_") != std::string::npos);
    CHECK(chosen(p, CONVBWD_BWD_WEIGHT).find("_any_any_") != std::string::npos);
}

TEST_CASE("every problem of every suite has a kernel, and the chosen one matches the reference") {
    std::mt19937 rng(11);
    int n = 0;
    for (ConvProblem p : conformance_problems())
        for (DType t : {DType::F32, DType::F16, DType::BF16})
            for (Layout l : {Layout::NCHW, Layout::NHWC}) {
                p.dtype = t;
                p.layout = l;
                for (Direction d : {Direction::BwdData, Direction::BwdWeight}) {
                    if (++n % 7 != 0) continue;  // every direction/dtype/layout over a spread subset
                    CAPTURE(describe(p, d));
                    RunResult r = run_against_reference(p, d, "", rng);
                    REQUIRE_MESSAGE(r.status == CONVBWD_SUCCESS, r.error);
                    CHECK_MESSAGE(r.verify.ok, r.verify.first_bad);
                }
            }
    for (const ShapeEntry &e : load_shapes(shapes_dir() + "/resnet50.txt"))
        for (DType t : {DType::F32, DType::F16, DType::BF16})
            for (Layout l : {Layout::NCHW, Layout::NHWC}) {
                ConvProblem p = e.problem;
                p.dtype = t;
                p.layout = l;
                CHECK(!chosen(p, CONVBWD_BWD_DATA).empty());
                CHECK(!chosen(p, CONVBWD_BWD_WEIGHT).empty());
            }
}
}
