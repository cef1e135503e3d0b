// oneDNN as a second oracle: the library (C API, dispatch) and OnednnPeer on the same problem and
// the same random small-integer data must agree (exactly in f32, within the verify tolerance in
// bf16), and the peer itself must agree with the naive reference. Cases oneDNN refuses (a dtype
// this CPU has no implementation for) are reported with [SKIP] and counted; f32 must never be.
#include <cstring>

#include "common/onednn_peer.h"
#include "conformance.h"

using namespace convbwd;
using namespace convbwd::test;

namespace {

// Every 4th problem of the conformance sweep, plus two ResNet-50-like layers scaled down.
const std::vector<ConvProblem> &onednn_problems() {
    static const std::vector<ConvProblem> problems = [] {
        std::vector<ConvProblem> all = conformance_problems(), out;
        for (size_t i = 0; i < all.size(); i += 4) out.push_back(with_derived_output(all[i]));
        ConvProblem r3;  // a res4 3x3 at N=2
        r3.N = 2, r3.C = 64, r3.H = 14, r3.W = 14, r3.K = 64, r3.R = r3.S = 3;
        r3.pad_top = r3.pad_bottom = r3.pad_left = r3.pad_right = 1;
        out.push_back(with_derived_output(r3));
        ConvProblem ds;  // a stride-2 1x1 projection shortcut
        ds.N = 2, ds.C = 64, ds.H = 14, ds.W = 14, ds.K = 128, ds.R = ds.S = 1, ds.stride_h = ds.stride_w = 2;
        out.push_back(with_derived_output(ds));
        return out;
    }();
    return problems;
}

struct Tensors {
    HostTensor a, b, out_lib, out_peer;
};

Tensors make_tensors(const ConvProblem &p, Direction dir) {
    Tensors t;
    if (dir == Direction::BwdData) {
        t.a = HostTensor(dy_dims(p), p.dtype, p.layout);
        t.b = HostTensor(w_dims(p), p.dtype, p.layout);
        t.out_lib = HostTensor(x_dims(p), p.dtype, p.layout);
    } else {
        t.a = HostTensor(x_dims(p), p.dtype, p.layout);
        t.b = HostTensor(dy_dims(p), p.dtype, p.layout);
        t.out_lib = HostTensor(w_dims(p), p.dtype, p.layout);
    }
    t.out_peer = t.out_lib;
    return t;
}

std::vector<double> as_double(const HostTensor &t) {
    std::vector<float> f = t.to_logical();
    return std::vector<double>(f.begin(), f.end());
}

// One problem in one direction: false if oneDNN refused it (*why says why).
bool check_one(ConvProblem p, Direction dir, std::mt19937 &rng, std::string *why) {
    OnednnPeer peer(p, dir);
    if (!peer.ok()) {
        *why = peer.why();
        CHECK_MESSAGE(!why->empty(), "a refusal must say why");
        return false;
    }
    Tensors t = make_tensors(p, dir);
    std::vector<double> ref;
    for (int attempt = 0; attempt < 8; attempt++) {  // redraw if the reference is all zeros
        t.a.fill_random_ints(rng);
        t.b.fill_random_ints(rng);
        ref = dir == Direction::BwdData ? ref_bwd_data(p, t.a.to_logical(), t.b.to_logical())
                                        : ref_bwd_weight(p, t.a.to_logical(), t.b.to_logical());
        if (std::any_of(ref.begin(), ref.end(), [](double v) { return v != 0; })) break;
    }
    REQUIRE(std::any_of(ref.begin(), ref.end(), [](double v) { return v != 0; }));
    const int64_t n_acc = dir == Direction::BwdData ? (int64_t)p.K / p.G * p.R * p.S : (int64_t)p.N * p.P * p.Q;
    const bool exact = p.dtype == DType::F32;  // small integers: every partial sum is exact in f32

    // (b) the peer, against the reference.
    t.out_peer.fill_nan();
    REQUIRE_MESSAGE(peer.run(t.a, t.b, t.out_peer), peer.why());
    VerifyResult vp = verify_output(t.out_peer, ref, n_acc, exact);
    CHECK_MESSAGE(vp.unwritten == 0, "oneDNN left ", vp.unwritten, " elements unwritten; ", vp.first_bad);
    CHECK_MESSAGE(vp.ok, "oneDNN vs reference: ", vp.mismatches, " mismatches, first ", vp.first_bad);

    // run() again into a fresh poison: repeatable (the driver times it) and bit-identical.
    HostTensor again = t.out_peer;
    again.fill_nan();
    REQUIRE_MESSAGE(peer.run(t.a, t.b, again), peer.why());
    CHECK_MESSAGE(std::memcmp(again.storage.data(), t.out_peer.storage.data(), again.storage.size()) == 0,
                  "a second oneDNN run gave different bits");

    // (a) the library through the C API with dispatch (exec = NULL), into NaN poison.
    t.out_lib.fill_nan();
    convbwd_problem cp = to_c(p);
    convbwd_tensor ta = t.a.desc(), tb = t.b.desc(), to = t.out_lib.desc();
    convbwd_status st = dir == Direction::BwdData ? convbwd_bwd_data(&cp, &ta, &tb, &to, 1.0f, 0.0f, nullptr)
                                                  : convbwd_bwd_weight(&cp, &ta, &tb, &to, 1.0f, 0.0f, nullptr);
    REQUIRE_MESSAGE(st == CONVBWD_SUCCESS, "library: status ", (int)st, ": ", convbwd_last_error());

    // The library against oneDNN's output (exact in f32, the verify tolerance in bf16).
    VerifyResult vl = verify_output(t.out_lib, as_double(t.out_peer), n_acc, exact);
    CHECK_MESSAGE(vl.unwritten == 0, "library left ", vl.unwritten, " elements unwritten; ", vl.first_bad);
    CHECK_MESSAGE(vl.ok, "library vs oneDNN: ", vl.mismatches, " mismatches (max err ", vl.max_err, ", tol ", vl.tol,
                  "), first ", vl.first_bad);
    return true;
}

// Every problem of the subset in one direction, dtype and layout; returns the number refused.
int check_group(Direction dir, DType dtype, Layout layout) {
    const std::string group = std::string(to_string(dir)) + " " + to_string(dtype) + " " + to_string(layout);
    std::mt19937 rng(std::hash<std::string>{}(group));
    int ran = 0;
    std::vector<std::pair<std::string, std::string>> refused;  // problem, why
    for (ConvProblem p : onednn_problems()) {
        p.dtype = dtype;
        p.layout = layout;
        const std::string d = describe(p, dir);
        CAPTURE(d);
        std::string why;
        if (check_one(p, dir, rng, &why))
            ran++;
        else
            refused.emplace_back(d, why);
    }
    // One [SKIP] line per refused case, unless oneDNN refuses wholesale (a dtype this CPU lacks):
    // then the first one and a count.
    const size_t shown = refused.size() <= 8 ? refused.size() : 1;
    for (size_t i = 0; i < shown; i++) MESSAGE("[SKIP] oneDNN refused ", refused[i].first, ": ", refused[i].second);
    if (shown < refused.size())
        MESSAGE("[SKIP] ", group, ": oneDNN refused ", refused.size(), " of ", refused.size() + ran,
                " cases (first reason above)");
    MESSAGE(group, ": ", ran, " cases checked against the library and the reference, ", refused.size(), " refused");
    return (int)refused.size();
}

}  // namespace

TEST_SUITE("onednn") {
TEST_CASE("f32: library == oneDNN == reference") {
    REQUIRE(onednn_problems().size() > 20);
    for (Direction d : {Direction::BwdData, Direction::BwdWeight})
        for (Layout l : {Layout::NCHW, Layout::NHWC}) {
            const std::string dir_name = to_string(d), layout_name = to_string(l);
            CAPTURE(dir_name);
            CAPTURE(layout_name);
            CHECK_MESSAGE(check_group(d, DType::F32, l) == 0, "oneDNN must run every f32 case");
        }
}

TEST_CASE("bf16: library ~ oneDNN ~ reference, where oneDNN has bf16") {
    int refused = 0;
    for (Direction d : {Direction::BwdData, Direction::BwdWeight})
        for (Layout l : {Layout::NCHW, Layout::NHWC}) refused += check_group(d, DType::BF16, l);
    MESSAGE("bf16: ", refused, " cases refused by oneDNN in all");
}

TEST_CASE("the peer refuses cleanly and checks its arguments") {
    ConvProblem p{.N = 1, .C = 4, .H = 5, .W = 5, .K = 4, .R = 3, .S = 3};
    p = with_derived_output(p);
    for (DType t : {DType::F16, DType::BF16})
        for (Direction d : {Direction::BwdData, Direction::BwdWeight}) {
            ConvProblem q = p;
            q.dtype = t;
            OnednnPeer peer(q, d);  // may or may not be implemented here; never crashes
            CAPTURE(describe(q, d));
            if (!peer.ok()) {
                CHECK(!peer.why().empty());
                Tensors ts = make_tensors(q, d);
                CHECK_FALSE(peer.run(ts.a, ts.b, ts.out_peer));
                MESSAGE("oneDNN refuses ", std::string(to_string(d)), " ", std::string(to_string(t)), ": ", peer.why());
            }
        }
    ConvProblem bad = p;
    bad.P = p.P + 1;  // inconsistent with the forward formula
    OnednnPeer refused(bad, Direction::BwdData);
    CHECK_FALSE(refused.ok());
    CHECK(!refused.why().empty());

    OnednnPeer peer(p, Direction::BwdData);
    REQUIRE_MESSAGE(peer.ok(), peer.why());
    Tensors ts = make_tensors(p, Direction::BwdData);
    HostTensor wrong(x_dims(p), p.dtype, p.layout);  // x where w belongs
    CHECK_FALSE(peer.run(ts.a, wrong, ts.out_peer));
    CHECK(!peer.why().empty());
    CHECK(peer.ok());  // a bad call leaves the peer usable
    std::mt19937 rng(3);
    ts.a.fill_random_ints(rng);
    ts.b.fill_random_ints(rng);
    CHECK(peer.run(ts.a, ts.b, ts.out_peer));
}
}
