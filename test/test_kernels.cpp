// Every kernel in the registry against the reference over the conformance sweep, one test case
// per kernel (doctest -tc=<kernel name or glob>).
#include "conformance.h"

using namespace convbwd;
using namespace convbwd::test;

namespace {

void check_kernel(const char *name, Direction dir, DType dtype, Layout layout, Device device) {
    std::string why;
    if (!device_usable(device, &why)) {
        MESSAGE("[SKIP] ", std::string(name), ": ", why);
        return;
    }
    static const std::vector<ConvProblem> problems = conformance_problems();
    std::mt19937 rng(std::hash<std::string>{}(name));
    int tested = 0;
    for (ConvProblem p : problems) {
        p.dtype = dtype;
        p.layout = layout;
        convbwd_problem cp = to_c(p);
        convbwd_exec exec{};
        exec.kernel = name;
        exec.target = target_of(device);
        const char *chosen = nullptr;
        if (convbwd_select_kernel(&cp, dir == Direction::BwdData ? CONVBWD_BWD_DATA : CONVBWD_BWD_WEIGHT, to_c(dtype),
                                  to_c(layout), &exec, &chosen) != CONVBWD_SUCCESS)
            continue;  // outside the kernel's class (CUTLASS routing)
        CAPTURE(describe(p, dir));
        RunResult r = run_against_reference(p, dir, name, rng, 1.0f, 0.0f, device);
        REQUIRE_MESSAGE(r.status == CONVBWD_SUCCESS, r.error);
        CHECK_MESSAGE(r.verify.unwritten == 0, r.verify.unwritten, " elements not written; ", r.verify.first_bad);
        CHECK_MESSAGE(r.verify.ok, r.verify.mismatches, " mismatches, first ", r.verify.first_bad);
        CHECK(r.verify.max_ref > 0);  // guard: the reference is not all zeros
        tested++;
    }
    CHECK_MESSAGE(tested > 0, "no problem of the sweep reached ", std::string(name));
    MESSAGE(std::string(name), ": ", tested, " problems");
}

}  // namespace

TEST_SUITE("kernels") {
#define CONVBWD_KERNEL(name, dir, dtype, layout, stride, filter, on, sched, role) \
    TEST_CASE(#name) { check_kernel(#name, Direction::dir, DType::dtype, Layout::layout, Device::on); }
#include "kernel_list.inc"
#undef CONVBWD_KERNEL

TEST_CASE("alpha and beta: out = alpha * result + beta * out") {
    std::mt19937 rng(7);
    for (Layout l : {Layout::NCHW, Layout::NHWC})
        for (DType t : {DType::F32, DType::F16, DType::BF16})
            for (Direction d : {Direction::BwdData, Direction::BwdWeight}) {
                ConvProblem p{.N = 2, .C = 8, .H = 9, .W = 7, .K = 6, .R = 3, .S = 3, .G = 2, .pad_top = 1,
                              .pad_bottom = 1, .pad_left = 1, .pad_right = 1, .dtype = t, .layout = l};
                p = with_derived_output(p);
                CAPTURE(describe(p, d));
                RunResult r = run_against_reference(p, d, "", rng, 0.5f, -2.0f);
                REQUIRE_MESSAGE(r.status == CONVBWD_SUCCESS, r.error);
                CHECK_MESSAGE(r.verify.ok, r.verify.first_bad);
            }
}
}
