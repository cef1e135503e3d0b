// The one harness (common/harness.h) that the kernel tests, convbwd-driver and the tuner share:
// its peers, timing, supplied inputs and failures.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "common/harness.h"

namespace convbwd::test {

namespace {
ConvProblem strided_layer() {  // 3x3 stride 2 with padding: the scatter baseline's own class
    ConvProblem p;
    p.N = 2, p.C = 6, p.K = 8, p.H = 9, p.W = 11, p.R = p.S = 3;
    p.stride_h = p.stride_w = 2;
    p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 1;
    return with_derived_output(p);
}
}  // namespace

TEST_SUITE("harness") {
TEST_CASE("a verified, timed case with the scatter baseline as its peer") {
    std::mt19937 rng(7);
    RunSpec s;
    s.p = strided_layer();
    s.time = true, s.warmup = 1, s.iters = 3;
    s.peer = "scatter";
    RunResult r = run_case(s, rng);
    REQUIRE_MESSAGE(r.status == CONVBWD_SUCCESS, r.error);
    CHECK(!r.kernel.empty());
    CHECK(r.exact);
    CHECK_MESSAGE(r.verify.ok, r.verify.first_bad);
    CHECK(r.verify.max_ref > 0);
    CHECK(r.time_ms > 0);
    CHECK(r.buffer_sets == 3);  // small operands rotate among copies while timing
    CHECK_MESSAGE(r.peer.verified == 1, r.peer.note);
    CHECK(r.peer.note.find("_scatter_") == std::string::npos);  // the note names the kernel, not its family
    CHECK(r.peer.note.find("bwdd_f32_nchw") != std::string::npos);
    CHECK(r.peer.time_ms > 0);
    CHECK(r.ok(s));
}

TEST_CASE("a peer that cannot take the case says why and fails nothing") {
    std::mt19937 rng(8);
    RunSpec s;
    s.p = strided_layer();
    s.dir = Direction::BwdWeight;
    s.peer = "scatter";
    RunResult r = run_case(s, rng);
    REQUIRE_MESSAGE(r.status == CONVBWD_SUCCESS, r.error);
    CHECK(r.peer.verified == -1);
    CHECK(r.peer.note.find("backward-data only") != std::string::npos);
    CHECK(std::isnan(r.peer.time_ms));
    CHECK(r.ok(s));

    s.dir = Direction::BwdData, s.peer = "nonesuch";
    r = run_case(s, rng);
    CHECK(r.peer.note.find("unknown peer 'nonesuch'") != std::string::npos);

    s.peer = "scatter", s.alpha = 0.5f, s.beta = 1.0f;  // peers compute alpha 1, beta 0 only
    r = run_case(s, rng);
    REQUIRE_MESSAGE(r.status == CONVBWD_SUCCESS, r.error);
    CHECK_MESSAGE(r.verify.ok, r.verify.first_bad);  // alpha and beta enter the reference
    CHECK(!r.exact);
    CHECK(r.peer.note.find("alpha = 1, beta = 0") != std::string::npos);
}

#ifdef CONVBWD_WITH_ONEDNN
TEST_CASE("oneDNN as the peer: verified against the same reference, its primitive timed, and from the caller's layout") {
    std::mt19937 rng(9);
    for (Layout layout : {Layout::NCHW, Layout::NHWC})
        for (Direction d : {Direction::BwdData, Direction::BwdWeight}) {
            RunSpec s;
            s.p = strided_layer(), s.p.layout = layout, s.dir = d, s.peer = "onednn", s.time = true, s.iters = 3;
            RunResult r = run_case(s, rng);
            REQUIRE_MESSAGE(r.status == CONVBWD_SUCCESS, r.error);
            CHECK_MESSAGE(r.peer.verified == 1, r.peer.note);
            CHECK(r.peer.time_ms > 0);
            // The reorders in and out (none where oneDNN takes the caller's format) around the same
            // primitive: never less than the primitive's median alone.
            CHECK(r.peer.layout_time_ms >= r.peer.time_ms);
        }
}
#endif

TEST_CASE("supplied inputs are used as given and verified within a tolerance") {
    std::mt19937 rng(10);
    RunSpec s;
    s.p = strided_layer();
    HostTensor dy(dy_dims(s.p), s.p.dtype, s.p.layout), w(w_dims(s.p), s.p.dtype, s.p.layout);
    dy.fill_random_uniform(rng);
    w.fill_random_uniform(rng);
    s.a = &dy, s.b = &w;
    RunResult r = run_case(s, rng);
    REQUIRE_MESSAGE(r.status == CONVBWD_SUCCESS, r.error);
    CHECK(!r.exact);
    CHECK(r.verify.tol > 0);
    CHECK_MESSAGE(r.verify.ok, r.verify.first_bad);
    CHECK(r.a.storage == dy.storage);
    CHECK(r.b.storage == w.storage);
}

TEST_CASE("NaN inputs: NaN outputs where the reference is NaN pass, and nothing else changes") {
    std::mt19937 rng(12);
    RunSpec s;
    s.p = strided_layer();
    s.peer = "scatter";
    HostTensor dy(dy_dims(s.p), s.p.dtype, s.p.layout), w(w_dims(s.p), s.p.dtype, s.p.layout);
    dy.fill_random_ints(rng);
    w.fill_random_ints(rng);
    dy.set(0, 1, 2, 3, std::nanf(""));  // spreads to the dx elements its taps reach
    s.a = &dy, s.b = &w;
    RunResult r = run_case(s, rng);
    REQUIRE_MESSAGE(r.status == CONVBWD_SUCCESS, r.error);
    CHECK_MESSAGE(r.verify.ok, r.verify.first_bad);
    CHECK(r.verify.unwritten == 0);
    CHECK(std::isfinite(r.verify.max_ref));
    int64_t nans = 0;
    for (float v : r.out.to_logical()) nans += std::isnan(v);
    CHECK(nans > 0);
    // Peers are held to a tolerance (never bit for bit), and say which.
    CHECK_MESSAGE(r.peer.verified == 1, r.peer.note);
    CHECK(r.peer.note.find("within") != std::string::npos);
    // A wrong value where the reference is NaN still fails: verify_output itself.
    std::vector<double> ref(r.out.size(), std::nan(""));
    HostTensor finite = r.out;
    finite.from_logical(std::vector<float>(r.out.size(), 1.0f));
    CHECK_FALSE(verify_output(finite, ref, 9, true).ok);
}

TEST_CASE("without a reference, a peer is held to its own rounding against convbwd's output") {
    // The rows of a run without the reference (convbwd-driver -V 0): the peer's output against convbwd's.
    std::mt19937 rng(13);
    RunSpec s;
    s.p = strided_layer();
    s.peer = "scatter", s.verify = false;
    RunResult r = run_case(s, rng);
    REQUIRE_MESSAGE(r.status == CONVBWD_SUCCESS, r.error);
    CHECK_MESSAGE(r.peer.verified == 1, r.peer.note);
    CHECK(r.peer.note.find("agrees with convbwd") != std::string::npos);
    // The bound is the peer's model, as against the reference: one bf16 unit apart at 272 (a
    // Winograd peer's rounding, 3x3 x 128 channels summed) is within it, not within the default's.
    HostTensor peer_out({1, 1, 1, 2}, DType::BF16, Layout::NCHW);
    peer_out.from_logical({-274.0f, 1.0f});
    const std::vector<double> mine = {-272.0, 1.0};
    const int64_t n_acc = 9 * 128;
    const ErrorModel winograd = peer_error_model(n_acc, kTransformErrorScale, "winograd");
    CHECK_FALSE(verify_output(peer_out, mine, n_acc, false).ok);
    CHECK(verify_output(peer_out, mine, n_acc, false, winograd).ok);
    // A wrong element is still wrong.
    peer_out.from_logical({-300.0f, 1.0f});
    CHECK_FALSE(verify_output(peer_out, mine, n_acc, false, winograd).ok);
}

TEST_CASE("failures before any number: unknown kernel, missing device") {
    std::mt19937 rng(11);
    RunSpec s;
    s.p = strided_layer();
    s.kernel = "bwdd_f32_nchw_no_such_kernel";
    RunResult r = run_case(s, rng);
    CHECK(r.status != CONVBWD_SUCCESS);
    CHECK(r.error.find("bwdd_f32_nchw_no_such_kernel") != std::string::npos);
    CHECK(!r.ok(s));
    CHECK(r.out.storage.empty());  // nothing allocated for a case that cannot run

    for (Device d : {Device::Cuda, Device::OpenCL, Device::AmdGpu}) {
        std::string why;
        if (gpu_device(d, &why)) continue;  // usable here: not this check
        CHECK(!why.empty());
        s.kernel.clear(), s.device = d;
        r = run_case(s, rng);
        CHECK(r.status == CONVBWD_NOT_SUPPORTED);
        CHECK_MESSAGE(r.error.find(std::string("no usable ") + to_string(d)) != std::string::npos, r.error);
    }
}
}

}  // namespace convbwd::test
