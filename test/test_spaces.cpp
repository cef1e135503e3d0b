// Schedule spaces, the kernel manifest and the tuning database, through the C API: every built
// kernel is a valid point of its family's space whose name derives from its knobs; a malformed
// manifest or database is refused naming the file, line and field; a user's database picks a
// non-default kernel and a launch-time knob for its problem and nothing else.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <unistd.h>

#include "HalideRuntime.h"
#include "conformance.h"
#include "schedules/manifest.h"

#ifndef CONVBWD_SOURCE_DIR
#error "CONVBWD_SOURCE_DIR must be defined by the build"
#endif

using namespace convbwd;
using namespace convbwd::test;

namespace {

std::string key_of(const ConvProblem &p, convbwd_direction d, convbwd_target t = CONVBWD_TARGET_HOST) {
    convbwd_problem c = to_c(p);
    convbwd_exec e{};
    e.target = t;
    char key[256];
    REQUIRE(convbwd_problem_key(&c, d, to_c(p.dtype), to_c(p.layout), &e, key, sizeof key) == CONVBWD_SUCCESS);
    return key;
}

std::string chosen(const ConvProblem &p, convbwd_direction d, const convbwd_exec *e = nullptr) {
    convbwd_problem c = to_c(p);
    const char *name = nullptr;
    REQUIRE(convbwd_select_kernel(&c, d, to_c(p.dtype), to_c(p.layout), e, &name) == CONVBWD_SUCCESS);
    return name;
}

size_t workspace(const ConvProblem &p, convbwd_direction d) {
    convbwd_problem c = to_c(p);
    size_t bytes = 0;
    REQUIRE(convbwd_workspace_size(&c, d, to_c(p.dtype), to_c(p.layout), nullptr, &bytes) == CONVBWD_SUCCESS);
    return bytes;
}

std::string write_file(const std::string &name, const std::string &text) {
    const std::string path = "/tmp/convbwd_test_" + std::to_string(::getpid()) + "_" + name;
    std::ofstream(path) << text;
    return path;
}

// Unloads the user's database at scope exit (the tests share the process).
struct DbGuard {
    ~DbGuard() { convbwd_load_tuning_db(nullptr); }
};

ConvProblem host_problem() {
    return with_derived_output(ConvProblem{.N = 2, .C = 8, .H = 9, .W = 9, .K = 8, .R = 3, .S = 3, .pad_top = 1,
                                           .pad_bottom = 1, .pad_left = 1, .pad_right = 1, .layout = Layout::NHWC});
}

// The default tuning database's records (schedules/tuning.db): line, problem key, kernel, launch knobs.
struct DbRecord {
    int line;
    std::string key, kernel, knobs;
};
std::vector<DbRecord> default_db_records() {
    std::ifstream f(std::string(CONVBWD_SOURCE_DIR) + "/schedules/tuning.db");
    REQUIRE(f.good());
    std::vector<DbRecord> out;
    int lineno = 0;
    for (std::string line; std::getline(f, line);) {
        ++lineno;
        if (line.empty() || line[0] == '#') continue;
        std::istringstream in(line);
        DbRecord r{lineno, {}, {}, {}};
        in >> r.key >> r.kernel;
        std::getline(in, r.knobs);
        out.push_back(r);
    }
    return out;
}

}  // namespace

TEST_SUITE("spaces") {

TEST_CASE("every built kernel is a valid point of its family's space, named from its knobs") {
    std::vector<ManifestRecord> records;
    const std::string manifest = std::string(CONVBWD_SOURCE_DIR) + "/schedules/kernels.manifest";
    REQUIRE_MESSAGE(read_manifest(manifest, &records).empty(), read_manifest(manifest, &records));
    for (int i = 0; i < convbwd_kernel_count(); i++) {
        convbwd_kernel_desc d;
        REQUIRE(convbwd_kernel_info(i, &d) == CONVBWD_SUCCESS);
        CAPTURE(std::string(d.name));
        const Family *f = find_family(d.family);
        REQUIRE(f != nullptr);
        KnobValues kv = default_values(*f);
        CHECK(parse_knobs(d.schedule, &kv) == "");
        // The schedule string lists every knob of the family.
        CHECK(print_knobs(kv) == d.schedule);
        const KernelClass cls{d.direction == CONVBWD_BWD_DATA ? Direction::BwdData : Direction::BwdWeight,
                              (DType)d.dtype, d.layout == CONVBWD_NCHW ? Layout::NCHW : Layout::NHWC,
                              std::string(d.stride_class) == "s1"   ? StrideClass::S1
                              : std::string(d.stride_class) == "s2" ? StrideClass::S2
                                                                    : StrideClass::Any,
                              filter_class_named(d.filter_class),
                              d.target == CONVBWD_TARGET_HOST     ? Device::Host
                              : d.target == CONVBWD_TARGET_OPENCL ? Device::OpenCL
                              : d.target == CONVBWD_TARGET_CUDA   ? Device::Cuda
                                                                  : Device::AmdGpu};
        CHECK(valid(kv, cls) == "");
        // The tag is derived from the compile-time knobs: the name is a function of the point.
        CHECK(kernel_name(cls.dir, cls.dtype, cls.layout, cls.stride, cls.filter, cls.device, kernel_tag(kv)) == d.name);
        // And the kernel is the manifest's record of that name, with its role.
        bool found = false;
        for (const ManifestRecord &r : records)
            if (r.name == d.name) {
                found = true;
                CHECK(std::string(to_string(r.role)) == d.role);
            }
        CHECK(found);
    }
}

TEST_CASE("a malformed manifest is refused naming the file, line and field") {
    struct Case {
        const char *text, *expect;
    };
    const Case cases[] = {
        {"conv_bwd_data_host f32 nhwc s1 k3 host default\n", "m.txt:1: record: expected"},
        {"# c\n\nconv_bwd_data_hots f32 nhwc s1 k3 host default 10\n", "m.txt:3: family: 'conv_bwd_data_hots'"},
        {"conv_bwd_data_host f64 nhwc s1 k3 host default 10\n", "m.txt:1: dtype: 'f64'"},
        {"conv_bwd_data_host f32 nhcw s1 k3 host default 10\n", "m.txt:1: layout"},
        {"conv_bwd_data_host f32 nhwc s3 k3 host default 10\n", "m.txt:1: stride"},
        {"conv_bwd_data_host f32 nhwc s1 k7 host default 10\n", "m.txt:1: filter"},
        {"conv_bwd_data_host f32 nhwc s1 k3 cuda default 10\n", "m.txt:1: knobs: not valid: family conv_bwd_data_host does not build for cuda"},
        {"conv_bwd_data_host f32 nhwc s1 k3 host dflt 10\n", "m.txt:1: role"},
        {"conv_bwd_data_host f32 nhwc s1 k3 host default x\n", "m.txt:1: order"},
        {"conv_bwd_data_host f32 nhwc s1 k3 host default 10 tile_q=2\n", "m.txt:1: knobs: unknown knob 'tile_q'"},
        {"conv_bwd_data_host f32 nhwc s1 k3 host default 10 tile_c=9\n", "m.txt:1: knobs: knob tile_c = 9 is outside its domain"},
        {"conv_bwd_data_host f32 nhwc s1 k3 host default 10 tile_c=two\n", "m.txt:1: knobs: knob tile_c = 'two' is not an integer"},
        {"conv_bwd_data_host f32 nhwc s1 k3 host default 10 tile_c=4 tile_x=8\n", "m.txt:1: knobs: not valid: tile_c * tile_x"},
        {"conv_bwd_weight_gpu f32 nhwc s1 k3 cuda default 10 vec=4\n", "m.txt:1: knobs: not valid: vec=4 needs stage=1"},
        // Host depthwise backward-weight with every tap in the register tile (full_taps).
        {"conv_bwd_weight_dw_host f32 nchw s1 k3 host candidate 10 vec=16 full_taps=1\n",
         "m.txt:1: knobs: not valid: full_taps = 1: tile_c (nhwc; nchw with channel_vectors = 1) or tile_k (nchw) * R * S <= 28 accumulators"},
        {"conv_bwd_weight_dw_host f32 nhwc any any host candidate 10 vec=16 full_taps=1\n",
         "m.txt:1: knobs: not valid: full_taps = 1: a class filter"},
        {"conv_bwd_weight_dw_host f32 nhwc s1 k5 host candidate 10 tile_c=2 vec=16 full_taps=1\n",
         "m.txt:1: knobs: not valid: full_taps = 1: tile_c (nhwc; nchw with channel_vectors = 1) or tile_k (nchw) * R * S <= 28 accumulators"},
        {"conv_bwd_weight_dw_host f32 nchw s1 k3 host candidate 10 tile_k=1 full_taps=1 x_in_place=1\n",
         "m.txt:1: knobs: not valid: x_in_place = 1: layout nhwc, or nchw with channel_vectors = 1"},
        // ... along the channels in NCHW (channel_vectors) and written from the tile (direct).
        {"conv_bwd_weight_dw_host f32 nchw s1 k3 host candidate 10 tile_c=4 vec=16 full_taps=1 channel_vectors=1\n",
         "m.txt:1: knobs: not valid: full_taps = 1: tile_c (nhwc; nchw with channel_vectors = 1) or tile_k (nchw) * R * S <= 28 accumulators"},
        {"conv_bwd_weight_dw_host f32 nhwc s1 k3 host candidate 10 tile_c=1 full_taps=1 channel_vectors=1\n",
         "m.txt:1: knobs: not valid: channel_vectors = 1: layout nchw, full_taps = 1, dy_in_place = 0"},
        {"conv_bwd_weight_dw_host f32 nchw s1 k3 host candidate 10 tile_c=1 vec=16 full_taps=1 channel_vectors=1 dy_in_place=1\n",
         "m.txt:1: knobs: not valid: channel_vectors = 1: layout nchw, full_taps = 1, dy_in_place = 0"},
        {"conv_bwd_weight_dw_host f32 nchw s1 k3 host candidate 10 tile_k=1 full_taps=1 direct=1\n",
         "m.txt:1: knobs: not valid: direct = 1: full_taps = 1 along the channels"},
        {"conv_bwd_weight_dw_host f32 nhwc s1 k3 host candidate 10 direct=1\n",
         "m.txt:1: knobs: not valid: direct = 1: full_taps = 1 along the channels"},
        {"conv_bwd_weight_dw_host f32 nhwc s1 k3 host candidate 10 tile_q=2\n",
         "m.txt:1: knobs: not valid: tile_q > 1 and x_in_place = 1 need full_taps = 1"},
        // Staged fragment backward-weight: its rules between knobs, device and shared memory.
        {"conv_bwd_weight_mma_gpu bf16 nhwc any k1 cuda candidate 10 frag=1 stage=2\n",
         "m.txt:1: knobs: not valid: stage > 0 needs vec=4"},
        {"conv_bwd_weight_mma_gpu bf16 nhwc any k1 opencl candidate 10 frag=1 vec=4 stage=2\n",
         "m.txt:1: knobs: not valid: stage > 0 is for cuda"},
        {"conv_bwd_weight_mma_gpu bf16 nhwc any k1 cuda candidate 10 frag=1 tile_m=4 tile_n=8 vec=4 stage=4 warps_m=2 warps_n=2\n",
         "m.txt:1: knobs: not valid: stage > 0: block accumulators + chunk <= 48 KiB of shared memory (98304 bytes)"},
        // Blocks of warps at stage 0 (each warp loading its own operands): vec 4, at most 4 waves on
        // OpenCL and AMDGPU, the block's fragments within 48 KiB of shared memory.
        {"conv_bwd_weight_mma_gpu bf16 nhwc any k1 cuda candidate 10 frag=1 warps_m=2\n",
         "m.txt:1: knobs: not valid: warps_m, warps_n > 1 with stage = 0 need vec = 4"},
        {"conv_bwd_weight_mma_gpu bf16 nhwc any any opencl candidate 10 frag=1 vec=4 warps_m=4 warps_n=2\n",
         "m.txt:1: knobs: not valid: warps_m x warps_n <= 4 on opencl and amdgpu"},
        {"conv_bwd_weight_mma_gpu bf16 nhwc any any cuda candidate 10 frag=1 tile_m=4 tile_n=8 vec=4 warps_m=2 warps_n=2\n",
         "m.txt:1: knobs: not valid: warps_m x warps_n warps' fragments <= 48 KiB of shared memory (65536 bytes)"},
        // Staged fragment backward-data: NHWC at stride 1 only.
        {"conv_bwd_data_mma_gpu bf16 nhwc s2 k3 cuda candidate 10 frag=1 vec=4 stage=2\n",
         "m.txt:1: knobs: not valid: backward-data stage > 0: NHWC, stride class s1"},
        {"conv_bwd_data_mma_gpu bf16 nchw s1 k3 cuda candidate 10 frag=1 vec=4 stage=2\n",
         "m.txt:1: knobs: not valid: backward-data stage > 0: NHWC, stride class s1"},
        {"conv_bwd_data_mma_gpu bf16 nhwc s1 k3 cuda candidate 10 frag=1 vec=1 warps_n=2\n",
         "m.txt:1: knobs: not valid: warps_m, warps_n > 1 with stage = 0 need vec = 4"},
        // Unrolled k-blocks: the one-warp kernels' loop (the staged chunks' k-blocks are unrolled already).
        {"conv_bwd_data_mma_gpu bf16 nhwc s1 k3 cuda candidate 10 frag=1 vec=4 stage=2 warps_m=2 unroll=2\n",
         "m.txt:1: knobs: not valid: unroll > 1 needs stage = 0"},
        {"conv_bwd_weight_mma_gpu bf16 nhwc any any cuda candidate 10 frag=1 vec=1 unroll=2\n",
         "m.txt:1: knobs: not valid: unroll > 1 needs vec = 4"},
        {"conv_bwd_data_mma_gpu bf16 nhwc s1 k3 cuda candidate 10 frag=1 vec=4 unroll=3\n",
         "m.txt:1: knobs: knob unroll = 3 is outside its domain"},
        // Winograd over the staged GEMM: a 3x3 stride-1 class only, no folded images.
        {"conv_bwd_data_staged_gpu f32 nchw s1 any cuda candidate 10 winograd=4\n",
         "m.txt:1: knobs: not valid: winograd > 0: class s1 k3"},
        {"conv_bwd_data_staged_gpu f32 nchw s2 k3 cuda candidate 10 winograd=4\n",
         "m.txt:1: knobs: not valid: winograd > 0: class s1 k3"},
        {"conv_bwd_data_staged_gpu f32 nchw s1 k3 cuda candidate 10 winograd=2 fold_images=1\n",
         "m.txt:1: knobs: not valid: winograd > 0: fold_images = 0"},
        {"conv_bwd_data_staged_gpu f32 nchw s1 k3 cuda candidate 10 winograd=3\n",
         "m.txt:1: knobs: knob winograd = 3 is outside its domain"},
        {"conv_bwd_weight_staged_gpu f32 nhwc any any cuda candidate 10 winograd=4\n",
         "m.txt:1: knobs: not valid: winograd > 0: class s1 k3"},
        {"conv_bwd_weight_staged_gpu f32 nhwc s1 k3 cuda candidate 10 winograd=6\n",
         "m.txt:1: knobs: knob winograd = 6 is outside its domain"},
        {"conv_bwd_data_staged_gpu f32 nchw s1 k5 cuda candidate 10 winograd=6\n",
         "m.txt:1: knobs: not valid: winograd = 6: m + r - 1 <= 8 transform points (filter 5)"},
        {"conv_bwd_data_staged_gpu f32 nchw s2 k5 cuda candidate 10 winograd=2\n",
         "m.txt:1: knobs: not valid: winograd > 0: class s1 k3 or k5"},
        {"conv_bwd_weight_gpu f32 nhwc s1 k3 cuda default 10\nconv_bwd_weight_gpu f32 nhwc s1 k3 cuda candidate 20 split_blocks=264\n",
         "m.txt:2: knobs: derives the kernel name bwdw_f32_nhwc_s1_k3_cuda_c4k4 of line 1"},
    };
    for (const Case &c : cases) {
        CAPTURE(std::string(c.text));
        std::vector<ManifestRecord> out;
        const std::string e = parse_manifest(c.text, "m.txt", &out);
        CAPTURE(e);
        CHECK(e.rfind(c.expect, 0) == 0);
    }
    // A good record (one line), parsed: its name derives from the knobs that differ from the defaults.
    auto one_record = [](const char *text) {
        std::vector<ManifestRecord> out;
        REQUIRE(parse_manifest(text, "m.txt", &out) == "");
        REQUIRE(out.size() == 1);
        return out[0];
    };
    const ManifestRecord r = one_record(
        "conv_bwd_weight_gpu f32 nchw s1 k3 cuda default 5 stage=1 fuse_taps=1 tile_s=3 unroll_q=7 vec=4 split_blocks=264\n");
    CHECK(r.name == "bwdw_f32_nchw_s1_k3_cuda_c4k4fst3u7v4");
    CHECK(r.knobs.get("split_blocks") == 264);
    // The largest staged point under 48 KiB (64 x 64 accumulators, 8 k-blocks a chunk), named.
    CHECK(one_record("conv_bwd_weight_mma_gpu f16 nhwc any any cuda candidate 5 frag=1 tile_m=2 tile_n=4 vec=4 stage=8 "
                     "warps_m=2 warps_n=2\n").name == "bwdw_f16_nhwc_any_any_cuda_mmaf1m2n4v4s8wm2wn2");
    // A block of warps at stage 0 (each loading its own operands), named.
    CHECK(one_record("conv_bwd_weight_mma_gpu bf16 nhwc any any cuda candidate 5 frag=1 tile_m=2 tile_n=8 vec=4 "
                     "warps_m=2 unroll=2 copy_groups=1\n").name == "bwdw_bf16_nhwc_any_any_cuda_mmaf1m2n8v4wm2u2g");
    CHECK(one_record("conv_bwd_weight_dw_host f32 nhwc s1 k3 host default 0 tile_c=1 vec=16 full_taps=1 x_in_place=1 "
                     "tile_q=4\n").name == "bwdw_f32_nhwc_s1_k3_host_dwc1v16fiq4");
}

// Winograd F(m, r) by Cook-Toom (generators/winograd.h): the identity y = A^T [(G g) . (B^T d)] holds
// for the correlation on random data; F(4, 3)'s matrices are Lavin's; only dyadic ones (F(2, 3)) are
// exact on integers, which the kernels' exact_on_integers trait follows.
TEST_CASE("winograd transforms compute the correlation; only dyadic ones are exact on integers") {
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(-1, 1);
    for (const auto &mr : {std::pair{2, 3}, {4, 3}, {2, 5}, {6, 3}, {4, 5}}) {
        const int m = mr.first, r = mr.second;  // (clang 15: CAPTURE's lambda takes no structured binding)
        CAPTURE(m);
        CAPTURE(r);
        const winograd::Transform t = winograd::transform(m, r);
        REQUIRE(t.alpha == m + r - 1);
        for (int trial = 0; trial < 20; trial++) {
            std::vector<double> d(t.alpha), g(r);
            for (double &x : d) x = u(rng);
            for (double &x : g) x = u(rng);
            for (int i = 0; i < m; i++) {
                double y = 0, want = 0;
                for (int j = 0; j < t.alpha; j++) {
                    double gg = 0, bd = 0;
                    for (int k = 0; k < r; k++) gg += t.g_(j, k) * g[k];
                    for (int k = 0; k < t.alpha; k++) bd += t.b_t(j, k) * d[k];
                    y += t.a_t(i, j) * gg * bd;
                }
                for (int k = 0; k < r; k++) want += d[i + k] * g[k];
                CHECK(std::fabs(y - want) < 1e-12);
            }
        }
    }
    const winograd::Transform f43 = winograd::transform(4, 3);
    const int lavin_bt0[6] = {4, 0, -5, 0, 1, 0}, lavin_bt5[6] = {0, 4, 0, -5, 0, 1};
    for (int j = 0; j < 6; j++) {
        CHECK(f43.b_t(0, j) == lavin_bt0[j]);
        CHECK(f43.b_t(5, j) == lavin_bt5[j]);
    }
    CHECK(f43.g_(1, 0) == doctest::Approx(1.0 / 6));
    CHECK(!f43.dyadic());
    CHECK(winograd::transform(2, 3).dyadic());
    const Family &st = *find_family("conv_bwd_data_staged_gpu");
    KnobValues kv = default_values(st);
    CHECK(!winograd::transform(2, 5).dyadic());  // F(2, 5)'s G has sixths and 24ths
    CHECK(exact_on_integers(kv, FilterClass::K3));
    REQUIRE(parse_knobs("winograd=2", &kv) == "");
    CHECK(exact_on_integers(kv, FilterClass::K3));
    CHECK(!exact_on_integers(kv, FilterClass::K5));
    REQUIRE(parse_knobs("winograd=4", &kv) == "");
    CHECK(!exact_on_integers(kv, FilterClass::K3));
    CHECK(exact_on_integers(default_values(*find_family("conv_bwd_data_gpu")), FilterClass::K5));
    // Backward-weight: F(r x r, m x m), dy's tiles the "filter"; the workspace holds its (m + r - 1)^2
    // points.
    KnobValues wv = default_values(*find_family("conv_bwd_weight_staged_gpu"));
    CHECK(weight_partial_taps(wv, 3, 3).s == 3);
    CHECK(weight_partial_taps(wv, 5, 3).s == 5);
    REQUIRE(parse_knobs("winograd=2", &wv) == "");
    CHECK(exact_on_integers(wv, FilterClass::K3));
    CHECK(weight_partial_taps(wv, 3, 3).r == 4);
    REQUIRE(parse_knobs("winograd=4", &wv) == "");
    CHECK(!exact_on_integers(wv, FilterClass::K3));
    CHECK(weight_partial_taps(wv, 3, 3).s == 6);
    CHECK(weight_partial_taps(wv, 3, 3).r == 6);
    CHECK(weight_partial_taps(wv, 5, 5).s == 8);
    CHECK(!exact_on_integers(wv, FilterClass::K5));
}

TEST_CASE("problem keys are one token, as driver rows carry them") {
    const ConvProblem p = host_problem();
    const std::string key = key_of(p, CONVBWD_BWD_DATA);
    CHECK(key == "bwd_data-f32-nhwc-host-n2-c8-h9-w9-k8-p9-q9-r3-s3-g1-pad1,1,1,1-u1,1-l1,1");
    convbwd_problem c = to_c(p);
    char small[16];
    CHECK(convbwd_problem_key(&c, CONVBWD_BWD_DATA, CONVBWD_F32, CONVBWD_NHWC, nullptr, small, sizeof small) == CONVBWD_BAD_PARAM);
    CHECK(std::string(convbwd_last_error()).find("key_bytes = 16") != std::string::npos);
}

TEST_CASE("a tuning database picks a non-default kernel and a launch-time knob for its problem only") {
    DbGuard guard;
    const ConvProblem p = host_problem();
    const std::string dflt_data = chosen(p, CONVBWD_BWD_DATA), dflt_weight = chosen(p, CONVBWD_BWD_WEIGHT);
    const size_t dflt_ws = workspace(p, CONVBWD_BWD_WEIGHT);
    const std::string generic = "bwdd_f32_nhwc_any_any_host_c1x4p";
    REQUIRE(dflt_data != generic);
    // 162 reduction pixels (N * P * Q), under the default split_pixels (512): one partial sum;
    // the record's split_pixels=0 max_splits=2 makes 2.
    CHECK(dflt_ws == (size_t)8 * 8 * 9 * 1 * sizeof(float));
    const std::string db = write_file("good.db", "# a comment line\n" + key_of(p, CONVBWD_BWD_DATA) + " " + generic +
                                                     "   # the generic kernel\n" + key_of(p, CONVBWD_BWD_WEIGHT) + " " +
                                                     dflt_weight + " max_splits=2 split_pixels=0\n");
    REQUIRE_MESSAGE(convbwd_load_tuning_db(db.c_str()) == CONVBWD_SUCCESS, convbwd_last_error());
    CHECK(chosen(p, CONVBWD_BWD_DATA) == generic);
    CHECK(chosen(p, CONVBWD_BWD_WEIGHT) == dflt_weight);
    CHECK(workspace(p, CONVBWD_BWD_WEIGHT) == (size_t)8 * 8 * 9 * 2 * sizeof(float));
    // The tuned selections compute right (fresh random inputs, poisoned outputs, the reference).
    std::mt19937 rng(3);
    for (Direction d : {Direction::BwdData, Direction::BwdWeight}) {
        RunResult r = run_against_reference(p, d, "", rng);
        REQUIRE_MESSAGE(r.status == CONVBWD_SUCCESS, r.error);
        CHECK_MESSAGE(r.verify.ok, r.verify.first_bad);
    }
    // Another problem (one image more) keeps the defaults.
    ConvProblem q = p;
    q.N = 3;
    CHECK(chosen(q, CONVBWD_BWD_DATA) == dflt_data);
    // exec.kernel sets launch-time knobs too, and refuses compile-time ones, naming them.
    convbwd_problem c = to_c(p);
    convbwd_exec e{};
    const std::string spec = dflt_weight + " max_splits=4 split_pixels=0";
    e.kernel = spec.c_str();
    size_t bytes = 0;
    CHECK(convbwd_workspace_size(&c, CONVBWD_BWD_WEIGHT, CONVBWD_F32, CONVBWD_NHWC, &e, &bytes) == CONVBWD_SUCCESS);
    CHECK(bytes == (size_t)8 * 8 * 9 * 4 * sizeof(float));  // 18 rows in at most 4 splits (of 5 rows): 4
    const std::string spec2 = dflt_weight + " split_pixels=128";  // 162 / 128: one split
    e.kernel = spec2.c_str();
    CHECK(convbwd_workspace_size(&c, CONVBWD_BWD_WEIGHT, CONVBWD_F32, CONVBWD_NHWC, &e, &bytes) == CONVBWD_SUCCESS);
    CHECK(bytes == (size_t)8 * 8 * 9 * 1 * sizeof(float));
    const std::string bad = dflt_weight + " tile_c=1";
    e.kernel = bad.c_str();
    CHECK(convbwd_workspace_size(&c, CONVBWD_BWD_WEIGHT, CONVBWD_F32, CONVBWD_NHWC, &e, &bytes) == CONVBWD_BAD_PARAM);
    CHECK(std::string(convbwd_last_error()).find("knob 'tile_c' is compile-time") != std::string::npos);
    // Unloading restores the defaults.
    CHECK(convbwd_load_tuning_db(nullptr) == CONVBWD_SUCCESS);
    CHECK(chosen(p, CONVBWD_BWD_DATA) == dflt_data);
    CHECK(workspace(p, CONVBWD_BWD_WEIGHT) == dflt_ws);
}

TEST_CASE("the dispatcher keeps a query's choice until a database load, and reports every call when asked") {
    DbGuard guard;
    const ConvProblem p = host_problem();
    const std::string dflt = chosen(p, CONVBWD_BWD_DATA), generic = "bwdd_f32_nhwc_any_any_host_c1x4p";
    REQUIRE(dflt != generic);
    for (int i = 0; i < 3; i++) CHECK(chosen(p, CONVBWD_BWD_DATA) == dflt);  // kept, and the same
    // A load between two identical queries changes the answer at once, an unload and a reload too.
    const std::string db = write_file("cache.db", key_of(p, CONVBWD_BWD_DATA) + " " + generic + "\n");
    for (int round = 0; round < 2; round++) {
        REQUIRE_MESSAGE(convbwd_load_tuning_db(db.c_str()) == CONVBWD_SUCCESS, convbwd_last_error());
        CHECK(chosen(p, CONVBWD_BWD_DATA) == generic);
        CHECK(convbwd_load_tuning_db(nullptr) == CONVBWD_SUCCESS);
        CHECK(chosen(p, CONVBWD_BWD_DATA) == dflt);
    }
    // Queries that differ in one field are their own entries.
    ConvProblem q = p;
    q.layout = Layout::NCHW;
    CHECK(chosen(q, CONVBWD_BWD_DATA) != dflt);
    CHECK(chosen(p, CONVBWD_BWD_DATA) == dflt);
    // CONVBWD_VERBOSE=dispatch: each of two identical calls prints its choice (none is served
    // silently from the cache).
    std::fflush(stderr);
    const std::string log = write_file("verbose.log", "");
    const int saved = ::dup(2);
    REQUIRE(std::freopen(log.c_str(), "w", stderr) != nullptr);
    ::setenv("CONVBWD_VERBOSE", "dispatch", 1);
    const std::string a = chosen(p, CONVBWD_BWD_DATA), b = chosen(p, CONVBWD_BWD_DATA);
    ::unsetenv("CONVBWD_VERBOSE");
    std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    CHECK(a == dflt);
    CHECK(b == dflt);
    std::ifstream in(log);
    int chose = 0;
    for (std::string line; std::getline(in, line);)
        chose += line.find("chose " + dflt) != std::string::npos;
    CHECK(chose == 2);
    std::remove(db.c_str());
    std::remove(log.c_str());
}

TEST_CASE("records that cannot be used are skipped, and the next one or the default taken") {
    DbGuard guard;
    const ConvProblem p = host_problem();
    const std::string key = key_of(p, CONVBWD_BWD_DATA), dflt = chosen(p, CONVBWD_BWD_DATA);
    const std::string db = write_file("skips.db", key + " bwdd_f32_nhwc_s1_k3_host_c9x9\n" +           // not built
                                                      key + " bwdd_f32_nhwc_s2_k3_host_c2x6p\n" +        // cannot implement
                                                      key + " bwdd_f32_nhwc_any_any_host_c1x4p tile_c=1\n" +  // compile-time knob
                                                      key + " bwdd_f32_nhwc_any_any_host_c1x4p vec=3\n");
    REQUIRE(convbwd_load_tuning_db(db.c_str()) == CONVBWD_SUCCESS);
    CHECK(chosen(p, CONVBWD_BWD_DATA) == dflt);
    // (The reasons, printed with CONVBWD_VERBOSE=dispatch, are checked in suite tuning through the driver.)
}

TEST_CASE("a malformed tuning database is refused with its line and field, and nothing changes") {
    DbGuard guard;
    const ConvProblem p = host_problem();
    const std::string key = key_of(p, CONVBWD_BWD_DATA), generic = "bwdd_f32_nhwc_any_any_host_c1x4p";
    const std::string good = write_file("prev.db", key + " " + generic + "\n");
    REQUIRE(convbwd_load_tuning_db(good.c_str()) == CONVBWD_SUCCESS);
    struct Case {
        std::string text, expect;
    };
    const Case cases[] = {
        {"# ok\n\n" + key + "\n", ":3: kernel: missing"},
        {"bwd_data-f32-nhwc-host-n2 " + generic + "\n", ":1: problem_key: 'bwd_data-f32-nhwc-host-n2' has 5"},
        {"bwd_dta" + key.substr(8) + " " + generic + "\n", ":1: problem_key: direction 'bwd_dta'"},
        {key + " conv3x3\n", ":1: kernel: 'conv3x3' is not a kernel name"},
        {key + " " + generic + " max_splits\n", ":1: knob: 'max_splits' is not knob="},
        {key + " " + generic + " max_splits=-1\n", ":1: knob: 'max_splits=-1'"},
        {"module\n", ":1: module: expected 'module <file>'"},
        {"# kernels\nmodule convbwd_no_such_module.so\n" + key + " " + generic + "\n",
         ":2: module: kernel module /tmp/convbwd_no_such_module.so: "},
    };
    int i = 0;
    for (const Case &c : cases) {
        CAPTURE(c.text);
        const std::string path = write_file("bad" + std::to_string(i++) + ".db", c.text);
        CHECK(convbwd_load_tuning_db(path.c_str()) == CONVBWD_BAD_PARAM);
        const std::string msg = convbwd_last_error();
        CAPTURE(msg);
        CHECK(msg.find(path + c.expect) != std::string::npos);
        CHECK(chosen(p, CONVBWD_BWD_DATA) == generic);  // the database loaded before still rules
    }
    CHECK(convbwd_load_tuning_db("/nonexistent/x.db") == CONVBWD_BAD_PARAM);
    CHECK(std::string(convbwd_last_error()).find("/nonexistent/x.db: cannot be read") != std::string::npos);
}

TEST_CASE("every default-database record names a kernel of the manifest") {
    // A record whose kernel is not built is skipped at run time, so one naming a kernel the manifest
    // no longer has is dead silently (MobileNet-v2's two NHWC depthwise records were, from 5f165f9,
    // which deleted their candidate's manifest record, to 2026-11-30).
    std::vector<ManifestRecord> records;
    REQUIRE(read_manifest(std::string(CONVBWD_SOURCE_DIR) + "/schedules/kernels.manifest", &records).empty());
    std::set<std::string> names;
    for (const ManifestRecord &r : records) names.insert(r.name);
    int checked = 0;
    for (const DbRecord &r : default_db_records()) {
        CAPTURE(r.line);
        CAPTURE(r.kernel);
        CHECK(names.count(r.kernel) == 1);
        ++checked;
    }
    CHECK(checked > 0);
}

TEST_CASE("every default-database record whose kernel is built is what the dispatcher picks for its problem") {
    int checked = 0;
    for (const DbRecord &r : default_db_records()) {
        CAPTURE(r.line);
        const std::string &key = r.key, &kernel = r.kernel;
        const bool launch_knobs = r.knobs.find_first_not_of(" \t") != std::string::npos;
        char dir[16], dtype[8], layout[8], target[8];
        convbwd_problem c{};
        REQUIRE(std::sscanf(key.c_str(), "%15[^-]-%7[^-]-%7[^-]-%7[^-]-n%d-c%d-h%d-w%d-k%d-p%d-q%d-r%d-s%d-g%d-pad%d,%d,%d,%d-u%d,%d-l%d,%d",
                            dir, dtype, layout, target, &c.n, &c.c, &c.h, &c.w, &c.k, &c.p, &c.q, &c.r, &c.s, &c.groups,
                            &c.pad_top, &c.pad_bottom, &c.pad_left, &c.pad_right, &c.stride_h, &c.stride_w,
                            &c.dilation_h, &c.dilation_w) == 22);
        bool built = false;
        for (int i = 0; i < convbwd_kernel_count(); i++) {
            convbwd_kernel_desc d;
            convbwd_kernel_info(i, &d);
            built |= kernel == d.name;
        }
        if (!built) continue;  // not in this build (CONVBWD_KERNELS, CONVBWD_TARGETS)
        const std::string t = target;
        convbwd_exec e{};
        e.target = t == "host" ? CONVBWD_TARGET_HOST : t == "opencl" ? CONVBWD_TARGET_OPENCL
                   : t == "cuda" ? CONVBWD_TARGET_CUDA : CONVBWD_TARGET_AMDGPU;
        const convbwd_direction d = std::string(dir) == "bwd_data" ? CONVBWD_BWD_DATA : CONVBWD_BWD_WEIGHT;
        const convbwd_dtype dt = std::string(dtype) == "f32" ? CONVBWD_F32 : std::string(dtype) == "f16" ? CONVBWD_F16 : CONVBWD_BF16;
        const convbwd_layout l = std::string(layout) == "nchw" ? CONVBWD_NCHW : CONVBWD_NHWC;
        const char *got = nullptr;
        REQUIRE(convbwd_select_kernel(&c, d, dt, l, &e, &got) == CONVBWD_SUCCESS);
        CHECK(std::string(got) == kernel);
        c.n += 1;  // one batch more is another problem: the class default, not the record
        REQUIRE(convbwd_select_kernel(&c, d, dt, l, &e, &got) == CONVBWD_SUCCESS);
        // (A record of launch knobs alone names the class default itself.)
        CHECK((std::string(got) != kernel || launch_knobs));
        checked++;
    }
    MESSAGE(checked, " default-database records checked");
}


namespace {
// Builds a kernel module (convbwd/convbwd_module.h) with one record, its function a dummy never
// called; "" where the C compiler is missing.
std::string build_module(const std::string &name, const std::string &kernel, const std::string &record) {
    const std::string c = write_file(name + ".c", "#include \"convbwd/convbwd_module.h\"\n"
                                                  "static int dummy(void) { return -1; }\n"
                                                  "static const convbwd_module_kernel k[] = {{\"" + kernel + "\", \"" + record +
                                                      "\", (void *)&dummy}};\n"
                                                  "static const convbwd_module m = {CONVBWD_MODULE_ABI, " +
                                                      std::to_string(HALIDE_VERSION_MAJOR) + ", \"host\", 1, k};\n"
                                                  "const convbwd_module *convbwd_module_v1(void) { return &m; }\n");
    const std::string so = c.substr(0, c.size() - 2) + ".so";
    const std::string cmd = "cc -shared -fPIC -I" + std::string(CONVBWD_SOURCE_DIR) + "/runtime/include " + c + " -o " + so;
    return std::system(cmd.c_str()) == 0 ? so : "";
}
}  // namespace

TEST_CASE("kernel modules: records are checked like manifest records; a good one adds candidates only") {
    CHECK(convbwd_load_kernel_module(nullptr) == CONVBWD_NULL_POINTER);
    CHECK(convbwd_load_kernel_module("/nonexistent/m.so") == CONVBWD_BAD_PARAM);
    CHECK(std::string(convbwd_last_error()).find("kernel module /nonexistent/m.so: ") != std::string::npos);
    CHECK(convbwd_load_kernel_module("libm.so.6") == CONVBWD_BAD_PARAM);
    CHECK(std::string(convbwd_last_error()).find("no convbwd_module_v1 (not a convbwd kernel module)") != std::string::npos);
    const int before = convbwd_kernel_count();
    struct Case {
        std::string kernel, record, expect;
    };
    const std::string rec = "conv_bwd_weight_host f32 nhwc s1 k3 host candidate 0 tile_c=3 tile_k=4 k_tasks=2";
    const Case bad[] = {
        {"bwdw_f32_nhwc_s1_k3_host_c3k4", rec, "kernel 0: name: 'bwdw_f32_nhwc_s1_k3_host_c3k4' is not the name its record derives (bwdw_f32_nhwc_s1_k3_host_c3k4kt2)"},
        {"bwdw_f32_nhwc_s1_k3_host_c3k9", "conv_bwd_weight_host f32 nhwc s1 k3 host candidate 0 tile_c=3 tile_k=9", ": knobs: "},
        {"bwdw_f32_nhwc_s1_k3_host_c3k4kt2", "conv_bwd_weight_host f32 nhwc s1 k3 host default 0 tile_c=3 tile_k=4 k_tasks=2", "kernel 0: role: "},
        {"x", "conv_bwd_weight_hst f32 nhwc s1 k3 host candidate 0", ": family: 'conv_bwd_weight_hst' is not a family"},
        // A baseline's group-class suffix is dw or narrow only, and only on an autoscheduler family.
        {"bwdw_f32_nhwc_s1_k3_host_adams2019any", "conv_bwd_weight_adams2019_host f32 nhwc s1 k3 host baseline 0",
         "is not the name its record derives (bwdw_f32_nhwc_s1_k3_host_adams2019, or it followed by dw or narrow)"},
        {"bwdw_f32_nhwc_s1_k3_host_c3k4kt2dw", rec, "is not the name its record derives (bwdw_f32_nhwc_s1_k3_host_c3k4kt2)"},
    };
    int i = 0;
    for (const Case &c : bad) {
        CAPTURE(c.record);
        const std::string so = build_module("badmod" + std::to_string(i++), c.kernel, c.record);
        REQUIRE_MESSAGE(!so.empty(), "cc failed");
        CHECK(convbwd_load_kernel_module(so.c_str()) == CONVBWD_BAD_PARAM);
        CAPTURE(convbwd_last_error());
        CHECK(std::string(convbwd_last_error()).find(c.expect) != std::string::npos);
        CHECK(convbwd_kernel_count() == before);  // a bad module adds nothing
    }
    const ConvProblem p = host_problem();
    const std::string was = chosen(p, CONVBWD_BWD_WEIGHT);
    const std::string so = build_module("goodmod", "bwdw_f32_nhwc_s1_k3_host_c3k4kt2", rec);
    REQUIRE(!so.empty());
    REQUIRE_MESSAGE(convbwd_load_kernel_module(so.c_str()) == CONVBWD_SUCCESS, convbwd_last_error());
    REQUIRE(convbwd_kernel_count() == before + 1);
    convbwd_kernel_desc d;
    REQUIRE(convbwd_kernel_info(before, &d) == CONVBWD_SUCCESS);
    CHECK(std::string(d.name) == "bwdw_f32_nhwc_s1_k3_host_c3k4kt2");
    CHECK(std::string(d.role) == "candidate");
    CHECK(std::string(d.family) == "conv_bwd_weight_host");
    REQUIRE(d.module);
    CHECK(std::string(d.module) == so);
    CHECK(chosen(p, CONVBWD_BWD_WEIGHT) == was);  // candidates never join the kernel order
    // Loading it again adds nothing (the same name is the same compile-time point).
    REQUIRE(convbwd_load_kernel_module(so.c_str()) == CONVBWD_SUCCESS);
    CHECK(convbwd_kernel_count() == before + 1);
    // A depthwise class's autoscheduler baseline: the derived name followed by the group class.
    const std::string bso = build_module("basemod", "bwdw_f32_nhwc_s1_k3_host_adams2019dw",
                                         "conv_bwd_weight_adams2019_host f32 nhwc s1 k3 host baseline 0");
    REQUIRE(!bso.empty());
    REQUIRE_MESSAGE(convbwd_load_kernel_module(bso.c_str()) == CONVBWD_SUCCESS, convbwd_last_error());
    REQUIRE(convbwd_kernel_count() == before + 2);
    REQUIRE(convbwd_kernel_info(before + 1, &d) == CONVBWD_SUCCESS);
    CHECK(std::string(d.name) == "bwdw_f32_nhwc_s1_k3_host_adams2019dw");
    CHECK(std::string(d.role) == "baseline");
}

}  // TEST_SUITE("spaces")
