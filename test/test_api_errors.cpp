// Bad input gets its status and a message naming the field, and nothing is written.
#include <cmath>
#include <cstring>
#include <functional>

#include "conformance.h"

using namespace convbwd;
using namespace convbwd::test;

namespace {

struct Case {
    const char *what;
    convbwd_status status;
    const char *needle;  // must appear in convbwd_last_error()
};

// A valid problem and tensors; each case breaks one thing, calls both directions and checks
// the status, the message and that the output buffer is untouched.
struct Fixture {
    ConvProblem p;
    HostTensor x, dy, w;
    Fixture() {
        p = with_derived_output(ConvProblem{.N = 2, .C = 4, .H = 7, .W = 7, .K = 6, .R = 3, .S = 3, .G = 2,
                                            .pad_top = 1, .pad_bottom = 1, .pad_left = 1, .pad_right = 1});
        std::mt19937 rng(3);
        x = HostTensor(x_dims(p), p.dtype, p.layout);
        dy = HostTensor(dy_dims(p), p.dtype, p.layout);
        w = HostTensor(w_dims(p), p.dtype, p.layout);
        x.fill_random_ints(rng);
        dy.fill_random_ints(rng);
        w.fill_random_ints(rng);
    }
};

template <class Mutate>
void expect_error(Direction dir, convbwd_status want, const char *needle, Mutate mutate) {
    Fixture f;
    convbwd_problem cp = to_c(f.p);
    HostTensor out = dir == Direction::BwdData ? HostTensor(x_dims(f.p), f.p.dtype, f.p.layout)
                                               : HostTensor(w_dims(f.p), f.p.dtype, f.p.layout);
    std::memset(out.storage.data(), 0x5a, out.storage.size());
    const auto before = out.storage;
    convbwd_tensor a = dir == Direction::BwdData ? f.dy.desc() : f.x.desc();
    convbwd_tensor b = dir == Direction::BwdData ? f.w.desc() : f.dy.desc();
    convbwd_tensor o = out.desc();
    convbwd_tensor *pa = &a, *pb = &b, *po = &o;
    convbwd_problem *pp = &cp;
    convbwd_exec exec{};
    mutate(pp, pa, pb, po, exec);
    convbwd_status s = dir == Direction::BwdData ? convbwd_bwd_data(pp, pa, pb, po, 1.0f, 0.0f, &exec)
                                                 : convbwd_bwd_weight(pp, pa, pb, po, 1.0f, 0.0f, &exec);
    std::string msg = convbwd_last_error();
    CAPTURE(msg);
    CHECK(s == want);
    CHECK_MESSAGE(msg.find(needle) != std::string::npos, "message lacks '", std::string(needle), "'");
    CHECK(out.storage == before);  // nothing written
}

#define FIELD_CASE(status, needle, body)                                                                        \
    for (Direction d : {Direction::BwdData, Direction::BwdWeight})                                             \
        expect_error(d, status, needle,                                                                         \
                     [&](convbwd_problem *&p, convbwd_tensor *&a, convbwd_tensor *&b, convbwd_tensor *&o,       \
                         convbwd_exec &e) {                                                                     \
                         (void)p, (void)a, (void)b, (void)o, (void)e;                                           \
                         body;                                                                                  \
                     })

}  // namespace

TEST_SUITE("api") {
TEST_CASE("a valid call succeeds (the fixture is sound)") {
    for (Direction d : {Direction::BwdData, Direction::BwdWeight}) {
        Fixture f;
        std::mt19937 rng(1);
        RunResult r = run_against_reference(f.p, d, "", rng);
        CHECK(r.status == CONVBWD_SUCCESS);
        CHECK(r.verify.ok);
    }
}

TEST_CASE("zero or negative sizes name the field") {
    FIELD_CASE(CONVBWD_BAD_PARAM, "problem.n", p->n = 0);
    FIELD_CASE(CONVBWD_BAD_PARAM, "problem.c", p->c = -3);
    FIELD_CASE(CONVBWD_BAD_PARAM, "problem.h", p->h = 0);
    FIELD_CASE(CONVBWD_BAD_PARAM, "problem.w", p->w = -1);
    FIELD_CASE(CONVBWD_BAD_PARAM, "problem.k", p->k = 0);
    FIELD_CASE(CONVBWD_BAD_PARAM, "problem.r", p->r = 0);
    FIELD_CASE(CONVBWD_BAD_PARAM, "problem.s", p->s = -2);
    FIELD_CASE(CONVBWD_BAD_PARAM, "problem.pad_top", p->pad_top = -1);
    FIELD_CASE(CONVBWD_BAD_PARAM, "problem.pad_right", p->pad_right = -1);
}

TEST_CASE("stride 0 is refused") {
    FIELD_CASE(CONVBWD_BAD_PARAM, "problem.stride_h", p->stride_h = 0);
    FIELD_CASE(CONVBWD_BAD_PARAM, "problem.stride_w", p->stride_w = 0);
}

TEST_CASE("dilation 0 is refused") {
    FIELD_CASE(CONVBWD_BAD_PARAM, "problem.dilation_h", p->dilation_h = 0);
    FIELD_CASE(CONVBWD_BAD_PARAM, "problem.dilation_w", p->dilation_w = 0);
}

// A stride past the padded input leaves one output row, where the stride takes no part: such a
// problem is the one with stride = the padded extent. It was refused (after fuzz_problem found
// stride_w = 101058559 running the stride phases for minutes); PyTorch and cuDNN take it (a 1x1
// stride-2 layer on a 1x1 map), so it runs, at once, as the canonical problem, verified against
// the reference computed with the caller's stride.
TEST_CASE("a stride past the padded input runs as the equivalent problem") {
    for (Direction d : {Direction::BwdData, Direction::BwdWeight}) {
        Fixture f;  // 7x7, pad 1: padded extent 9
        std::mt19937 rng(5);
        ConvProblem p = f.p;
        p.stride_h = 10, p.stride_w = 101058559;
        p.P = p.Q = 0;
        p = with_derived_output(p);
        REQUIRE(p.P == 1);
        REQUIRE(p.Q == 1);
        RunResult r = run_against_reference(p, d, "", rng);
        CHECK_MESSAGE(r.status == CONVBWD_SUCCESS, r.error);
        CHECK(r.verify.ok);
        ConvProblem canon = p;
        canon.stride_h = canon.stride_w = 9;
        char key[256], canon_key[256];
        convbwd_problem cp = to_c(p), cc = to_c(canon);
        REQUIRE(convbwd_problem_key(&cp, to_c(d), CONVBWD_F32, CONVBWD_NCHW, nullptr, key, sizeof key) == CONVBWD_SUCCESS);
        REQUIRE(convbwd_problem_key(&cc, to_c(d), CONVBWD_F32, CONVBWD_NCHW, nullptr, canon_key, sizeof canon_key) ==
                CONVBWD_SUCCESS);
        CHECK(std::string(key) == canon_key);
    }
    // A 1x1 map with a 1x1 stride-2 filter (padded extent 1): the stride-1 problem.
    ConvProblem one = with_derived_output(ConvProblem{.N = 2, .C = 8, .H = 1, .W = 1, .K = 4, .R = 1, .S = 1,
                                                      .stride_h = 2, .stride_w = 2});
    std::mt19937 rng(6);
    for (Direction d : {Direction::BwdData, Direction::BwdWeight}) {
        RunResult r = run_against_reference(one, d, "", rng);
        CHECK_MESSAGE(r.status == CONVBWD_SUCCESS, r.error);
        CHECK(r.verify.ok);
    }
}

TEST_CASE("groups must divide C and K") {
    FIELD_CASE(CONVBWD_BAD_PARAM, "problem.groups", p->groups = 0);
    FIELD_CASE(CONVBWD_BAD_PARAM, "does not divide problem.c", p->groups = 3);  // C = 4
    FIELD_CASE(CONVBWD_BAD_PARAM, "does not divide problem.k", (p->groups = 4, p->k = 6));
}

TEST_CASE("a filter larger than the padded input is refused") {
    FIELD_CASE(CONVBWD_BAD_PARAM, "problem.r", (p->r = 10, p->p = 0));
    FIELD_CASE(CONVBWD_BAD_PARAM, "problem.s", (p->dilation_w = 5, p->q = 0));
}

TEST_CASE("dy size inconsistent with dx size") {
    FIELD_CASE(CONVBWD_BAD_PARAM, "problem.p", p->p = 8);
    FIELD_CASE(CONVBWD_BAD_PARAM, "problem.q", p->q = 3);
}

TEST_CASE("null pointers") {
    FIELD_CASE(CONVBWD_NULL_POINTER, "problem is NULL", p = nullptr);
    FIELD_CASE(CONVBWD_NULL_POINTER, ".data is NULL", a->data = nullptr);
    FIELD_CASE(CONVBWD_NULL_POINTER, "is NULL", b = nullptr);
    FIELD_CASE(CONVBWD_NULL_POINTER, ".data is NULL", o->data = nullptr);
}

TEST_CASE("unsupported dtype, layout, strides, target") {
    FIELD_CASE(CONVBWD_NOT_SUPPORTED, ".dtype = 9", a->dtype = (convbwd_dtype)9);
    FIELD_CASE(CONVBWD_NOT_SUPPORTED, ".layout = 5", o->layout = (convbwd_layout)5);
    FIELD_CASE(CONVBWD_NOT_SUPPORTED, "mixed dtypes", b->dtype = CONVBWD_F16);
    FIELD_CASE(CONVBWD_NOT_SUPPORTED, "differs", o->layout = CONVBWD_NHWC);
    FIELD_CASE(CONVBWD_NOT_SUPPORTED, "must be 1 for layout nchw", (a->strides[0] = 1000, a->strides[1] = 100,
                                                                   a->strides[2] = 10, a->strides[3] = 2));
    FIELD_CASE(CONVBWD_BAD_PARAM, "strides[2]", (a->strides[0] = 1000, a->strides[1] = 100, a->strides[2] = -10,
                                                 a->strides[3] = 1));
    FIELD_CASE(CONVBWD_BAD_PARAM, "exec.target = 42", e.target = (convbwd_target)42);
    FIELD_CASE(CONVBWD_NO_KERNEL, "exec.kernel = nope", e.kernel = "nope");
    FIELD_CASE(CONVBWD_NO_KERNEL, "cannot implement", e.kernel = "bwdd_f32_nhwc_any_any_host_c1x4p");  // layout differs
}

TEST_CASE("a null or short workspace is refused (backward-weight)") {
    auto bad_ws = [](void *ws, size_t bytes, const char *needle) {
        expect_error(Direction::BwdWeight, CONVBWD_BAD_WORKSPACE, needle,
                     [&](convbwd_problem *&, convbwd_tensor *&, convbwd_tensor *&, convbwd_tensor *&, convbwd_exec &e) {
                         e.workspace = ws;
                         e.workspace_bytes = bytes;
                     });
    };
    std::vector<float> small(4);
    bad_ws(nullptr, 0, "exec.workspace is NULL");
    bad_ws(small.data(), small.size() * sizeof(float), "exec.workspace_bytes = 16 is less than");
    Fixture f;
    convbwd_problem cp = to_c(f.p);
    size_t bytes = 0;
    REQUIRE(convbwd_workspace_size(&cp, CONVBWD_BWD_WEIGHT, CONVBWD_F32, CONVBWD_NCHW, nullptr, &bytes) == CONVBWD_SUCCESS);
    CHECK(bytes >= (size_t)f.p.K * (f.p.C / f.p.G) * f.p.R * f.p.S * sizeof(float));  // at least one f32 partial
    REQUIRE(convbwd_workspace_size(&cp, CONVBWD_BWD_DATA, CONVBWD_F32, CONVBWD_NCHW, nullptr, &bytes) == CONVBWD_SUCCESS);
    CHECK(bytes == 0);
}

TEST_CASE("sizes whose product overflows") {
    FIELD_CASE(CONVBWD_NOT_SUPPORTED, "2^31-1 bytes", (p->n = 100000, p->c = 100000, p->k = 100000));
    FIELD_CASE(CONVBWD_BAD_PARAM, "overflows", (p->h = 2000000000, p->w = 2000000000, p->p = 0, p->q = 0));
}

// Issue 18, item 2: sizes overflowed int32 in the P, Q formula (P = 2^32 + 5 stored as 5, SUCCESS,
// zeros written) or reached Halide and came back with its text or none.
TEST_CASE("padding and dilation whose sums overflow int32 name the field (issue 18)") {
    FIELD_CASE(CONVBWD_BAD_PARAM, "problem.pad_bottom = 2147483647: padded input height 4294967301",
               (p->pad_top = INT32_MAX, p->pad_bottom = INT32_MAX, p->p = 0));
    FIELD_CASE(CONVBWD_BAD_PARAM, "problem.pad_bottom = 2147483647: padded input height",
               (p->h = 1, p->pad_top = INT32_MAX, p->pad_bottom = INT32_MAX, p->p = 0));
    FIELD_CASE(CONVBWD_BAD_PARAM, "problem.pad_bottom = 2147483641: padded input height 2147483649 (",
               (p->pad_bottom = INT32_MAX - 6, p->p = 0));
    FIELD_CASE(CONVBWD_BAD_PARAM, "problem.pad_left = 2147483647: padded input width",
               (p->pad_left = INT32_MAX, p->pad_right = 0, p->q = 0));
    FIELD_CASE(CONVBWD_BAD_PARAM, "problem.dilation_w = 2147483647: dilated filter width 4294967295",
               (p->dilation_w = INT32_MAX, p->q = 0));
    // The largest padding that fits: a valid geometry, refused only for its tensor sizes.
    FIELD_CASE(CONVBWD_NOT_SUPPORTED, "dy: problem.n * k * p * q",
               (p->pad_bottom = INT32_MAX - 8, p->p = 0));
}

// Issue 18, item 3: a stride whose span wrapped around int64 passed the span check and was cut
// to int32 (SUCCESS); an output whose strides overlap was accepted.
TEST_CASE("strides whose span overflows, or that do not fit int32, or that overlap an output, are refused (issue 18)") {
    const int64_t huge = (int64_t{1} << 62) + 1;
    FIELD_CASE(CONVBWD_BAD_PARAM, ".strides[2] (", (o->strides[0] = 1000, o->strides[1] = 100, o->strides[2] = huge,
                                                    o->strides[3] = 1));
    FIELD_CASE(CONVBWD_BAD_PARAM, "= 4611686018427387905: the tensor's span",
               (o->strides[0] = 1000, o->strides[1] = 100, o->strides[2] = huge, o->strides[3] = 1));
    FIELD_CASE(CONVBWD_BAD_PARAM, "= 4611686018427387905: the tensor's span",
               (a->strides[0] = 1000, a->strides[1] = 100, a->strides[2] = huge, a->strides[3] = 1));
    FIELD_CASE(CONVBWD_NOT_SUPPORTED, ".strides[0] (", (o->strides[0] = int64_t{1} << 40, o->strides[1] = 100,
                                                        o->strides[2] = 10, o->strides[3] = 1));
    FIELD_CASE(CONVBWD_BAD_PARAM, "the output's elements overlap",
               (o->strides[0] = 1, o->strides[1] = 1, o->strides[2] = 1, o->strides[3] = 1));
    // Rows that overlap the next row (H stride 3 < W = 7 for dx, 3 x 3 taps for dw: 2 < 3).
    FIELD_CASE(CONVBWD_BAD_PARAM, "the output's elements overlap",
               (o->strides[0] = 10000, o->strides[1] = 1000, o->strides[2] = 2, o->strides[3] = 1));
    // Inputs may overlap (they are only read): dy with every stride 1 runs.
    Fixture f;
    convbwd_problem cp = to_c(f.p);
    HostTensor dx(x_dims(f.p), f.p.dtype, f.p.layout);
    convbwd_tensor a = f.dy.desc(), b = f.w.desc(), o = dx.desc();
    a.strides[0] = a.strides[1] = a.strides[2] = a.strides[3] = 1;
    CHECK_MESSAGE(convbwd_bwd_data(&cp, &a, &b, &o, 1.0f, 0.0f, nullptr) == CONVBWD_SUCCESS, convbwd_last_error());
    // A nested output with gaps (padded rows and planes) is accepted.
    o.strides[3] = 1, o.strides[2] = f.p.W + 1, o.strides[1] = (f.p.W + 1) * (f.p.H + 2),
    o.strides[0] = o.strides[1] * f.p.C + 5;
    std::vector<float> big((size_t)(o.strides[0] * f.p.N));
    o.data = big.data();
    CHECK_MESSAGE(convbwd_bwd_data(&cp, &a, &b, &o, 1.0f, 0.0f, nullptr) == CONVBWD_SUCCESS, convbwd_last_error());
}

// Issue 18, items 1 and 6: the queries validate sizes as the calls do; a stride of 0 is named.
TEST_CASE("convbwd_select_kernel, convbwd_workspace_size and convbwd_problem_key validate sizes too (issue 18)") {
    struct {
        const char *what;
        convbwd_problem p;
        convbwd_dtype dtype;
        convbwd_direction dir;
        convbwd_status want;
        const char *needle;
    } cases[] = {
        {"x over 2^31-1 bytes", to_c(with_derived_output(ConvProblem{.N = 1000000, .C = 1000, .H = 8, .W = 8, .K = 4})),
         CONVBWD_F32, CONVBWD_BWD_DATA, CONVBWD_NOT_SUPPORTED, "dx: problem.n * c * h * w = 1000000 * 1000 * 8 * 8"},
        {"x elements overflow int64",
         to_c(with_derived_output(ConvProblem{.N = 1000000000, .C = 1000000000, .H = 8, .W = 8, .K = 4})), CONVBWD_F32,
         CONVBWD_BWD_WEIGHT, CONVBWD_BAD_PARAM, "x: problem.n * c * h * w = 1000000000 * 1000000000 * 8 * 8 elements overflows int64"},
        {"dy over 2^31-1 bytes",
         to_c(ConvProblem{.N = 1, .C = 1, .H = 1, .W = 1, .K = 4, .pad_top = 1000000000, .pad_bottom = 1000000000}),
         CONVBWD_F16, CONVBWD_BWD_DATA, CONVBWD_NOT_SUPPORTED, "dy: problem.n * k * p * q"},
        // w fits in f16 (2^30 bytes), its f32 partial sums (2^31 bytes) do not.
        {"dw's f32 partials over 2^31-1 bytes",
         to_c(with_derived_output(ConvProblem{.N = 1, .C = 16384, .H = 1, .W = 1, .K = 32768})), CONVBWD_F16,
         CONVBWD_BWD_WEIGHT, CONVBWD_NOT_SUPPORTED, "the f32 partial sums of dw"},
        {"padding overflows", to_c(with_derived_output(ConvProblem{.N = 1, .C = 1, .H = 7, .W = 7, .K = 1})),
         CONVBWD_F32, CONVBWD_BWD_DATA, CONVBWD_BAD_PARAM, "problem.pad_bottom = 2147483647"},
        {"stride 0 with a filter that fits", to_c(with_derived_output(ConvProblem{.N = 1, .C = 1, .H = 7, .W = 7, .K = 1,
                                                                                .R = 3, .S = 3})),
         CONVBWD_F32, CONVBWD_BWD_DATA, CONVBWD_BAD_PARAM, "problem.stride_h = 0 must be >= 1"},
    };
    cases[4].p.pad_top = cases[4].p.pad_bottom = INT32_MAX, cases[4].p.p = 0;
    cases[5].p.stride_h = 0, cases[5].p.p = 0;
    for (const auto &c : cases) {
        CAPTURE(c.what);
        const char *name = nullptr;
        size_t bytes = 0;
        char key[256];
        convbwd_status got[3] = {
            convbwd_select_kernel(&c.p, c.dir, c.dtype, CONVBWD_NCHW, nullptr, &name),
            convbwd_workspace_size(&c.p, c.dir, c.dtype, CONVBWD_NCHW, nullptr, &bytes),
            convbwd_problem_key(&c.p, c.dir, c.dtype, CONVBWD_NCHW, nullptr, key, sizeof key),
        };
        for (convbwd_status s : got) CHECK(s == c.want);
        const std::string msg = convbwd_last_error();
        CAPTURE(msg);
        CHECK(msg.find(c.needle) != std::string::npos);
    }
    // The same problem with w's partial sums in range: only backward-weight is refused for them.
    const convbwd_problem big_w = cases[3].p;
    const char *name = nullptr;
    convbwd_status s = convbwd_select_kernel(&big_w, CONVBWD_BWD_DATA, CONVBWD_F16, CONVBWD_NCHW, nullptr, &name);
    CHECK((s == CONVBWD_SUCCESS || s == CONVBWD_NO_KERNEL));
}

TEST_CASE("strided (non-packed) tensors work") {
    // dx with padded rows: W stride 1, H stride W + 3.
    Fixture f;
    std::mt19937 rng(5);
    const int64_t hs = f.p.W + 3, cs = hs * f.p.H, ns = cs * f.p.C;
    std::vector<float> dx((size_t)(ns * f.p.N), std::nanf(""));
    convbwd_problem cp = to_c(f.p);
    convbwd_tensor a = f.dy.desc(), b = f.w.desc();
    convbwd_tensor o{dx.data(), CONVBWD_F32, CONVBWD_NCHW, {ns, cs, hs, 1}};
    REQUIRE(convbwd_bwd_data(&cp, &a, &b, &o, 1.0f, 0.0f, nullptr) == CONVBWD_SUCCESS);
    std::vector<double> ref = ref_bwd_data(f.p, f.dy.to_logical(), f.w.to_logical());
    int64_t bad = 0, pad_written = 0;
    for (int n = 0; n < f.p.N; n++)
        for (int c = 0; c < f.p.C; c++)
            for (int h = 0; h < f.p.H; h++) {
                for (int x = 0; x < f.p.W; x++)
                    bad += dx[n * ns + c * cs + h * hs + x] != ref[(((size_t)n * f.p.C + c) * f.p.H + h) * f.p.W + x];
                for (int x = f.p.W; x < hs; x++) pad_written += !std::isnan(dx[n * ns + c * cs + h * hs + x]);
            }
    CHECK(bad == 0);
    CHECK(pad_written == 0);  // the gaps between rows are not ours to write
}

// Issue 18, item 9: convbwd_last_error() was cleared by some successful calls and not others.
// The rule (convbwd.h): every call that returns a status sets it on failure (never to "") and
// clears it on success; kernel_count, status_string and last_error leave it as it is.
TEST_CASE("convbwd_last_error: set by every failing call, cleared by every successful one (issue 18)") {
    Fixture f;
    convbwd_problem cp = to_c(f.p);
    HostTensor dx(x_dims(f.p), f.p.dtype, f.p.layout), dw(w_dims(f.p), f.p.dtype, f.p.layout);
    const convbwd_tensor tx = f.x.desc(), tdy = f.dy.desc(), tw = f.w.desc(), tdx = dx.desc(), tdw = dw.desc();
    const char *name = nullptr;
    size_t bytes = 0;
    char key[256];
    convbwd_kernel_desc desc;
    convbwd_problem bad = cp;
    bad.stride_w = 0;
    struct Call {
        const char *what;
        std::function<convbwd_status()> ok, failing;
    } calls[] = {
        {"convbwd_bwd_data", [&] { return convbwd_bwd_data(&cp, &tdy, &tw, &tdx, 1.0f, 0.0f, nullptr); },
         [&] { return convbwd_bwd_data(&bad, &tdy, &tw, &tdx, 1.0f, 0.0f, nullptr); }},
        {"convbwd_bwd_weight", [&] { return convbwd_bwd_weight(&cp, &tx, &tdy, &tdw, 1.0f, 0.0f, nullptr); },
         [&] { return convbwd_bwd_weight(&cp, &tx, &tdy, nullptr, 1.0f, 0.0f, nullptr); }},
        {"convbwd_select_kernel",
         [&] { return convbwd_select_kernel(&cp, CONVBWD_BWD_DATA, CONVBWD_F32, CONVBWD_NCHW, nullptr, &name); },
         [&] { return convbwd_select_kernel(&bad, CONVBWD_BWD_DATA, CONVBWD_F32, CONVBWD_NCHW, nullptr, &name); }},
        {"convbwd_workspace_size",
         [&] { return convbwd_workspace_size(&cp, CONVBWD_BWD_WEIGHT, CONVBWD_F32, CONVBWD_NCHW, nullptr, &bytes); },
         [&] { return convbwd_workspace_size(&cp, CONVBWD_BWD_WEIGHT, CONVBWD_F32, CONVBWD_NCHW, nullptr, nullptr); }},
        {"convbwd_problem_key",
         [&] { return convbwd_problem_key(&cp, CONVBWD_BWD_DATA, CONVBWD_F32, CONVBWD_NCHW, nullptr, key, sizeof key); },
         [&] { return convbwd_problem_key(&cp, CONVBWD_BWD_DATA, CONVBWD_F32, CONVBWD_NCHW, nullptr, key, 4); }},
        {"convbwd_load_tuning_db", [&] { return convbwd_load_tuning_db(nullptr); },
         [&] { return convbwd_load_tuning_db("/nonexistent/convbwd.db"); }},
        {"convbwd_kernel_info", [&] { return convbwd_kernel_info(0, &desc); },
         [&] { return convbwd_kernel_info(convbwd_kernel_count(), &desc); }},
    };
    for (const Call &c : calls) {
        CAPTURE(c.what);
        // A success after another call's failure clears the message.
        REQUIRE(convbwd_kernel_info(-1, &desc) == CONVBWD_BAD_PARAM);
        REQUIRE(std::string(convbwd_last_error()) != "");
        CHECK_MESSAGE(c.ok() == CONVBWD_SUCCESS, convbwd_last_error());
        CHECK(std::string(convbwd_last_error()) == "");
        // A failure after a success sets a message, never an empty one.
        CHECK(c.failing() != CONVBWD_SUCCESS);
        const std::string msg = convbwd_last_error();
        CAPTURE(msg);
        CHECK(msg != "");
        // The calls without a status leave it as it is.
        CHECK(convbwd_kernel_count() > 0);
        CHECK(std::string(convbwd_status_string(CONVBWD_BAD_PARAM)) == "bad parameter");
        CHECK(std::string(convbwd_last_error()) == msg);
        // Two successes in a row: still "".
        CHECK(c.ok() == CONVBWD_SUCCESS);
        CHECK(c.ok() == CONVBWD_SUCCESS);
        CHECK(std::string(convbwd_last_error()) == "");
    }
}

TEST_CASE("kernel info and status strings") {
    CHECK(convbwd_kernel_count() > 0);
    convbwd_kernel_desc d;
    CHECK(convbwd_kernel_info(-1, &d) == CONVBWD_BAD_PARAM);
    CHECK(std::string(convbwd_last_error()).find("index = -1") != std::string::npos);
    CHECK(convbwd_kernel_info(0, nullptr) == CONVBWD_NULL_POINTER);
    CHECK(std::string(convbwd_status_string(CONVBWD_BAD_WORKSPACE)) == "bad workspace");
    size_t bytes = 1;
    convbwd_problem cp = to_c(Fixture().p);
    CHECK(convbwd_workspace_size(&cp, CONVBWD_BWD_WEIGHT, CONVBWD_F32, CONVBWD_NCHW, nullptr, &bytes) == CONVBWD_SUCCESS);
    CHECK(convbwd_workspace_size(&cp, (convbwd_direction)3, CONVBWD_F32, CONVBWD_NCHW, nullptr, &bytes) == CONVBWD_BAD_PARAM);
}
}
