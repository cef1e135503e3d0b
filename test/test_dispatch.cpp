// Dispatcher: the specialised kernel is chosen where it applies, the fallback otherwise, no
// problem is left without a kernel, and the chosen kernel matches the reference.
#include <cstdio>
#include <cstring>

#include <fstream>
#include <unistd.h>

#include "conformance.h"
#include "runtime/src/internal.h"
#include "schedules/spaces.h"

using namespace convbwd;
using namespace convbwd::test;

namespace {
std::string chosen(const ConvProblem &p, convbwd_direction d) {
    convbwd_problem c = to_c(p);
    const char *name = nullptr;
    REQUIRE(convbwd_select_kernel(&c, d, to_c(p.dtype), to_c(p.layout), nullptr, &name) == CONVBWD_SUCCESS);
    return name;
}
// Selects the built kernel d by name for p (its layout set to d's), f32: the dispatcher's status.
convbwd_status select_named(const convbwd_kernel_desc &d, convbwd_direction dir, ConvProblem p) {
    p.dtype = DType::F32;
    p.layout = d.layout == CONVBWD_NCHW ? Layout::NCHW : Layout::NHWC;
    convbwd_problem c = to_c(with_derived_output(p));
    convbwd_exec e{};
    e.target = d.target;
    e.kernel = d.name;
    const char *got = nullptr;
    return convbwd_select_kernel(&c, dir, CONVBWD_F32, d.layout, &e, &got);
}
// The cuda backward-data kernel chosen for p (its output derived; dtype and layout p's), or the
// kernel named, as the dispatcher's walk takes it.
std::string cuda_choice(const ConvProblem &p, convbwd_direction dir, const char *named) {
    convbwd_problem c = to_c(with_derived_output(p));
    convbwd_exec e{};
    e.target = CONVBWD_TARGET_CUDA;
    e.kernel = named;
    const char *got = nullptr;
    REQUIRE(convbwd_select_kernel(&c, dir, to_c(p.dtype), to_c(p.layout), &e, &got) == CONVBWD_SUCCESS);
    return got;
}
std::string cuda_data_choice(const ConvProblem &p, const char *named) { return cuda_choice(p, CONVBWD_BWD_DATA, named); }
// A built kernel's params: its schedule string read in its family's space.
template <class Params>
Params kernel_params(const convbwd_kernel_desc &d) {
    KnobValues kv = default_values(*find_family(d.family));
    REQUIRE(parse_knobs(d.schedule, &kv).empty());
    return to_params<Params>(kv);
}
bool has_kernel(const std::string &name) {
    for (int i = 0; i < convbwd_kernel_count(); i++) {
        convbwd_kernel_desc d;
        REQUIRE(convbwd_kernel_info(i, &d) == CONVBWD_SUCCESS);
        if (name == d.name) return true;
    }
    return false;
}
// The built kernel of that name (it must be built).
convbwd_kernel_desc desc_of(const std::string &name) {
    convbwd_kernel_desc d{};
    for (int i = 0; i < convbwd_kernel_count(); i++)
        if (convbwd_kernel_info(i, &d) == CONVBWD_SUCCESS && name == d.name) return d;
    FAIL("no kernel " << name);
    return d;
}
// A host default of 16-lane vectors where this host runs them (AVX-512) and it is built, else the 8-lane k8.
std::string by_lanes(const std::string &k16, const std::string &k8) {
    return host_f32_lanes() >= 16 && has_kernel(k16) ? k16 : k8;
}
// Selects the built kernel of that name for p (as above; the kernel must be built).
convbwd_status select_named(const std::string &name, convbwd_direction dir, const ConvProblem &p) {
    return select_named(desc_of(name), dir, p);
}
// The host backward-weight kernel of that name on p against the reference, with beta 0 and -2 (the
// output read back): every element written, every one within the reference's bound.
void check_weight_named(const std::string &name, const ConvProblem &p, std::mt19937 &rng) {
    for (float beta : {0.0f, -2.0f}) {
        CAPTURE(beta);
        RunResult r = run_against_reference(p, Direction::BwdWeight, name.c_str(), rng, 1.0f, beta, Device::Host);
        REQUIRE_MESSAGE(r.status == CONVBWD_SUCCESS, r.error);
        CHECK_MESSAGE(r.verify.ok, r.verify.mismatches, " mismatches, first ", r.verify.first_bad);
        CHECK(r.verify.unwritten == 0);
    }
}
}  // namespace

TEST_SUITE("dispatch") {
TEST_CASE("the specialised class is chosen where it applies") {
    ConvProblem p{.N = 2, .C = 32, .H = 14, .W = 14, .K = 32, .R = 3, .S = 3, .pad_top = 1, .pad_bottom = 1,
                  .pad_left = 1, .pad_right = 1, .layout = Layout::NHWC};
    p = with_derived_output(p);
    std::string k = chosen(p, CONVBWD_BWD_DATA);
    // 32 channels: on AVX-512 the one-vector 16-lane tile, else the 8-lane 3 x 4 (dispatcher rules (1), (2)).
    const std::string want = by_lanes("bwdd_f32_nhwc_s1_k3_host_c1x8v16pr4", "bwdd_f32_nhwc_s1_k3_host_c3x4p");
    if (has_kernel(want)) CHECK(k == want);
    CHECK(k.find("_s1_k3_") != std::string::npos);

    p.stride_h = p.stride_w = 2;
    p.P = p.Q = 0;
    p = with_derived_output(p);
    CHECK(chosen(p, CONVBWD_BWD_WEIGHT).find("_s2_k3_") != std::string::npos);
}

TEST_CASE("NHWC first layers take the narrow kernels along k; few k, or k tiles across groups, the column lanes") {
    const std::string nr = "bwdw_f32_nhwc_any_any_host_nrk4c3", kv3 = "bwdw_f32_nhwc_s1_k3_host_nrk2c3v16K",
                      kv = "bwdw_f32_nhwc_any_any_host_nrk2c3v16K";
    if (!has_kernel(nr) || !has_kernel(kv3) || !has_kernel(kv)) return;
    ConvProblem first{.N = 1, .C = 3, .H = 32, .W = 30, .K = 64, .R = 3, .S = 3, .pad_top = 1, .pad_bottom = 1,
                      .pad_left = 1, .pad_right = 1, .layout = Layout::NHWC};
    first = with_derived_output(first);
    CHECK(chosen(first, CONVBWD_BWD_WEIGHT) == by_lanes(kv3, nr));
    ConvProblem stem = first;  // 7x7 stride 2: class any
    stem.R = stem.S = 7, stem.stride_h = stem.stride_w = 2;
    stem.pad_top = stem.pad_bottom = stem.pad_left = stem.pad_right = 3;
    stem.P = stem.Q = 0;
    stem = with_derived_output(stem);
    CHECK(chosen(stem, CONVBWD_BWD_WEIGHT) == by_lanes(kv, nr));
    // Refused, with the reason: 8 k (a quarter of the 32-k tile), 16 k a group (a tile across groups).
    auto refusal = [&](ConvProblem p) {
        convbwd_problem c = to_c(p);
        convbwd_exec e{};
        e.kernel = kv.c_str();
        const char *got = nullptr;
        CHECK(convbwd_select_kernel(&c, CONVBWD_BWD_WEIGHT, CONVBWD_F32, to_c(p.layout), &e, &got) == CONVBWD_NO_KERNEL);
        const std::string why = convbwd_last_error();
        CHECK(chosen(p, CONVBWD_BWD_WEIGHT) == nr);
        return why;
    };
    ConvProblem few = stem;
    few.K = 8;
    CHECK(refusal(few).find("under half the kernel's tile of k (32") != std::string::npos);
    ConvProblem grouped = stem;
    grouped.C = 12, grouped.G = 4;
    CHECK(group_class(grouped) == GroupClass::Narrow);
    CHECK(refusal(grouped).find("k / groups = 16 is not a multiple of the kernel's k tile (32)") != std::string::npos);
}

TEST_CASE("narrow problems (c / groups < 8) take the narrow backward-weight family, others refuse it") {
    for (Layout l : {Layout::NCHW, Layout::NHWC}) {
        const std::string nr = std::string("bwdw_f32_") + (l == Layout::NCHW ? "nchw" : "nhwc") + "_any_any_host_nrk4c3";
        if (!has_kernel(nr)) continue;
        CAPTURE(nr);
        // A first layer (3 channels, 7x7 stride 2) and a grouped layer of 4 channels a group (with
        // AVX-512 a 3x3 one of 4 channels a group takes the vectors of channels x k: test below).
        ConvProblem first{.N = 2, .C = 3, .H = 20, .W = 20, .K = 8, .R = 7, .S = 7, .pad_top = 3, .pad_bottom = 3,
                          .pad_left = 3, .pad_right = 3, .stride_h = 2, .stride_w = 2, .layout = l};
        ConvProblem grouped{.N = 1, .C = 16, .H = 9, .W = 9, .K = 16, .R = 5, .S = 5, .G = 4, .pad_top = 2,
                            .pad_bottom = 2, .pad_left = 2, .pad_right = 2, .layout = l};
        for (ConvProblem p : {first, grouped}) {
            p = with_derived_output(p);
            CHECK(group_class(p) == GroupClass::Narrow);
            CHECK(chosen(p, CONVBWD_BWD_WEIGHT) == nr);
        }
        // Eight channels a group is not narrow: the narrow kernel, named, says why it refuses.
        ConvProblem wide = grouped;
        wide.C = wide.K = 32;
        wide = with_derived_output(wide);
        CHECK(group_class(wide) == GroupClass::Any);
        CHECK(chosen(wide, CONVBWD_BWD_WEIGHT) != nr);
        convbwd_problem c = to_c(wide);
        convbwd_exec e{};
        e.kernel = nr.c_str();
        const char *got = nullptr;
        CHECK(convbwd_select_kernel(&c, CONVBWD_BWD_WEIGHT, CONVBWD_F32, to_c(l), &e, &got) == CONVBWD_NO_KERNEL);
        CHECK(std::string(convbwd_last_error()).find("a narrow kernel (c / groups < 8") != std::string::npos);
    }
}

// GPU first layers (conv_bwd_weight_narrow_gpu, classes s1 and s2 k3): a 3-channel layer of one
// group takes the narrow default of its class in every dtype and layout built; a grouped layer of 4
// channels a group (narrow too) and an 8-channel layer do not, and the narrow kernel named for the
// grouped one says why (one group). Selection only: runs where the cuda kernels are built.
TEST_CASE("GPU first layers take the narrow backward-weight defaults, grouped narrow layers refuse them") {
    int checked = 0;
    for (convbwd_dtype dt : {CONVBWD_F32, CONVBWD_BF16, CONVBWD_F16})
    for (Layout l : {Layout::NCHW, Layout::NHWC})
    for (int stride : {1, 2}) {
        std::string nr;  // the class's first narrow default, in dispatch order
        for (int i = 0; i < convbwd_kernel_count() && nr.empty(); i++) {
            convbwd_kernel_desc d;
            REQUIRE(convbwd_kernel_info(i, &d) == CONVBWD_SUCCESS);
            if (d.direction == CONVBWD_BWD_WEIGHT && d.target == CONVBWD_TARGET_CUDA && d.dtype == dt &&
                d.layout == to_c(l) && std::string(d.family) == "conv_bwd_weight_narrow_gpu" &&
                std::string(d.stride_class) == (stride == 1 ? "s1" : "s2") && std::string(d.filter_class) == "k3" &&
                std::string(d.role) == "default")
                nr = d.name;
        }
        if (nr.empty()) continue;
        CAPTURE(nr);
        auto pick = [&](int C, int G, const char *named, convbwd_status want = CONVBWD_SUCCESS) {
            ConvProblem p{.N = 2, .C = C, .H = 12, .W = 12, .K = 32, .R = 3, .S = 3, .G = G, .pad_top = 1,
                          .pad_bottom = 1, .pad_left = 1, .pad_right = 1, .stride_h = stride, .stride_w = stride,
                          .dtype = (DType)dt, .layout = l};
            convbwd_problem c = to_c(with_derived_output(p));
            convbwd_exec e{};
            e.target = CONVBWD_TARGET_CUDA;
            e.kernel = named;
            const char *got = nullptr;
            CHECK(convbwd_select_kernel(&c, CONVBWD_BWD_WEIGHT, dt, to_c(l), &e, &got) == want);
            return got ? std::string(got) : std::string();
        };
        CHECK(pick(3, 1, nullptr) == nr);
        CHECK(pick(8, 1, nullptr) != nr);
        CHECK(pick(16, 4, nullptr) != nr);  // 4 channels a group: narrow, grouped
        pick(16, 4, nr.c_str(), CONVBWD_NO_KERNEL);
        CHECK(std::string(convbwd_last_error()).find("group") != std::string::npos);
        checked++;
    }
    MESSAGE(checked, " dtypes x layouts x strides checked");
}

// A GPU register-tile backward-weight block spans tile_c x threads_c input channels of one group
// (gpu_weight_block_channels): the kernels of a specific class refuse a grouped problem of under half
// as many channels a group, naming the block; the (any, any) defaults take every problem, and the
// dispatcher finds a kernel for it on every GPU target built.
TEST_CASE("GPU backward-weight kernels of a class refuse grouped problems of under half their block's channels") {
    // 8 channels a group (ResNeXt's middle width), stride 1, 3x3: class s1 k3.
    const ConvProblem grouped{.N = 2, .C = 32, .H = 9, .W = 9, .K = 32, .R = 3, .S = 3, .G = 4, .pad_top = 1,
                              .pad_bottom = 1, .pad_left = 1, .pad_right = 1};
    int refused = 0, taken = 0;
    std::vector<convbwd_target> targets;
    for (int i = 0; i < convbwd_kernel_count(); i++) {
        convbwd_kernel_desc d;
        REQUIRE(convbwd_kernel_info(i, &d) == CONVBWD_SUCCESS);
        if (std::string(d.family) != "conv_bwd_weight_gpu" || d.dtype != CONVBWD_F32) continue;
        const std::string cls = std::string(d.stride_class) + "_" + d.filter_class;
        if (cls != "s1_k3" && cls != "s1_any" && cls != "any_any") continue;
        CAPTURE(d.name);
        const BwdWeightGpuParams g = kernel_params<BwdWeightGpuParams>(d);
        if (g.channel_vector() > 1) continue;  // groups 1 only (refused for that first)
        if (std::find(targets.begin(), targets.end(), d.target) == targets.end()) targets.push_back(d.target);
        const int block = gpu_weight_block_channels(g, 8, 32, 3);
        const convbwd_status st = select_named(d, CONVBWD_BWD_WEIGHT, grouped);
        if (cls != "any_any" && 2 * 8 < block) {
            CHECK(st == CONVBWD_NO_KERNEL);
            CHECK(std::string(convbwd_last_error()).find("c / groups = 8 is under half the kernel's block of input channels (" +
                                                         std::to_string(block) + ")") != std::string::npos);
            refused++;
        } else {
            CHECK(st == CONVBWD_SUCCESS);
            taken++;
        }
    }
    for (convbwd_target t : targets) {
        const ConvProblem p = with_derived_output(grouped);
        convbwd_problem c = to_c(p);
        convbwd_exec e{};
        e.target = t;
        const char *got = nullptr;
        CHECK(convbwd_select_kernel(&c, CONVBWD_BWD_WEIGHT, CONVBWD_F32, CONVBWD_NCHW, &e, &got) == CONVBWD_SUCCESS);
        CHECK(convbwd_select_kernel(&c, CONVBWD_BWD_WEIGHT, CONVBWD_F32, CONVBWD_NHWC, &e, &got) == CONVBWD_SUCCESS);
    }
    MESSAGE(refused << " kernels refused, " << taken << " took the grouped problem");
}

TEST_CASE("host channel tiles and groups: a tile never straddles two groups; narrower groups take narrower tiles") {
    for (Layout l : {Layout::NCHW, Layout::NHWC}) {
        const std::string lay = l == Layout::NCHW ? "nchw" : "nhwc";
        const std::string wide_d = "bwdd_f32_" + lay + (l == Layout::NCHW ? "_s1_k3_host_c2x4p" : "_s1_k3_host_c3x4p");
        const std::string c1_d = "bwdd_f32_" + lay + "_s1_k3_host_c1x8p", c1_w = "bwdw_f32_" + lay + "_s1_k3_host_c1k8";
        const std::string wide_w = "bwdw_f32_" + lay + "_s1_k3_host_c2k4g", unpacked = "bwdd_f32_" + lay + "_any_any_host_c1x4";
        if (!has_kernel(wide_d) || !has_kernel(c1_d) || !has_kernel(c1_w) || !has_kernel(unpacked)) continue;
        CAPTURE(lay);
        // ResNeXt's middle width (8 channels a group): 8-channel tiles, dense within a group; with
        // AVX-512, 16-lane vectors of two whole groups (group_lanes).
        ConvProblem g8 = with_derived_output(ConvProblem{.N = 1, .C = 32, .H = 9, .W = 9, .K = 32, .R = 3, .S = 3, .G = 4,
                                                         .pad_top = 1, .pad_bottom = 1, .pad_left = 1, .pad_right = 1,
                                                         .layout = l});
        const std::string pairs_d = "bwdd_f32_" + lay + "_s1_k3_host_c1x14v16pl8";
        CHECK(chosen(g8, CONVBWD_BWD_DATA) == (host_f32_lanes() >= 16 && has_kernel(pairs_d) ? pairs_d : c1_d));
        // Backward-weight: the tiles whose 8 k lie in one group (group_tile) where k / groups is
        // whole tiles; 12 k a group: the tile refuses it, naming k / groups, and the next takes it.
        const std::string c1g_w = c1_w + "g", lanes_w = "bwdw_f32_" + lay + "_s1_k3_host_c1k8v16gl2";
        if (has_kernel(c1g_w)) {
            // With AVX-512, vectors of the group's 8 channels x 2 k (k_lanes) take it.
            CHECK(chosen(g8, CONVBWD_BWD_WEIGHT) == (host_f32_lanes() >= 16 && has_kernel(lanes_w) ? lanes_w : c1g_w));
            ConvProblem k12 = g8;
            k12.C = 32, k12.K = 48;
            k12 = with_derived_output(k12);
            CHECK(chosen(k12, CONVBWD_BWD_WEIGHT) == c1_w);
            convbwd_problem ck = to_c(k12);
            convbwd_exec ek{};
            const char *gotk = nullptr;
            ek.kernel = c1g_w.c_str();
            CHECK(convbwd_select_kernel(&ck, CONVBWD_BWD_WEIGHT, CONVBWD_F32, to_c(l), &ek, &gotk) == CONVBWD_NO_KERNEL);
            CHECK(std::string(convbwd_last_error()).find("k / groups = 12 is not a multiple of the kernel's k tile (8)") !=
                  std::string::npos);
        } else {
            CHECK(chosen(g8, CONVBWD_BWD_WEIGHT) == c1_w);
        }
        convbwd_problem c = to_c(g8);
        convbwd_exec e{};
        const char *got = nullptr;
        e.kernel = wide_d.c_str();  // a packed tile of 16 or 24 channels would read two groups
        CHECK(convbwd_select_kernel(&c, CONVBWD_BWD_DATA, CONVBWD_F32, to_c(l), &e, &got) == CONVBWD_NO_KERNEL);
        CHECK(std::string(convbwd_last_error()).find("c / groups = 8 is not a multiple of the kernel's channel tile") !=
              std::string::npos);
        e.kernel = wide_w.c_str();
        CHECK(convbwd_select_kernel(&c, CONVBWD_BWD_WEIGHT, CONVBWD_F32, to_c(l), &e, &got) == CONVBWD_NO_KERNEL);
        CHECK(std::string(convbwd_last_error()).find("c / groups = 8 is under the kernel's channel tile (16)") !=
              std::string::npos);
        // 10 channels a group: no packed tile (4, 8, 16, 24 channels) divides it, so
        // backward-data falls to the kernel reading channels per lane; 12 a group takes the
        // 4-channel tiles; one group takes the wide tiles as before.
        ConvProblem g10 = g8;
        g10.C = g10.K = 40;
        g10 = with_derived_output(g10);
        CHECK(chosen(g10, CONVBWD_BWD_DATA) == unpacked);
        ConvProblem g12 = g8;
        g12.C = g12.K = 48;
        g12 = with_derived_output(g12);
        const std::string c4_d = "bwdd_f32_" + lay + "_s1_k3_host_c1x8v4p";
        if (has_kernel(c4_d)) CHECK(chosen(g12, CONVBWD_BWD_DATA) == c4_d);
        ConvProblem g1 = g8;
        g1.G = 1;
        // One group of 32 channels: on AVX-512 the one-vector 16-lane tile, else the wide 8-lane tiles.
        CHECK(chosen(g1, CONVBWD_BWD_DATA) == by_lanes("bwdd_f32_" + lay + "_s1_k3_host_c1x8v16pr4", wide_d));
        // One group of 32 channels: on AVX-512 the direct kernel's one whole 32-channel tile.
        CHECK(chosen(g1, CONVBWD_BWD_WEIGHT) == by_lanes("bwdw_f32_" + lay + "_s1_k3_host_c2k6v16d", wide_w));
    }
}

// Direct backward-weight kernels (direct = 1: one split, no workspace) sum every term of a filter
// element in one f32 partial: over kWgradTermsPerSplit terms they refuse the problem, naming them,
// and the split kernel takes it. As defaults (AVX-512 hosts) NHWC takes them only where dy is small.
TEST_CASE("direct backward-weight kernels: no workspace, the accuracy cap, NHWC defaults where dy is small") {
    for (Layout l : {Layout::NCHW, Layout::NHWC}) {
        const std::string lay = l == Layout::NCHW ? "nchw" : "nhwc", direct = "bwdw_f32_" + lay + "_s1_k1_host_c2k6v16d";
        if (!has_kernel(direct)) continue;
        CAPTURE(lay);
        ConvProblem p = with_derived_output(ConvProblem{.N = 1, .C = 64, .H = 7, .W = 7, .K = 64, .R = 1, .S = 1, .layout = l});
        convbwd_problem c = to_c(p);
        convbwd_exec e{};
        e.kernel = direct.c_str();
        const char *got = nullptr;
        REQUIRE(convbwd_select_kernel(&c, CONVBWD_BWD_WEIGHT, CONVBWD_F32, to_c(l), &e, &got) == CONVBWD_SUCCESS);
        size_t bytes = 1;
        REQUIRE(convbwd_workspace_size(&c, CONVBWD_BWD_WEIGHT, CONVBWD_F32, to_c(l), &e, &bytes) == CONVBWD_SUCCESS);
        CHECK(bytes == 0);
        auto plane = [&](int n, int hw) {
            return with_derived_output(ConvProblem{.N = n, .C = 64, .H = hw, .W = hw, .K = 64, .R = 1, .S = 1, .layout = l});
        };
        ConvProblem big = plane(1, 64);  // 64 x 64 = 4096 pixels fit (kWgradDirectTerms); 65 x 65 = 4225 do not
        c = to_c(big);
        CHECK_MESSAGE(convbwd_select_kernel(&c, CONVBWD_BWD_WEIGHT, CONVBWD_F32, to_c(l), &e, &got) == CONVBWD_SUCCESS,
                      std::string(convbwd_last_error()));
        big = plane(1, 65);
        c = to_c(big);
        CHECK(convbwd_select_kernel(&c, CONVBWD_BWD_WEIGHT, CONVBWD_F32, to_c(l), &e, &got) == CONVBWD_NO_KERNEL);
        CHECK(std::string(convbwd_last_error()).find("size: n * p * q = 4225 terms a filter element") != std::string::npos);
        // The library's choice for it is a split kernel: it needs a workspace.
        REQUIRE(convbwd_workspace_size(&c, CONVBWD_BWD_WEIGHT, CONVBWD_F32, to_c(l), nullptr, &bytes) == CONVBWD_SUCCESS);
        CHECK(bytes > 0);
        if (host_f32_lanes() < 16) continue;  // the 16-lane defaults run on AVX-512 only
        CHECK(chosen(p, CONVBWD_BWD_WEIGHT) == direct);
        // dy of at most 1 MiB: the NHWC default's limit. 64 x 64 pixels of k = 64 (1 MiB) take the direct
        // kernel; of k = 96 (1.5 MiB) NHWC takes a split one, NCHW keeps the direct one.
        CHECK(chosen(plane(1, 64), CONVBWD_BWD_WEIGHT) == direct);
        ConvProblem wide_k = plane(1, 64);
        wide_k.K = 96;
        CHECK((chosen(wide_k, CONVBWD_BWD_WEIGHT) == direct) == (l == Layout::NCHW));
    }
}

// Rule (3): an 8-lane backward-weight tile of several vectors is skipped where it does not divide
// c / groups (its tail tile ran at scalar speed); a one-vector tile takes the layer.
TEST_CASE("8-lane backward-weight tiles of several vectors leave channels they do not divide") {
    const std::string split = "bwdw_f32_nhwc_s1_k1_host_c2k4";  // tile_c = 2: 16 channels a tile
    if (!has_kernel(split)) return;
    auto layer = [](int c) {
        return with_derived_output(
            ConvProblem{.N = 1, .C = c, .H = 56, .W = 56, .K = 144, .R = 1, .S = 1, .layout = Layout::NHWC});
    };
    CHECK(kernel_params<BwdWeightHostParams>(desc_of(split)).tile_c == 2);
    // Named, the kernel still takes 24 channels (a tuning record may pick it) ...
    CHECK(select_named(split, CONVBWD_BWD_WEIGHT, layer(24)) == CONVBWD_SUCCESS);
    // ... the library's choice is a one-vector tile there, and the split kernel at 32 channels (dy of
    // 56 x 56 x 144 floats is over the direct NHWC kernels' 1 MiB, rule (0)).
    const std::string pick24 = chosen(layer(24), CONVBWD_BWD_WEIGHT);
    CAPTURE(pick24);
    CHECK(kernel_params<BwdWeightHostParams>(desc_of(pick24)).tile_c == 1);
    CHECK(chosen(layer(32), CONVBWD_BWD_WEIGHT) == split);
}

// 24 channels: the 16-lane one-vector direct tile (second vector half empty) gives way to 8-lane
// kernels of whole vectors: NCHW 1x1 and any-filter layers (GoogLeNet's 24 -> 64 5x5) the 24-channel
// direct tile, where the (any, any) split kernel took the 5x5 one.
TEST_CASE("24-channel backward-weight: 8-lane tiles of whole vectors before a half-empty 16-lane one") {
    const std::string c24 = "bwdw_f32_nchw_s1_k1_host_c3k4d", one16 = "bwdw_f32_nhwc_s1_any_host_c1k8v16d";
    auto layer = [](int c, int r, Layout l) {
        return with_derived_output(ConvProblem{.N = 1, .C = c, .H = 28, .W = 28, .K = 64, .R = r, .S = r,
                                               .pad_top = r / 2, .pad_bottom = r / 2, .pad_left = r / 2,
                                               .pad_right = r / 2, .layout = l});
    };
    if (has_kernel(c24)) {
        CHECK(chosen(layer(24, 1, Layout::NCHW), CONVBWD_BWD_WEIGHT) == c24);
        CHECK(chosen(layer(40, 1, Layout::NCHW), CONVBWD_BWD_WEIGHT) != c24);  // not whole 24-channel tiles
    }
    if (has_kernel(one16)) {
        CHECK(chosen(layer(24, 5, Layout::NHWC), CONVBWD_BWD_WEIGHT) != one16);
        if (host_f32_lanes() >= 16) CHECK(chosen(layer(40, 5, Layout::NHWC), CONVBWD_BWD_WEIGHT) == one16);
    }
    for (Layout l : {Layout::NHWC, Layout::NCHW}) {
        const std::string any24 = std::string("bwdw_f32_") + (l == Layout::NHWC ? "nhwc" : "nchw") + "_s1_any_host_c3k4d";
        if (!has_kernel(any24)) continue;
        CAPTURE(any24);
        CHECK(chosen(layer(24, 5, l), CONVBWD_BWD_WEIGHT) == any24);
        CHECK(chosen(layer(40, 5, l), CONVBWD_BWD_WEIGHT) != any24);  // not whole 24-channel tiles
    }
}

// Grouped backward-weight of 16 and 32 channels a group: the direct kernels of one group's tiles (tasks
// of whole groups), two-vector tiles where c / groups is whole ones, else one-vector tiles; both layouts.
// The dispatcher gives ungrouped layers the kernels after them.
TEST_CASE("grouped backward-weight of 16 and 32 channels a group: direct kernels of one group's tiles") {
    for (Layout l : {Layout::NHWC, Layout::NCHW}) {
        const std::string lay = l == Layout::NHWC ? "nhwc" : "nchw";
        const std::string g16 = "bwdw_f32_" + lay + "_s1_k3_host_c1k8v16gd", g32 = "bwdw_f32_" + lay + "_s1_k3_host_c2k8v16gd";
        if (host_f32_lanes() < 16 || !has_kernel(g16) || !has_kernel(g32)) return;
        auto layer = [l](int c, int g) {
            return with_derived_output(ConvProblem{.N = 1, .C = c, .H = 14, .W = 14, .K = c, .R = 3, .S = 3, .G = g,
                                                   .pad_top = 1, .pad_bottom = 1, .pad_left = 1, .pad_right = 1,
                                                   .layout = l});
        };
        CAPTURE(lay);
        CHECK(chosen(layer(512, 32), CONVBWD_BWD_WEIGHT) == g16);
        CHECK(chosen(layer(1024, 32), CONVBWD_BWD_WEIGHT) == g32);
        for (int c : {16, 32, 512}) {
            const std::string ungrouped = chosen(layer(c, 1), CONVBWD_BWD_WEIGHT);
            CHECK(ungrouped != g16);
            CHECK(ungrouped != g32);
        }
        // Named, it runs an ungrouped layer too (the rule is the dispatcher's preference, not a limit).
        CHECK(select_named(g16, CONVBWD_BWD_WEIGHT, layer(32, 1)) == CONVBWD_SUCCESS);
    }
}

// NCHW grouped backward-weight along the columns (conv_bwd_weight_grouped_host): the default for grouped
// layers whose rows fill 1.5 column vectors or more (ResNeXt's 28- and 56-column layers), not for
// short rows (its 14-column ones) or one group; named, it refuses k / groups that its k tile does not
// divide, naming the field, and matches the reference on a grouped layer of long rows.
TEST_CASE("NCHW grouped backward-weight along the columns: grouped layers of long rows") {
    const std::string s1 = "bwdw_f32_nchw_s1_k3_host_grk2", s2 = "bwdw_f32_nchw_s2_k3_host_grk2";
    if (host_f32_lanes() < 16 || !has_kernel(s1) || !has_kernel(s2)) return;
    auto layer = [](int c, int g, int hw, int stride) {
        return with_derived_output(ConvProblem{.N = 1, .C = c, .H = hw, .W = hw, .K = c, .R = 3, .S = 3, .G = g,
                                               .pad_top = 1, .pad_bottom = 1, .pad_left = 1, .pad_right = 1,
                                               .stride_h = stride, .stride_w = stride, .layout = Layout::NCHW});
    };
    CHECK(chosen(layer(256, 32, 28, 1), CONVBWD_BWD_WEIGHT) == s1);  // 8 a group
    CHECK(chosen(layer(128, 32, 56, 1), CONVBWD_BWD_WEIGHT) == s1);  // 4 a group
    CHECK(chosen(layer(256, 32, 56, 2), CONVBWD_BWD_WEIGHT) == s2);  // 28 output columns
    CHECK(chosen(layer(512, 32, 14, 1), CONVBWD_BWD_WEIGHT) != s1);  // 14 columns: under 1.5 vectors
    CHECK(chosen(layer(256, 1, 28, 1), CONVBWD_BWD_WEIGHT) != s1);   // one group
    CHECK(select_named(s1, CONVBWD_BWD_WEIGHT, layer(256, 1, 28, 1)) == CONVBWD_SUCCESS);  // named: one group too
    ConvProblem odd = layer(36, 4, 28, 1);  // 9 k a group: the tile of 2 k would straddle two groups
    CHECK(select_named(s1, CONVBWD_BWD_WEIGHT, odd) == CONVBWD_NO_KERNEL);
    CHECK(std::string(convbwd_last_error()).find("k / groups = 9 is not a multiple of the kernel's k tile (2)") !=
          std::string::npos);
    std::mt19937 rng(11);
    ConvProblem p = layer(32, 4, 28, 1);
    p.N = 2;
    check_weight_named(s1, with_derived_output(p), rng);
}

// A depthwise 3x3 layer of c channels on hw x hw planes, padding 1 (MobileNet's, EfficientNet's).
namespace {
ConvProblem dw3x3_layer(int c, int hw, int stride, int n, Layout layout) {
    return with_derived_output(ConvProblem{.N = n, .C = c, .H = hw, .W = hw, .K = c, .R = 3, .S = 3, .G = c,
                                           .pad_top = 1, .pad_bottom = 1, .pad_left = 1, .pad_right = 1,
                                           .stride_h = stride, .stride_w = stride, .layout = layout});
}
}  // namespace

// NCHW depthwise backward-weight reading dy in place (dy_in_place): taken where dy's rows are whole
// vectors (Q a multiple of the kernel's lanes), refused by name elsewhere with the rows named; the
// copying kernels take the other rows.
TEST_CASE("NCHW depthwise backward-weight reading dy in place: rows of whole vectors only") {
    const std::string k16 = "bwdw_f32_nchw_s1_k3_host_dwc2k1v16fq4d", k8 = "bwdw_f32_nchw_s1_k3_host_dwc2k1fq2d";
    if (!has_kernel(k16) || !has_kernel(k8)) return;
    auto layer = [](int c, int hw) { return dw3x3_layer(c, hw, 1, 1, Layout::NCHW); };
    CHECK(kernel_params<BwdWeightDwHostParams>(desc_of(k8)).column_vector() == 8);
    CHECK(kernel_params<BwdWeightDwHostParams>(desc_of(k16)).column_vector() == 16);
    CHECK(chosen(layer(144, 56), CONVBWD_BWD_WEIGHT) == by_lanes(k8, k8));    // 56 columns: 8-lane rows
    CHECK(chosen(layer(32, 112), CONVBWD_BWD_WEIGHT) == by_lanes(k16, k8));   // 112: 16-lane rows (AVX-512)
    const std::string c28 = chosen(layer(192, 28), CONVBWD_BWD_WEIGHT);      // 28: the copying kernels
    CHECK(c28 != k8);
    CHECK(c28 != k16);
    CHECK(select_named(k8, CONVBWD_BWD_WEIGHT, layer(192, 28)) == CONVBWD_NO_KERNEL);
    CHECK(std::string(convbwd_last_error()).find("columns: q = 28 per row of dy (multiples of 8") != std::string::npos);
    // Rule (5): rows of at most 8 columns leave the 16-lane column kernels to an 8-lane one (any host;
    // where the host has 16 lanes the channel-vector kernels take rows of at most 14 columns first).
    const std::string cv = "bwdw_f32_nchw_s1_k3_host_dwc1v16fiq4tD";
    CHECK(chosen(layer(960, 7), CONVBWD_BWD_WEIGHT) == by_lanes(cv, "bwdw_f32_nchw_s1_k3_host_dwc2k1fq2"));
    CHECK(chosen(layer(384, 14), CONVBWD_BWD_WEIGHT) == by_lanes(cv, "bwdw_f32_nchw_s1_k3_host_dwc2k1fq2"));
    // Named for rows of whole vectors, in both widths, against the reference (two images, beta too).
    std::mt19937 rng(5);
    for (const std::string &k : {k8, k16}) {
        ConvProblem p = layer(20, 32);
        p.N = 2;
        check_weight_named(k, with_derived_output(p), rng);
    }
}

// NCHW depthwise backward-weight along the channels (channel_vectors: planes copied channels innermost
// per task): rule (5b) gives it rows of dy of at most 14 columns; the direct kernel (one split, dw written
// from the tile) takes n * p * q up to the direct cap, the split one beyond it; named, each runs any row
// and matches the reference on small planes with a channel tail.
TEST_CASE("NCHW depthwise backward-weight along the channels: rows of at most 14 columns") {
    const std::string d1 = "bwdw_f32_nchw_s1_k3_host_dwc1v16fiq4tD", d2 = "bwdw_f32_nchw_s2_k3_host_dwc1v16fitD",
                      s1 = "bwdw_f32_nchw_s1_k3_host_dwc1v16fiq4t";
    if (host_f32_lanes() < 16 || !has_kernel(d1) || !has_kernel(d2) || !has_kernel(s1)) return;
    auto layer = [](int c, int hw, int stride, int n = 1) { return dw3x3_layer(c, hw, stride, n, Layout::NCHW); };
    CHECK(kernel_params<BwdWeightDwHostParams>(desc_of(d1)).along_channels(Layout::NCHW));
    CHECK_FALSE(kernel_params<BwdWeightDwHostParams>(desc_of("bwdw_f32_nchw_s1_k3_host_dwc2k1fq2")).along_channels(Layout::NCHW));
    CHECK(chosen(layer(960, 7, 1), CONVBWD_BWD_WEIGHT) == d1);
    CHECK(chosen(layer(384, 14, 1), CONVBWD_BWD_WEIGHT) == d1);
    CHECK(chosen(layer(384, 14, 1, 32), CONVBWD_BWD_WEIGHT) == s1);  // 32 * 14 * 14 terms: over the direct cap
    CHECK(chosen(layer(192, 28, 1), CONVBWD_BWD_WEIGHT) != d1);  // 28 columns: the column kernels
    CHECK(chosen(layer(192, 28, 1), CONVBWD_BWD_WEIGHT) != s1);
    CHECK(chosen(layer(576, 14, 2), CONVBWD_BWD_WEIGHT) == d2);   // 7 output columns
    CHECK(chosen(layer(240, 28, 2), CONVBWD_BWD_WEIGHT) == d2);   // 14
    CHECK(chosen(layer(144, 56, 2), CONVBWD_BWD_WEIGHT) != d2);   // 28: the column kernels
    CHECK(select_named(d1, CONVBWD_BWD_WEIGHT, layer(192, 28, 1)) == CONVBWD_SUCCESS);  // named: any row
    CHECK(select_named(d1, CONVBWD_BWD_WEIGHT, layer(384, 14, 1, 32)) == CONVBWD_NO_KERNEL);
    CHECK(std::string(convbwd_last_error()).find("size: n * p * q = 6272") != std::string::npos);
    std::mt19937 rng(17);
    for (const std::string &k : {d1, s1}) check_weight_named(k, layer(35, 7, 1, 2), rng);
    check_weight_named(d2, layer(35, 9, 2, 2), rng);
}

// NHWC depthwise backward-weight written from the register tile (direct): rule (5c) gives it n * p * q up
// to 512 terms (MobileNet's layers at batch 1, 7x7 planes up to batch 8); the split kernels take the rest.
// Named, it runs any size up to the direct cap, and matches the reference.
TEST_CASE("NHWC depthwise backward-weight direct: n * p * q up to 512") {
    const std::string d1 = "bwdw_f32_nhwc_s1_k3_host_dwc1v16fiq4D", d2 = "bwdw_f32_nhwc_s2_k3_host_dwc1v16fiD",
                      s1 = "bwdw_f32_nhwc_s1_k3_host_dwc1v16fiq4";
    if (host_f32_lanes() < 16 || !has_kernel(d1) || !has_kernel(d2) || !has_kernel(s1)) return;
    auto layer = [](int c, int hw, int stride, int n = 1) { return dw3x3_layer(c, hw, stride, n, Layout::NHWC); };
    CHECK(chosen(layer(960, 7, 1), CONVBWD_BWD_WEIGHT) == d1);
    CHECK(chosen(layer(960, 7, 1, 8), CONVBWD_BWD_WEIGHT) == d1);    // 392 terms
    CHECK(chosen(layer(960, 7, 1, 16), CONVBWD_BWD_WEIGHT) == s1);   // 784: the split kernel
    CHECK(chosen(layer(384, 14, 1), CONVBWD_BWD_WEIGHT) == d1);
    CHECK(chosen(layer(192, 28, 1), CONVBWD_BWD_WEIGHT) == s1);      // 784
    CHECK(chosen(layer(576, 14, 2), CONVBWD_BWD_WEIGHT) == d2);      // 7x7 outputs
    CHECK(chosen(layer(576, 14, 2, 32), CONVBWD_BWD_WEIGHT) != d2);  // 1568
    CHECK(select_named(d1, CONVBWD_BWD_WEIGHT, layer(960, 7, 1, 32)) == CONVBWD_SUCCESS);  // named: up to the cap
    std::mt19937 rng(19);
    check_weight_named(d1, layer(35, 7, 1, 2), rng);
    check_weight_named(d2, layer(35, 9, 2, 2), rng);
}

// Backward-weight skipping x's padding (skip_pad): taken where 15% of the terms or more read padding
// (DeepLab's ASPP at rate 12 on 32x32: 44%), never where fewer do (Inception's 7x1 on 17x17: 10%).
TEST_CASE("backward-weight skipping x's padding: dilated layers whose taps reach into it") {
    for (Layout l : {Layout::NHWC, Layout::NCHW}) {
        const std::string skip = std::string("bwdw_f32_") + (l == Layout::NHWC ? "nhwc" : "nchw") + "_s1_any_host_c2k6v16dp";
        if (host_f32_lanes() < 16 || !has_kernel(skip)) return;
        CAPTURE(skip);
        const ConvProblem aspp = with_derived_output(ConvProblem{
            .N = 1, .C = 256, .H = 32, .W = 32, .K = 64, .R = 3, .S = 3, .pad_top = 12, .pad_bottom = 12,
            .pad_left = 12, .pad_right = 12, .dilation_h = 12, .dilation_w = 12, .layout = l});
        const ConvProblem seven = with_derived_output(ConvProblem{
            .N = 1, .C = 128, .H = 17, .W = 17, .K = 192, .R = 7, .S = 1, .pad_top = 3, .pad_bottom = 3, .layout = l});
        CHECK(chosen(aspp, CONVBWD_BWD_WEIGHT) == skip);
        CHECK(chosen(seven, CONVBWD_BWD_WEIGHT) != skip);
        CHECK(select_named(skip, CONVBWD_BWD_WEIGHT, seven) == CONVBWD_SUCCESS);  // named, it runs it
    }
}

// Grouped backward-data with vectors of whole groups (group_lanes): the default for ResNeXt's groups of
// 8 and 4 channels (16-lane kernels on AVX-512, the 8-lane one of 4-channel groups below it); named, a
// kernel refuses groups of another size, k / groups unlike c / groups, and groups that leave its last
// vector part empty, naming the field.
TEST_CASE("grouped backward-data: vectors of whole groups take groups of exactly their size") {
    const std::string l8 = "bwdd_f32_nhwc_s1_k3_host_c1x14v16pl8", l4 = "bwdd_f32_nhwc_s1_k3_host_c1x8v16pl4",
                      l4avx2 = "bwdd_f32_nhwc_s1_k3_host_c1x8pl4";
    if (!has_kernel(l8) || !has_kernel(l4) || !has_kernel(l4avx2)) return;
    auto layer = [](int c, int k, int g, int hw) {
        return with_derived_output(ConvProblem{.N = 1, .C = c, .H = hw, .W = hw, .K = k, .R = 3, .S = 3, .G = g,
                                               .pad_top = 1, .pad_bottom = 1, .pad_left = 1, .pad_right = 1,
                                               .layout = Layout::NHWC});
    };
    if (host_f32_lanes() >= 16) {
        CHECK(chosen(layer(256, 256, 32, 28), CONVBWD_BWD_DATA) == l8);
        CHECK(chosen(layer(128, 128, 32, 56), CONVBWD_BWD_DATA) == l4);
    } else {
        CHECK(chosen(layer(128, 128, 32, 56), CONVBWD_BWD_DATA) == l4avx2);
    }
    CHECK(chosen(layer(512, 512, 32, 14), CONVBWD_BWD_DATA) != l8);  // 16 a group: tiles inside one group
    CHECK(select_named(l8, CONVBWD_BWD_DATA, layer(256, 256, 32, 28)) == CONVBWD_SUCCESS);
    auto refused = [&](const std::string &name, const ConvProblem &p, const char *why) {
        CHECK(select_named(name, CONVBWD_BWD_DATA, p) != CONVBWD_SUCCESS);
        const std::string e = convbwd_last_error();
        CHECK_MESSAGE(e.find(why) != std::string::npos, e);
    };
    refused(l8, layer(512, 512, 32, 14), "groups of exactly 8 channels and k");   // c / groups 16
    refused(l8, layer(256, 128, 32, 28), "k / groups = 4");                       // k / groups unlike c / groups
    refused(l8, layer(24, 24, 3, 28), "groups: 3 is not a multiple of the 2");   // a half-empty last vector
    refused(l8, layer(8, 8, 1, 28), "groups of exactly 8");                       // one group
    refused(l4, layer(32, 32, 4, 28), "groups of exactly 4");
}

// Grouped backward-weight with vectors of channels x k (k_lanes): the default for grouped layers of
// exactly the kernel's channel tile (ResNeXt's 8 and 4 channels a group, AVX-512); not for wider groups
// or one group; named, any multiple of the tile whose k / groups is whole k tiles.
TEST_CASE("grouped backward-weight: vectors of channels x k for groups of one channel tile") {
    for (const char *lay : {"nhwc", "nchw"}) {
        CAPTURE(lay);
        const std::string l2 = std::string("bwdw_f32_") + lay + "_s1_k3_host_c1k8v16gl2",
                          l4 = std::string("bwdw_f32_") + lay + "_s1_k3_host_c1k4v16gl4",
                          l2s2 = std::string("bwdw_f32_") + lay + "_s2_k3_host_c1k8v16gl2";
        if (!has_kernel(l2) || !has_kernel(l4) || !has_kernel(l2s2)) continue;
        const Layout L = std::string(lay) == "nhwc" ? Layout::NHWC : Layout::NCHW;
        auto layer = [&](int c, int g, int hw, int stride) {
            return with_derived_output(ConvProblem{.N = 1, .C = c, .H = hw, .W = hw, .K = c, .R = 3, .S = 3, .G = g,
                                                   .pad_top = 1, .pad_bottom = 1, .pad_left = 1, .pad_right = 1,
                                                   .stride_h = stride, .stride_w = stride, .layout = L});
        };
        if (host_f32_lanes() >= 16) {
            // NCHW rows of 24 columns or more go to the grouped columns kernels (test below): there,
            // ResNeXt's widths at half its planes.
            const int hw = L == Layout::NCHW ? 14 : 28;
            CHECK(chosen(layer(256, 32, hw, 1), CONVBWD_BWD_WEIGHT) == l2);
            CHECK(chosen(layer(256, 32, 2 * hw, 2), CONVBWD_BWD_WEIGHT) == l2s2);
            CHECK(chosen(layer(128, 32, L == Layout::NCHW ? 14 : 56, 1), CONVBWD_BWD_WEIGHT) == l4);
        }
        CHECK(chosen(layer(512, 32, 14, 1), CONVBWD_BWD_WEIGHT) != l2);  // 16 a group
        CHECK(chosen(layer(8, 1, 28, 1), CONVBWD_BWD_WEIGHT) != l2);     // one group
        CHECK(select_named(l2, CONVBWD_BWD_WEIGHT, layer(512, 32, 14, 1)) == CONVBWD_SUCCESS);
        ConvProblem k12 = layer(256, 32, 28, 1);
        k12.K = 384;  // 12 k a group: not whole 8-k tiles of one group
        k12 = with_derived_output(k12);
        CHECK(select_named(l2, CONVBWD_BWD_WEIGHT, k12) != CONVBWD_SUCCESS);
        CHECK(std::string(convbwd_last_error()).find("k / groups = 12") != std::string::npos);
    }
}

// NCHW 1x1 backward-data as a GEMM along the planes (cols = 1): the default where k <= 160 and the
// plane fills its 48-column tiles or is four of them at least (dispatcher rule (0b)); else a packed
// kernel. Named, it takes any NCHW 1x1 stride-1 problem (conformance checks its results).
TEST_CASE("NCHW 1x1 backward-data planes' GEMM: the default for few k and filled planes") {
    const std::string cols = "bwdd_f32_nchw_s1_k1_host_c4x3v16q";
    if (!has_kernel(cols)) return;
    auto layer = [](int c, int hw, int k) {
        return with_derived_output(ConvProblem{.N = 1, .C = c, .H = hw, .W = hw, .K = k, .R = 1, .S = 1});
    };
    const ConvProblem seven = layer(672, 7, 192);
    CHECK(select_named(cols, CONVBWD_BWD_DATA, seven) == CONVBWD_SUCCESS);
    if (host_f32_lanes() < 16) {  // the 16-lane defaults run on AVX-512 only; below, the 8-lane one
        const std::string cols8 = "bwdd_f32_nchw_s1_k1_host_c4x3q";
        if (!has_kernel(cols8)) return;
        CHECK(chosen(layer(192, 35, 32), CONVBWD_BWD_DATA) == cols8);
        CHECK(chosen(layer(192, 35, 192), CONVBWD_BWD_DATA) != cols8);  // k past 160
        CHECK(chosen(seven, CONVBWD_BWD_DATA) != cols8);                 // 49 columns: under four 24-column tiles
        return;
    }
    CHECK(chosen(layer(192, 35, 32), CONVBWD_BWD_DATA) == cols);    // 1225 columns: over four tiles
    CHECK(chosen(layer(240, 12, 80), CONVBWD_BWD_DATA) == cols);    // 144 columns: three whole tiles
    CHECK(chosen(layer(192, 35, 160), CONVBWD_BWD_DATA) == cols);   // k at the limit
    CHECK(chosen(layer(192, 35, 192), CONVBWD_BWD_DATA) != cols);   // k past it
    CHECK(chosen(layer(240, 13, 80), CONVBWD_BWD_DATA) != cols);    // 169 columns: a partial fourth tile
    CHECK(chosen(seven, CONVBWD_BWD_DATA) != cols);
}

// NCHW stride-1 backward-data beyond 1x1 as a GEMM along the rows (cols = 1, class any): narrow 5x5 layers
// (c / groups under two 32-channel tiles) take the 32-column tiles where a row fills 3/4 of them (dispatcher
// rule (0b)); else from one 16-channel vector up (GoogLeNet's 16-48 channels) the one-vector packed tiles of
// 7 columns, and under one vector the 16-column tiles, else (7 columns) the 8-lane packed kernel; a 64-channel
// layer keeps the 16-lane packed default. Named, the kernel takes any NCHW stride-1 problem.
TEST_CASE("NCHW stride-1 backward-data rows' GEMM: narrow layers, tiles the rows fill") {
    const std::string t32 = "bwdd_f32_nchw_s1_any_host_c6x2v16q", t16 = "bwdd_f32_nchw_s1_any_host_c8x1v16q",
                      one = "bwdd_f32_nchw_s1_any_host_c1x7v16pr4";
    if (!has_kernel(t32) || !has_kernel(t16)) return;
    auto layer = [](int c, int hw, int k) {
        return with_derived_output(ConvProblem{.N = 1, .C = c, .H = hw, .W = hw, .K = k, .R = 5, .S = 5, .pad_top = 2,
                                               .pad_bottom = 2, .pad_left = 2, .pad_right = 2});
    };
    const ConvProblem seven = layer(8, 7, 128);
    CHECK(select_named(t32, CONVBWD_BWD_DATA, seven) == CONVBWD_SUCCESS);
    if (host_f32_lanes() < 16) {  // the 16-lane defaults run on AVX-512 only
        CHECK(chosen(layer(8, 28, 32), CONVBWD_BWD_DATA) != t32);
        return;
    }
    CHECK(chosen(layer(8, 28, 32), CONVBWD_BWD_DATA) == t32);    // 28 of 32 columns
    CHECK(chosen(layer(12, 27, 64), CONVBWD_BWD_DATA) == t32);   // 27 of 32
    CHECK(chosen(layer(8, 14, 64), CONVBWD_BWD_DATA) == t16);    // 14 of 32: 14 of 16
    const std::string small = chosen(seven, CONVBWD_BWD_DATA);  // 7 of 16
    CHECK(small != t32);
    CHECK(small != t16);
    CHECK(chosen(layer(16, 28, 32), CONVBWD_BWD_DATA) == t32);  // one vector: still the 32-column tiles
    if (has_kernel(one)) {
        CHECK(chosen(layer(16, 14, 64), CONVBWD_BWD_DATA) == one);  // one vector of channels and more
        CHECK(chosen(layer(48, 7, 128), CONVBWD_BWD_DATA) == one);
    }
    CHECK(chosen(layer(64, 27, 192), CONVBWD_BWD_DATA) != t32);  // two 32-channel tiles: the packed default
    CHECK(chosen(layer(64, 27, 192), CONVBWD_BWD_DATA) != one);
}

// The dispatcher keeps its choice per query (runtime/src/dispatch.cpp): two queries of one problem
// whose tensors differ only in alignment are two entries. An OpenCL kernel loading columns as vectors
// (xvec=4), named by a tuning-database record, takes the aligned query; the record is skipped for the
// other (a C stride of 65 elements), whichever was asked first and however often.
TEST_CASE("the dispatcher's kept choice follows the tensors' alignments") {
    const std::string xv = "bwdd_f32_nchw_s1_k1_opencl_c8x4xv4";
    if (!has_kernel(xv)) return;
    const ConvProblem p = with_derived_output(ConvProblem{.N = 1, .C = 8, .H = 8, .W = 8, .K = 8, .R = 1, .S = 1});
    convbwd_problem c = to_c(p);
    convbwd_exec e{};
    e.target = CONVBWD_TARGET_OPENCL;
    char key[256];
    REQUIRE(convbwd_problem_key(&c, CONVBWD_BWD_DATA, CONVBWD_F32, CONVBWD_NCHW, &e, key, sizeof key) == CONVBWD_SUCCESS);
    const std::string db = "/tmp/convbwd_test_" + std::to_string(::getpid()) + "_align.db";
    std::ofstream(db) << key << " " << xv << "\n";
    REQUIRE_MESSAGE(convbwd_load_tuning_db(db.c_str()) == CONVBWD_SUCCESS, convbwd_last_error());
    Query aligned{p, Direction::BwdData, Device::OpenCL};  // no entries: packed tensors, aligned
    Query odd = aligned;
    odd.alignments.push_back({1, 1, "dy", 65});  // dy's C stride: 65 elements
    for (int round = 0; round < 2; round++) {
        CAPTURE(round);
        CHECK(std::string(select_kernel(odd)->kernel->name) != xv);
        CHECK(std::string(select_kernel(aligned)->kernel->name) == xv);
        CHECK(std::string(select_kernel(odd)->kernel->name) != xv);
    }
    convbwd_load_tuning_db(nullptr);
    std::remove(db.c_str());
    CHECK(std::string(select_kernel(aligned)->kernel->name) != xv);  // the unload takes effect at once
}

TEST_CASE("a kernel loading channels as vectors refuses channels that are not a multiple, naming them") {
    const char *name = "bwdd_f32_nchw_s1_k1_opencl_c4x4s1v4";
    if (!has_kernel(name)) return;
    ConvProblem p = with_derived_output(ConvProblem{.N = 1, .C = 8, .H = 5, .W = 5, .K = 4, .R = 1, .S = 1});
    convbwd_exec e{};
    e.target = CONVBWD_TARGET_OPENCL;
    e.kernel = name;
    const char *got = nullptr;
    convbwd_problem c = to_c(p);
    CHECK(convbwd_select_kernel(&c, CONVBWD_BWD_DATA, CONVBWD_F32, CONVBWD_NCHW, &e, &got) == CONVBWD_SUCCESS);
    for (auto cg : {std::pair{6, 1}, std::pair{8, 4}}) {
        const int C = cg.first, G = cg.second;  // not a structured binding: CAPTURE takes them by reference
        CAPTURE(C);
        CAPTURE(G);
        c.c = C, c.k = 4 * G, c.groups = G;
        got = nullptr;
        CHECK(convbwd_select_kernel(&c, CONVBWD_BWD_DATA, CONVBWD_F32, CONVBWD_NCHW, &e, &got) == CONVBWD_NO_KERNEL);
        std::string msg = convbwd_last_error();
        CAPTURE(msg);
        CHECK(msg.find("channels: c = " + std::to_string(C)) != std::string::npos);
        // Without a named kernel the dispatcher takes another one.
        CHECK(convbwd_select_kernel(&c, CONVBWD_BWD_DATA, CONVBWD_F32, CONVBWD_NCHW, nullptr, &got) == CONVBWD_SUCCESS);
    }
}

// Matrix-fragment backward-data kernels with vec=4 load dy's channels (k) in place as vectors of 4:
// they refuse k not a multiple of 4, and dy's strides (and, off OpenCL, its base) not multiples of
// 4 elements, naming what; packed tensors of k a multiple of 4 pass. Refused before anything runs
// (the host buffer below is never read). The NCHW ones read a copy of dy (channels innermost, zero
// past k) and take k = 38.
TEST_CASE("fragment kernels loading dy's channels as vectors refuse k, strides and bases they cannot load") {
    int checked = 0;
    for (int i = 0; i < convbwd_kernel_count(); i++) {
        convbwd_kernel_desc d;
        REQUIRE(convbwd_kernel_info(i, &d) == CONVBWD_SUCCESS);
        if (d.direction != CONVBWD_BWD_DATA || !std::strstr(d.name, "_mma") || !std::strstr(d.schedule, " vec=4"))
            continue;
        const std::string name = d.name;
        CAPTURE(name);
        const int f = class_filter_or(d, 3), stride = std::string(d.stride_class) == "s2" ? 2 : 1;
        const Layout layout = d.layout == CONVBWD_NCHW ? Layout::NCHW : Layout::NHWC;
        // The staged chunks (stage > 0) load groups of 8 channels, the lanes groups of 4.
        const bool staged = std::strstr(d.schedule, " stage=") && !std::strstr(d.schedule, " stage=0");
        const int v = staged ? 8 : 4;
        auto problem = [&](int K) {
            return with_derived_output(ConvProblem{.N = 2, .C = 16, .H = 6, .W = 6, .K = K, .R = f, .S = f, .G = 1,
                                                   .pad_top = f / 2, .pad_bottom = f / 2, .pad_left = f / 2,
                                                   .pad_right = f / 2, .stride_h = stride, .stride_w = stride,
                                                   .dtype = (DType)d.dtype, .layout = layout});
        };
        convbwd_exec e{};
        e.target = d.target;
        e.kernel = d.name;
        const char *got = nullptr;
        if (layout == Layout::NCHW) {
            // NCHW reads a copy of dy with its channels innermost, zero past k: any k.
            convbwd_problem c = to_c(problem(38));
            CHECK(convbwd_select_kernel(&c, CONVBWD_BWD_DATA, d.dtype, CONVBWD_NCHW, &e, &got) == CONVBWD_SUCCESS);
            checked++;
            continue;
        }
        convbwd_problem c = to_c(problem(40));
        CHECK(convbwd_select_kernel(&c, CONVBWD_BWD_DATA, d.dtype, CONVBWD_NHWC, &e, &got) == CONVBWD_SUCCESS);
        const int bad_k = staged ? 36 : 38;
        c = to_c(problem(bad_k));
        CHECK(convbwd_select_kernel(&c, CONVBWD_BWD_DATA, d.dtype, CONVBWD_NHWC, &e, &got) == CONVBWD_NO_KERNEL);
        CHECK_MESSAGE(std::string(convbwd_last_error()).find("channels: k = " + std::to_string(bad_k) +
                                                             " is not a multiple of " + std::to_string(v)) !=
                          std::string::npos,
                      convbwd_last_error());
        // dy with pixels of 42 elements (k = 40 and 2 of padding; rows and images at multiples of
        // the vector), then packed one element past an aligned base.
        const ConvProblem p = problem(40);
        const int64_t W = 42, H = (W * p.Q + v - 1) / v * v, N = H * p.P;
        std::vector<uint16_t> mem((size_t)(N * p.N) + 64);
        convbwd_problem cp = to_c(p);
        struct Case { int64_t strides[4]; int offset; const char *refusal; };
        std::vector<Case> cases = {{{N, 1, H, W}, 0, "tensors: dy.strides[3] (W) = 42"}};
        if (d.target != CONVBWD_TARGET_OPENCL) cases.push_back({{0, 0, 0, 0}, 1, "tensors: dy.data"});
        for (const Case &cs : cases) {
            convbwd_tensor tdy{mem.data() + cs.offset, d.dtype, CONVBWD_NHWC, {}}, tw{mem.data(), d.dtype, CONVBWD_NHWC, {}},
                tdx{mem.data(), d.dtype, CONVBWD_NHWC, {}};
            std::copy(cs.strides, cs.strides + 4, tdy.strides);
            CHECK(convbwd_bwd_data(&cp, &tdy, &tw, &tdx, 1.0f, 0.0f, &e) == CONVBWD_NO_KERNEL);
            const std::string err = convbwd_last_error();
            CHECK_MESSAGE(err.find(cs.refusal) != std::string::npos, err);
        }
        checked++;
    }
    MESSAGE(checked, " fragment kernels with vec=4 checked");
}

// Rule G1 (runtime/src/dispatch.cpp): where the stride-1 fragment defaults of a dtype and filter class
// (k3, any) hold a 32-pixel block (tile_m = 2) and a 16-pixel one after it, a 3x3 (1x3) layer's plane of 14
// or 7 columns goes to the 16-pixel kernel, 28 columns to the 32-pixel one, and the 32-pixel kernel
// named by the caller still takes 14. Runs where those cuda kernels are built (selection needs no GPU).
TEST_CASE("fragment backward-data defaults: planes of at most half a block's columns go to narrower blocks") {
    int checked = 0;
    for (const char *fc : {"k3", "any"})
    for (convbwd_layout lay : {CONVBWD_NHWC, CONVBWD_NCHW})
    for (convbwd_dtype dt : {CONVBWD_BF16, CONVBWD_F16}) {
        std::string wide, narrow;
        for (int i = 0; i < convbwd_kernel_count(); i++) {
            convbwd_kernel_desc d;
            REQUIRE(convbwd_kernel_info(i, &d) == CONVBWD_SUCCESS);
            if (d.direction != CONVBWD_BWD_DATA || d.target != CONVBWD_TARGET_CUDA || d.dtype != dt || d.layout != lay ||
                std::string(d.family) != "conv_bwd_data_mma_gpu" || std::string(d.stride_class) != "s1" ||
                std::string(d.filter_class) != fc || std::string(d.role) != "default" || !std::strstr(d.schedule, " vec=4"))
                continue;
            if (std::strstr(d.schedule, "tile_m=2") && wide.empty()) wide = d.name;
            if (std::strstr(d.schedule, "tile_m=1") && !wide.empty() && narrow.empty()) narrow = d.name;
        }
        if (wide.empty() || narrow.empty()) continue;
        auto pick = [&](int W, const char *named) {
            // 3x3 for the class k3, 1x3 (Inception's) for the class any.
            const int R = std::string(fc) == "k3" ? 3 : 1;
            return cuda_data_choice(ConvProblem{.N = 2, .C = 64, .H = W, .W = W, .K = 64, .R = R, .S = 3, .G = 1,
                                                .pad_top = R / 2, .pad_bottom = R / 2, .pad_left = 1, .pad_right = 1,
                                                .dtype = (DType)dt,
                                                .layout = lay == CONVBWD_NCHW ? Layout::NCHW : Layout::NHWC},
                                    named);
        };
        CAPTURE(fc);
        CAPTURE(wide);
        CAPTURE(narrow);
        CHECK(pick(14, nullptr) == narrow);
        CHECK(pick(7, nullptr) == narrow);
        CHECK(pick(28, nullptr) == wide);
        CHECK(pick(14, wide.c_str()) == wide);
        checked++;
    }
    MESSAGE(checked, " layouts x dtypes x filter classes checked");
}

// Rule G3 (runtime/src/dispatch.cpp): where the any-filter fragment backward-weight defaults of a dtype
// and layout hold a stage-0 block of more output channels (k) and then one of fewer, a layer whose k is
// half the first block's rows goes to the later one, k = the rows stays, and named by the caller the first
// kernel takes the half. Runs where those cuda kernels are built (selection needs no GPU).
TEST_CASE("fragment backward-weight defaults: k of at most half a block's rows goes to blocks of fewer") {
    int checked = 0;
    for (convbwd_layout lay : {CONVBWD_NHWC, CONVBWD_NCHW})
    for (convbwd_dtype dt : {CONVBWD_BF16, CONVBWD_F16}) {
        std::string wide, narrow;
        int rows = 0;
        for (int i = 0; i < convbwd_kernel_count(); i++) {
            convbwd_kernel_desc d;
            REQUIRE(convbwd_kernel_info(i, &d) == CONVBWD_SUCCESS);
            if (d.direction != CONVBWD_BWD_WEIGHT || d.target != CONVBWD_TARGET_CUDA || d.dtype != dt ||
                d.layout != lay || std::string(d.family) != "conv_bwd_weight_mma_gpu" ||
                std::string(d.stride_class) != "any" || std::string(d.filter_class) != "any" ||
                std::string(d.role) != "default")
                continue;
            const BwdWeightMmaGpuParams g = kernel_params<BwdWeightMmaGpuParams>(d);
            if (wide.empty() && g.stage == 0) wide = d.name, rows = weight_block_rows(g);
            else if (!wide.empty() && narrow.empty() && weight_block_rows(g) < rows) narrow = d.name;
        }
        if (wide.empty() || narrow.empty()) continue;
        // Inception's 1x7 (the class any), channels multiples of 8 (every default of the class takes them).
        auto pick = [&](int K, const char *named) {
            return cuda_choice(ConvProblem{.N = 2, .C = 64, .H = 12, .W = 12, .K = K, .R = 1, .S = 7, .G = 1,
                                           .pad_left = 3, .pad_right = 3, .dtype = (DType)dt,
                                           .layout = lay == CONVBWD_NCHW ? Layout::NCHW : Layout::NHWC},
                               CONVBWD_BWD_WEIGHT, named);
        };
        CAPTURE(wide);
        CAPTURE(narrow);
        CAPTURE(rows);
        CHECK(pick(rows / 2, nullptr) == narrow);
        CHECK(pick(rows, nullptr) == wide);
        CHECK(pick(rows / 2, wide.c_str()) == wide);
        checked++;
    }
    MESSAGE(checked, " layouts x dtypes checked");
}

// Rule G2 (runtime/src/dispatch.cpp): a fragment backward-data default that copies dy first (NCHW,
// vec=4) leaves a 1x1 layer of c < 128 to the default after it that reads dy in place; c = 128 and 256
// stay on it, and named by the caller it takes c = 64. Runs where those cuda kernels are built.
TEST_CASE("fragment backward-data defaults: 1x1 layers of few channels skip the kernels that copy dy") {
    int checked = 0;
    for (const char *sc : {"s1", "s2"})
    for (convbwd_dtype dt : {CONVBWD_BF16, CONVBWD_F16}) {
        std::string copying, in_place;
        for (int i = 0; i < convbwd_kernel_count(); i++) {
            convbwd_kernel_desc d;
            REQUIRE(convbwd_kernel_info(i, &d) == CONVBWD_SUCCESS);
            if (d.direction != CONVBWD_BWD_DATA || d.target != CONVBWD_TARGET_CUDA || d.dtype != dt ||
                d.layout != CONVBWD_NCHW || std::string(d.family) != "conv_bwd_data_mma_gpu" ||
                std::string(d.stride_class) != sc || std::string(d.filter_class) != "k1" || std::string(d.role) != "default")
                continue;
            const bool copies = std::strstr(d.schedule, " vec=4") != nullptr;
            if (copies && copying.empty()) copying = d.name;
            if (!copies && !copying.empty() && in_place.empty()) in_place = d.name;
        }
        if (copying.empty() || in_place.empty()) continue;
        auto pick = [&](int C, const char *named) {
            const int u = std::string(sc) == "s2" ? 2 : 1;
            return cuda_data_choice(ConvProblem{.N = 2, .C = C, .H = 14, .W = 14, .K = 256, .R = 1, .S = 1, .G = 1,
                                                .stride_h = u, .stride_w = u, .dtype = (DType)dt, .layout = Layout::NCHW},
                                    named);
        };
        CAPTURE(copying);
        CAPTURE(in_place);
        CHECK(pick(64, nullptr) == in_place);
        CHECK(pick(128, nullptr) == copying);
        CHECK(pick(256, nullptr) == copying);
        CHECK(pick(64, copying.c_str()) == copying);
        checked++;
    }
    MESSAGE(checked, " strides x dtypes checked");
}

// Matrix-fragment backward-weight kernels with staged chunks (stage > 0) read x's and dy's channels
// in groups of 8: they refuse c or k not a multiple of 8; NHWC ones load a group in place as one
// vector and refuse x's or dy's strides or base not multiples of 8 elements too, naming what; packed
// tensors of multiples of 8 pass. Refused before anything runs (the host buffers below are never
// read). NCHW ones load a pixel a thread: no condition on strides or bases (weight_mma_input_vector).
TEST_CASE("staged fragment backward-weight kernels refuse channels, strides and bases they cannot load") {
    int checked = 0;
    for (int i = 0; i < convbwd_kernel_count(); i++) {
        convbwd_kernel_desc d;
        REQUIRE(convbwd_kernel_info(i, &d) == CONVBWD_SUCCESS);
        if (d.direction != CONVBWD_BWD_WEIGHT || !std::strstr(d.name, "_mma") || !std::strstr(d.schedule, " stage="))
            continue;
        if (std::strstr(d.schedule, " stage=0")) continue;
        const std::string name = d.name;
        CAPTURE(name);
        const int f = class_filter_or(d, 3);
        const bool nhwc = d.layout == CONVBWD_NHWC;
        auto problem = [&](int C, int K) {
            return with_derived_output(ConvProblem{.N = 2, .C = C, .H = 6, .W = 6, .K = K, .R = f, .S = f, .G = 1,
                                                   .pad_top = f / 2, .pad_bottom = f / 2, .pad_left = f / 2,
                                                   .pad_right = f / 2, .dtype = (DType)d.dtype,
                                                   .layout = nhwc ? Layout::NHWC : Layout::NCHW});
        };
        convbwd_exec e{};
        e.target = d.target;
        e.kernel = d.name;
        const char *got = nullptr;
        convbwd_problem c = to_c(problem(16, 24));
        CHECK(convbwd_select_kernel(&c, CONVBWD_BWD_WEIGHT, d.dtype, d.layout, &e, &got) == CONVBWD_SUCCESS);
        for (auto ck : {std::pair{12, 24}, std::pair{16, 20}}) {
            c = to_c(problem(ck.first, ck.second));
            CHECK(convbwd_select_kernel(&c, CONVBWD_BWD_WEIGHT, d.dtype, d.layout, &e, &got) == CONVBWD_NO_KERNEL);
            const std::string err = convbwd_last_error();
            CHECK_MESSAGE(err.find("channels: ") != std::string::npos, err);
            CHECK_MESSAGE(err.find("vectors of 8") != std::string::npos, err);
        }
        if (!nhwc) {
            checked++;
            continue;
        }
        // x with pixels of 20 elements (c = 16 and 4 of padding), then packed one element past an
        // aligned base; dy likewise.
        const ConvProblem p = problem(16, 24);
        std::vector<uint16_t> mem(4096);
        convbwd_problem cp = to_c(p);
        struct Case { int which; int64_t strides[4]; int offset; const char *refusal; };
        const int64_t W = 20, H = W * p.W, N = H * p.H;
        const std::vector<Case> cases = {{0, {N, 1, H, W}, 0, "tensors: x.strides[3] (W) = 20"},
                                         {0, {0, 0, 0, 0}, 1, "tensors: x.data"},
                                         {1, {0, 0, 0, 0}, 1, "tensors: dy.data"}};
        for (const Case &cs : cases) {
            convbwd_tensor tx{mem.data() + (cs.which == 0 ? cs.offset : 0), d.dtype, CONVBWD_NHWC, {}},
                tdy{mem.data() + (cs.which == 1 ? cs.offset : 0), d.dtype, CONVBWD_NHWC, {}},
                tdw{mem.data(), d.dtype, CONVBWD_NHWC, {}};
            if (cs.which == 0) std::copy(cs.strides, cs.strides + 4, tx.strides);
            CHECK(convbwd_bwd_weight(&cp, &tx, &tdy, &tdw, 1.0f, 0.0f, &e) == CONVBWD_NO_KERNEL);
            const std::string err = convbwd_last_error();
            CHECK_MESSAGE(err.find(cs.refusal) != std::string::npos, err);
        }
        checked++;
    }
    MESSAGE(checked, " staged fragment backward-weight kernels checked");
}

// Staged backward-data kernels (conv_bwd_data_staged_gpu) refuse, naming why: c / groups under half
// their block's channels and k / groups under half their chunk of k (performance conditions), and a
// grouped problem whose c / groups is not a multiple of their block's channels (each block reads
// its group from its first channel); they take c / groups and k / groups at half, and groups whose
// c / groups is a multiple of the block. Runs
// where such a kernel is built (the OpenCL candidates: every CI build).
TEST_CASE("staged backward-data kernels refuse small c or k per group and groups their block straddles") {
    int checked = 0;
    for (int i = 0; i < convbwd_kernel_count(); i++) {
        convbwd_kernel_desc d;
        REQUIRE(convbwd_kernel_info(i, &d) == CONVBWD_SUCCESS);
        if (std::string(d.family) != "conv_bwd_data_staged_gpu") continue;
        const BwdDataStagedGpuParams sp = kernel_params<BwdDataStagedGpuParams>(d);
        const int chunk = sp.block_k;
        REQUIRE(chunk > 0);
        const int block_c = data_block_channels(sp);
        const int stride = std::string(d.stride_class) == "s1" ? 1 : 2;
        const int f = class_filter_or(d, 5), pad = f / 2;  // the class's filter (Winograd: k3, k5)
        CAPTURE(std::string(d.name));
        auto select = [&](int C, int K, int G) {
            return select_named(d, CONVBWD_BWD_DATA,
                                {.N = 1, .C = C, .H = 9, .W = 9, .K = K, .R = f, .S = f, .G = G, .pad_top = pad,
                                 .pad_bottom = pad, .pad_left = pad, .pad_right = pad, .stride_h = stride, .stride_w = stride});
        };
        CHECK(select(block_c, chunk / 2, 1) == CONVBWD_SUCCESS);
        CHECK(select(block_c / 2, chunk, 1) == CONVBWD_SUCCESS);
        CHECK(select(block_c / 2 - 1, chunk, 1) == CONVBWD_NO_KERNEL);
        std::string err = convbwd_last_error();
        CHECK_MESSAGE(err.find("c: c / groups = " + std::to_string(block_c / 2 - 1) + " is under half the kernel's block of channels (" +
                               std::to_string(block_c) + ")") != std::string::npos, err);
        CHECK(select(block_c, chunk / 2 - 1, 1) == CONVBWD_NO_KERNEL);
        err = convbwd_last_error();
        CHECK_MESSAGE(err.find("k: k / groups = " + std::to_string(chunk / 2 - 1)) != std::string::npos, err);
        CHECK_MESSAGE(err.find("block_k = " + std::to_string(chunk)) != std::string::npos, err);
        if (sp.winograd) {
            // Its transformed tensors are one device allocation each: over 2^31 - 1 bytes is refused
            // (dy of 1.56 GiB here; (m + r - 1)^2 / m^2 of it and more transformed: 1.78x for F(6x6, 3x3),
            // whose 1 GiB dy would fit), naming why.
            const ConvProblem big{.N = 1, .C = 64, .H = 2560, .W = 2560, .K = 64, .R = f, .S = f, .pad_top = pad,
                                  .pad_bottom = pad, .pad_left = pad, .pad_right = pad};
            CHECK(select_named(d, CONVBWD_BWD_DATA, big) == CONVBWD_NO_KERNEL);
            err = convbwd_last_error();
            CHECK_MESSAGE(err.find("size: the Winograd kernel's transformed tensors take") != std::string::npos, err);
            ConvProblem fits = big;
            fits.H = fits.W = 512;
            CHECK(select_named(d, CONVBWD_BWD_DATA, fits) == CONVBWD_SUCCESS);
        }
        CHECK(select(2 * block_c, chunk, 2) == CONVBWD_SUCCESS);
        CHECK(select(3 * block_c, 2 * chunk, 2) == CONVBWD_NO_KERNEL);  // c / groups = 1.5 blocks
        err = convbwd_last_error();
        CHECK_MESSAGE(err.find("groups: c / groups = " + std::to_string(3 * block_c / 2)) != std::string::npos, err);
        checked++;
    }
    MESSAGE(checked, " staged backward-data kernels checked");
}

// Staged backward-weight kernels (conv_bwd_weight_staged_gpu) take groups == 1 only (a block's k
// would have to lie in one group): a grouped problem is refused, naming the groups; the same
// problem ungrouped is taken. And c or k under half their block's (a performance condition: the
// blocks would run mostly empty) is refused, naming which. Runs where such a kernel is built (the
// OpenCL candidates: every CI build).
TEST_CASE("staged backward-weight kernels refuse grouped problems and c or k under half their block") {
    int checked = 0;
    for (int i = 0; i < convbwd_kernel_count(); i++) {
        convbwd_kernel_desc d;
        REQUIRE(convbwd_kernel_info(i, &d) == CONVBWD_SUCCESS);
        if (std::string(d.family) != "conv_bwd_weight_staged_gpu") continue;
        CAPTURE(std::string(d.name));
        const BwdWeightStagedGpuParams sp = kernel_params<BwdWeightStagedGpuParams>(d);
        const int bc = weight_block_channels(sp), bk = weight_block_k(sp);
        const int stride = std::string(d.stride_class) == "s1" ? 1 : 2;
        const int f = class_filter_or(d, 4);  // 4x4: filter class any; Winograd: k3, k5
        auto select = [&](int G, int C = 0, int K = 0) {
            return select_named(d, CONVBWD_BWD_WEIGHT,
                                {.N = 2, .C = C ? C : 2 * bc, .H = 9, .W = 9, .K = K ? K : 2 * bk, .R = f, .S = f,
                                 .G = G, .pad_top = 1, .pad_bottom = 1, .pad_left = 1, .pad_right = 1,
                                 .stride_h = stride, .stride_w = stride});
        };
        CHECK(select(1) == CONVBWD_SUCCESS);
        CHECK(select(2) == CONVBWD_NO_KERNEL);
        std::string err = convbwd_last_error();
        CHECK_MESSAGE(err.find("groups: a staged kernel (one GEMM over the channels), problem groups = 2") != std::string::npos,
                      err);
        CHECK(select(1, bc / 2, bk / 2) == CONVBWD_SUCCESS);
        CHECK(select(1, bc / 2 - 1) == CONVBWD_NO_KERNEL);
        err = convbwd_last_error();
        CHECK_MESSAGE(err.find("c: c / groups = " + std::to_string(bc / 2 - 1) + " is under half the kernel's block of channels (" +
                               std::to_string(bc) + ")") != std::string::npos, err);
        CHECK(select(1, 0, bk / 2 - 1) == CONVBWD_NO_KERNEL);
        err = convbwd_last_error();
        CHECK_MESSAGE(err.find("k: k / groups = " + std::to_string(bk / 2 - 1) + " is under half the kernel's block of k (" +
                               std::to_string(bk) + ")") != std::string::npos, err);
        // The workspace holds a split's partial sums of every tap (Winograd: every transform point,
        // (m + r - 1)^2 of them): the size query says so.
        {
            ConvProblem p{.N = 2, .C = 2 * bc, .H = 9, .W = 9, .K = 2 * bk, .R = f, .S = f, .pad_top = 1, .pad_bottom = 1,
                          .pad_left = 1, .pad_right = 1, .stride_h = stride, .stride_w = stride};
            p.layout = d.layout == CONVBWD_NCHW ? Layout::NCHW : Layout::NHWC;
            convbwd_problem c = to_c(with_derived_output(p));
            convbwd_exec e{};
            e.target = d.target;
            e.kernel = d.name;
            size_t bytes = 0;
            REQUIRE(convbwd_workspace_size(&c, CONVBWD_BWD_WEIGHT, CONVBWD_F32, d.layout, &e, &bytes) == CONVBWD_SUCCESS);
            const size_t taps = sp.winograd ? (size_t)(sp.winograd + f - 1) * (sp.winograd + f - 1) : (size_t)f * f;
            const size_t per_split = (size_t)p.K * p.C * taps * sizeof(float);
            CHECK(bytes >= per_split);
            CHECK(bytes % per_split == 0);
        }
        checked++;
    }
    MESSAGE(checked, " staged backward-weight kernels checked");
}

// GPU kernels put rows x images on a grid dim of at most 65535 blocks: the dispatcher refuses
// where a kernel would need more, naming the rows and images, and only there (a plane read as one
// row has one row per image; unstaged backward-weight kernels put no rows on the grid).
TEST_CASE("GPU kernels refuse more rows x images than a grid dim holds, naming them") {
    int checked = 0;
    for (int i = 0; i < convbwd_kernel_count(); i++) {
        convbwd_kernel_desc d;
        REQUIRE(convbwd_kernel_info(i, &d) == CONVBWD_SUCCESS);
        if (d.target == CONVBWD_TARGET_HOST) continue;
        const std::string name = d.name, sched = d.schedule;
        CAPTURE(name);
        const bool data = d.direction == CONVBWD_BWD_DATA;
        const int stride = std::string(d.stride_class) == "s2" ? 2 : 1;
        const int f = class_filter_or(d, 3);
        const bool flat = data && f == 1 && stride == 1 && sched.find("flat=1") != std::string::npos;
        const bool staged_weight = !data && sched.find("stage=1") != std::string::npos;
        // {images, rows, expect refusal}; 4 channels, rows of 4 columns (what vec and xvec need).
        struct Case { int n, h; bool refused; };
        std::vector<Case> cases;
        cases.push_back({1, 60, false});
        // Backward-data with fuse_rows puts a plane's column tiles on that dim instead (W * H over the
        // column threads, or N), unless a staged copy (stage 1, 2) puts its padded rows there.
        const bool fused = data && sched.find("fuse_rows=1") != std::string::npos;
        const bool data_copy = data && (sched.find("stage=1") != std::string::npos || sched.find("stage=2") != std::string::npos);
        cases.push_back({2000, 60, data ? !flat && (!fused || data_copy) : staged_weight});
        if (data && f == 3 && stride == 1 && sched.find("stage=1") != std::string::npos &&
            std::string(d.family) != "conv_bwd_data_mma_gpu") {  // (a fragment kernel's stage: k-blocks a chunk)
            // A staged copy of dy has h + 2 rows (the 3x3 filter's reach): 60 x 1092 fits, 60 x
            // 1093 = 65580 does not, though h x n = 63394 would.
            cases.push_back({1092, 58, false});
            cases.push_back({1093, 58, true});
        }
        for (const Case &c : cases) {
            CAPTURE(c.n);
            CAPTURE(c.h);
            // (Depthwise kernels take c = k = groups; staged kernels c and k of at least half their
            // block's: backward-data its channels and chunk of k, backward-weight its c and k.)
            const std::string family = d.family;
            const int G = family.find("_dw_") != std::string::npos ? 4 : 1;
            int C = 4, K = 4;
            if (family == "conv_bwd_data_staged_gpu") {
                const BwdDataStagedGpuParams sp = kernel_params<BwdDataStagedGpuParams>(d);
                C = data_block_channels(sp), K = sp.block_k;
            }
            if (family == "conv_bwd_weight_staged_gpu") {
                const BwdWeightStagedGpuParams sp = kernel_params<BwdWeightStagedGpuParams>(d);
                C = weight_block_channels(sp), K = weight_block_k(sp);
            }
            // (Staged fragment chunks load channels in groups of 8: backward-weight c and k, backward-data k.)
            if (family == "conv_bwd_weight_mma_gpu")
                C = K = std::max(4, kernel_params<BwdWeightMmaGpuParams>(d).channel_vector());
            if (family == "conv_bwd_data_mma_gpu")
                K = std::max(4, data_mma_input_vector(kernel_params<BwdDataMmaGpuParams>(d),
                                                      d.layout == CONVBWD_NCHW ? Layout::NCHW : Layout::NHWC));
            ConvProblem p{.N = c.n, .C = C, .H = c.h, .W = 4, .K = K, .R = f, .S = f, .G = G, .pad_top = f / 2,
                          .pad_bottom = f / 2, .pad_left = f / 2, .pad_right = f / 2, .stride_h = stride,
                          .stride_w = stride, .dtype = (DType)d.dtype, .layout = d.layout == CONVBWD_NCHW ? Layout::NCHW : Layout::NHWC};
            p = with_derived_output(p);
            convbwd_problem cp = to_c(p);
            convbwd_exec e{};
            e.target = d.target;
            e.kernel = d.name;
            const char *got = nullptr;
            const convbwd_status st = convbwd_select_kernel(&cp, d.direction, d.dtype, d.layout, &e, &got);
            const std::string msg = st == CONVBWD_SUCCESS ? "" : convbwd_last_error();
            CAPTURE(msg);
            if (c.refused) {
                CHECK(st == CONVBWD_NO_KERNEL);
                CHECK(msg.find("rows: h = " + std::to_string(c.h) + ", n = " + std::to_string(c.n)) != std::string::npos);
            } else {
                CHECK(st == CONVBWD_SUCCESS);
            }
        }
        checked++;
    }
    MESSAGE(checked, " GPU kernels checked");
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
