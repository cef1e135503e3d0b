// Every kernel in the registry against the reference over the conformance sweep, one test case
// per kernel (doctest -tc=<kernel name or glob>).
#include <cmath>
#include <cstring>

#include "conformance.h"
#include "runtime/src/internal.h"  // find_kernel and the channel vectors the dispatcher checks
#ifdef CONVBWD_HAVE_OPENCL
#include "runtime/src/opencl_fragments.h"
#endif

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
        exec.target = to_c(device);
        const char *chosen = nullptr;
        if (convbwd_select_kernel(&cp, to_c(dir), to_c(dtype),
                                  to_c(layout), &exec, &chosen) != CONVBWD_SUCCESS)
            continue;  // outside the kernel's class (CUTLASS routing)
        CAPTURE(describe(p, dir));
        RunResult r = run_against_reference(p, dir, name, rng, 1.0f, 0.0f, device);
        REQUIRE_MESSAGE(r.status == CONVBWD_SUCCESS, r.error);
        CHECK_MESSAGE(r.verify.unwritten == 0, r.verify.unwritten, " elements not written; ", r.verify.first_bad);
        CHECK_MESSAGE(r.verify.ok, r.verify.mismatches, " mismatches, first ", r.verify.first_bad);
        CHECK(r.verify.max_ref > 0);  // guard: the reference is not all zeros
        if (tested % 2 == 0) {
            // Every other problem again with alpha and beta, the output read back in place (an
            // in-place kernel whose tiles overlap would add beta * prev twice).
            CAPTURE("alpha 0.5, beta -2");
            RunResult rb = run_against_reference(p, dir, name, rng, 0.5f, -2.0f, device);
            REQUIRE_MESSAGE(rb.status == CONVBWD_SUCCESS, rb.error);
            CHECK_MESSAGE(rb.verify.ok, rb.verify.mismatches, " mismatches, first ", rb.verify.first_bad);
        }
        tested++;
    }
    CHECK_MESSAGE(tested > 0, "no problem of the sweep reached ", std::string(name));
    MESSAGE(std::string(name), ": ", tested, " problems");
}

// An f32 activation tensor (logical N, C, H, W) stored with padded strides; the padding holds a
// sentinel that no kernel may overwrite.
struct PaddedTensor {
    int64_t dims[4], strides[4];
    std::vector<float> storage;
    static constexpr float kSentinel = 12345.0f;
    // align > 1 (NCHW): every stride rounded up to a multiple of it, the padding kept; row_align
    // (default align) the same for the row stride alone.
    PaddedTensor(const int64_t d[4], Layout l, bool dense_plane, int64_t align = 1, int64_t row_align = 0) {
        std::copy(d, d + 4, dims);
        const int64_t N = d[0], C = d[1], H = d[2], W = d[3];
        auto up = [align](int64_t v) { return (v + align - 1) / align * align; };
        const int64_t ra = row_align ? row_align : align;
        if (l == Layout::NCHW) {  // rows padded by 3 (plane not dense) or the plane by 5
            const int64_t row = dense_plane ? W : (W + 3 + ra - 1) / ra * ra, plane = up(H * row + 5);
            strides[3] = 1, strides[2] = row, strides[1] = plane, strides[0] = up(C * plane + 2);
        } else {  // pixels padded by 2 channels (plane dense), rows by one pixel (not dense)
            const int64_t px = C + 2, row = (dense_plane ? W : W + 1) * px;
            strides[1] = 1, strides[3] = px, strides[2] = row, strides[0] = H * row + 7;
        }
        storage.assign((size_t)(N * strides[0]), kSentinel);
    }
    int64_t at(int64_t n, int64_t c, int64_t h, int64_t w) const {
        return n * strides[0] + c * strides[1] + h * strides[2] + w * strides[3];
    }
    template <class F>
    void for_each(F f) {
        int64_t i = 0;
        for (int64_t n = 0; n < dims[0]; n++)
            for (int64_t c = 0; c < dims[1]; c++)
                for (int64_t h = 0; h < dims[2]; h++)
                    for (int64_t w = 0; w < dims[3]; w++) f(storage[(size_t)at(n, c, h, w)], i++);
    }
};

// Kernel d's device; false, with a [SKIP] message, where that device is not usable here.
bool usable_kernel(const convbwd_kernel_desc &d, Device *device) {
    *device = d.target == CONVBWD_TARGET_HOST     ? Device::Host
              : d.target == CONVBWD_TARGET_OPENCL ? Device::OpenCL
              : d.target == CONVBWD_TARGET_CUDA   ? Device::Cuda
                                                  : Device::AmdGpu;
    std::string why;
    if (device_usable(*device, &why)) return true;
    MESSAGE("[SKIP] ", std::string(d.name), ": ", why);
    return false;
}

// Kernel `name` of direction dir on p with alpha 1 and `beta` against the reference: it runs,
// writes every element of its output and matches.
void check_problem(const ConvProblem &p, Direction dir, const char *name, std::mt19937 &rng, float beta, Device device) {
    CAPTURE(describe(p, dir));
    CAPTURE(beta);
    RunResult r = run_against_reference(p, dir, name, rng, 1.0f, beta, device);
    REQUIRE_MESSAGE(r.status == CONVBWD_SUCCESS, r.error);
    CHECK_MESSAGE(r.verify.unwritten == 0, r.verify.unwritten, " elements not written; ", r.verify.first_bad);
    CHECK_MESSAGE(r.verify.ok, r.verify.mismatches, " mismatches, first ", r.verify.first_bad);
}

// A problem of kernel d's classes and layout: R = S = the class's filter (3 for "any"), padding R / 2,
// the class's stride (1 for "any").
ConvProblem problem_of_class(const convbwd_kernel_desc &d, int N, int C, int H, int W, int K, int G) {
    const int R = class_filter_or(d, 3), stride = std::string(d.stride_class) == "s2" ? 2 : 1;
    ConvProblem p{.N = N, .C = C, .H = H, .W = W, .K = K, .R = R, .S = R, .G = G, .pad_top = R / 2,
                  .pad_bottom = R / 2, .pad_left = R / 2, .pad_right = R / 2, .stride_h = stride, .stride_w = stride,
                  .layout = d.layout == CONVBWD_NCHW ? Layout::NCHW : Layout::NHWC};
    return with_derived_output(p);
}

// Calls body(d, device) for every kernel that keep(d) takes and whose device is usable here;
// returns how many keep took (those skipped for their device included).
template <class Keep, class Body>
int for_each_usable_kernel(Keep keep, Body body) {
    int kept = 0;
    for (int i = 0; i < convbwd_kernel_count(); i++) {
        convbwd_kernel_desc d{};
        REQUIRE(convbwd_kernel_info(i, &d) == CONVBWD_SUCCESS);
        if (!keep(d)) continue;
        kept++;
        Device device;
        if (usable_kernel(d, &device)) body(d, device);
    }
    return kept;
}

}  // namespace

TEST_SUITE("kernels") {
#define CONVBWD_KERNEL(name, dir, dtype, layout, stride, filter, on, family, role, sched, launch) \
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

// Kernels that see a pointwise problem's plane as one row (schedule flat=1) on tensors with
// padded strides: a dense plane (padding between planes or pixels) folds, a padded row does not;
// both must match the reference and leave every padding element as it was.
TEST_CASE("flat backward-data kernels on padded strides") {
    const int flat_kernels = for_each_usable_kernel(
        [](const convbwd_kernel_desc &d) { return std::strstr(d.schedule, "flat=1") && d.dtype == CONVBWD_F32; },
        [&](const convbwd_kernel_desc &d, Device device) {
        const Layout layout = d.layout == CONVBWD_NCHW ? Layout::NCHW : Layout::NHWC;
        std::mt19937 rng(std::hash<std::string>{}(d.name));
        // A kernel loading columns as vectors of 4 (xvec=4) needs rows (folded: planes) and
        // strides that are multiples of 4: rows of 8 and strides rounded up to multiples of 4 run;
        // rows of 9, or the unrounded strides, are refused, naming what (the last two cases).
        const bool xvec = std::strstr(d.schedule, "xvec=4") != nullptr;
        // Refused cases name what: `refusal` (empty: the case runs).
        struct Case {
            bool dense_plane;
            float beta;
            int W;
            int64_t align, row_align, base_offset;
            const char *refusal;
        };
        std::vector<Case> cases;
        for (bool dense_plane : {true, false})
            for (float beta : {0.0f, 1.0f}) cases.push_back({dense_plane, beta, xvec ? 8 : 9, xvec ? 4 : 1, 0, 0, ""});
        if (xvec) {
            cases.push_back({true, 0.0f, 9, 4, 0, 0, "columns: w = 9"});
            cases.push_back({true, 0.0f, 8, 1, 0, 0, "tensors: dy.strides[0] (N) = 542"});
            cases.push_back({false, 0.0f, 8, 4, 1, 0, "tensors: dy.strides[2] (H) = 11"});
            // A device pointer one element past an aligned one (not on OpenCL, whose tensors are
            // cl_mem handles to buffers the driver aligns).
            if (device != Device::OpenCL) cases.push_back({true, 0.0f, 8, 4, 0, 1, "tensors: dy.data"});
        }
        for (const Case &cs : cases) {
            {
                const bool dense_plane = cs.dense_plane;
                const float beta = cs.beta;
                // 17 channels: a channel tail; a kernel loading channels as vectors of 4 needs a
                // multiple of 4 (20: a tail for its 8-channel tiles).
                const int C = std::strstr(d.schedule, " vec=4") ? 20 : 17;
                ConvProblem p{.N = 2, .C = C, .H = 5, .W = cs.W, .K = 12, .R = 1, .S = 1, .G = 1, .pad_top = 0,
                              .pad_bottom = 0, .pad_left = 0, .pad_right = 0, .dtype = DType::F32, .layout = layout};
                p = with_derived_output(p);
                const std::string kernel_name = d.name;
                CAPTURE(kernel_name);
                CAPTURE(dense_plane);
                CAPTURE(beta);
                const int64_t xd[4] = {p.N, p.C, p.H, p.W}, yd[4] = {p.N, p.K, p.P, p.Q};
                CAPTURE(cs.W);
                CAPTURE(cs.align);
                PaddedTensor dy(yd, layout, dense_plane, cs.align, cs.row_align),
                    dx(xd, layout, dense_plane, cs.align, cs.row_align);
                HostTensor w(w_dims(p), DType::F32, layout);
                w.fill_random_ints(rng);
                std::uniform_int_distribution<int> small(-2, 2);
                std::vector<float> dy_logical, prev;
                dy.for_each([&](float &v, int64_t) { v = (float)small(rng), dy_logical.push_back(v); });
                dx.for_each([&](float &v, int64_t) {
                    v = beta == 0.0f ? std::nanf("") : (float)small(rng);
                    prev.push_back(v);
                });
                std::vector<double> ref = ref_bwd_data(p, dy_logical, w.to_logical());
                convbwd_problem cp = to_c(p);
                convbwd_tensor tdy{dy.storage.data(), CONVBWD_F32, to_c(layout), {}};
                convbwd_tensor tdx{dx.storage.data(), CONVBWD_F32, to_c(layout), {}};
                std::copy(dy.strides, dy.strides + 4, tdy.strides);
                std::copy(dx.strides, dx.strides + 4, tdx.strides);
                convbwd_tensor tw = w.desc();
                convbwd_exec exec{};
                exec.kernel = d.name;
                exec.target = d.target;
                if (*cs.refusal) {
                    // Refused before anything runs (host pointers are never touched).
                    tdy.data = dy.storage.data() + cs.base_offset;
                    const convbwd_status st = convbwd_bwd_data(&cp, &tdy, &tw, &tdx, 1.0f, beta, &exec);
                    CHECK(st == CONVBWD_NO_KERNEL);
                    const std::string err = convbwd_last_error();
                    CHECK_MESSAGE(err.find(cs.refusal) != std::string::npos, err);
                    continue;
                }
                convbwd_status st;
                if (device == Device::Host) {
                    st = convbwd_bwd_data(&cp, &tdy, &tw, &tdx, 1.0f, beta, &exec);
                } else {
                    std::string err;
                    GpuDevice *dev = gpu_device(device, &err);
                    REQUIRE_MESSAGE(dev, err);
                    const size_t ybytes = dy.storage.size() * 4, xbytes = dx.storage.size() * 4;
                    auto ddy = dev->alloc(ybytes, &err), ddx = dev->alloc(xbytes, &err), dw = dev->alloc(w.storage.size(), &err);
                    REQUIRE_MESSAGE((ddy && ddx && dw), err);
                    REQUIRE(ddy->upload(dy.storage.data(), ybytes));
                    REQUIRE(ddx->upload(dx.storage.data(), xbytes));
                    REQUIRE(dw->upload(w.storage.data(), w.storage.size()));
                    tdy.data = ddy->handle(), tdx.data = ddx->handle(), tw.data = dw->handle();
                    exec.stream = dev->stream();
                    st = convbwd_bwd_data(&cp, &tdy, &tw, &tdx, 1.0f, beta, &exec);
                    REQUIRE_MESSAGE((st != CONVBWD_SUCCESS || dev->sync(&err)), err);
                    REQUIRE(ddx->download(dx.storage.data(), xbytes));
                }
                REQUIRE_MESSAGE(st == CONVBWD_SUCCESS, convbwd_last_error());
                std::vector<bool> logical(dx.storage.size(), false);
                int64_t bad = 0;
                dx.for_each([&](float &v, int64_t i) {
                    logical[(size_t)(&v - dx.storage.data())] = true;
                    const double want = beta == 0.0f ? ref[(size_t)i] : ref[(size_t)i] + beta * prev[(size_t)i];
                    if ((double)v != want) bad++;
                });
                CHECK_MESSAGE(bad == 0, bad, " of ", ref.size(), " dx elements differ from the reference");
                int64_t touched = 0;
                for (size_t i = 0; i < dx.storage.size(); i++)
                    if (!logical[i] && dx.storage[i] != PaddedTensor::kSentinel) touched++;
                CHECK_MESSAGE(touched == 0, touched, " padding elements of dx were written");
            }
        }
        });
    MESSAGE(flat_kernels, " flat kernels");
}

// Kernels that load channels as vectors (vec=4): their channel tiles must start at multiples of
// 4 (tails shifted inwards included) and groups must not break that: channel counts with and
// without a tile tail, rows with and without a column tail, two groups, both strides and filters
// of their classes, beta 0 and != 0.
TEST_CASE("vec: channel-vector backward-data kernels over channel, column and group tails") {
    const int vec_kernels = for_each_usable_kernel(
        [](const convbwd_kernel_desc &d) {
            // (The fragment family's vec loads dy's channels, k: test "matrix fragments" below.)
            return std::strstr(d.schedule, " vec=4") && d.direction == CONVBWD_BWD_DATA &&
                   std::string(d.family) != "conv_bwd_data_mma_gpu";
        },
        [&](const convbwd_kernel_desc &d, Device device) {
        std::mt19937 rng(std::hash<std::string>{}(d.name));
        int tested = 0;
        for (int C : {4, 12, 24, 36})
            for (int W : {7, 16})
                for (int G : {1, 2}) {
                    if ((C / G) % 4 != 0) continue;
                    check_problem(problem_of_class(d, 2, C, 6, W, 6 * G, G), Direction::BwdData, d.name, rng,
                                  tested % 2 ? -2.0f : 0.0f, device);
                    tested++;
                }
        CHECK(tested > 0);
        });
    MESSAGE(vec_kernels, " channel-vector kernels");
}

// Matrix-fragment kernels (generators/fragments.h; emulated on OpenCL, MFMA on amdgpu): pixels,
// channels and k past whole fragments (and past a wave's tile_m x tile_n of them), planes read as
// one row (dense) and as rows of W pixels (padded strides through the harness's layout), beta;
// stride 2's phases (backward-data, class s2: columns and rows past whole fragments of a phase);
// backward-weight's k-blocks of a row past Q, many splits (the last one short), strides 2 and
// dilation 2 for the filter class any; a grouped problem is refused by name. Backward-data vec=4
// kernels take k rounded up to a multiple of 4 (still past whole k-blocks; the refusal of other k:
// test_dispatch.cpp).
TEST_CASE("matrix fragments: kernels over fragment, k-block, split and channel tails; groups refused") {
    const int frag_kernels = for_each_usable_kernel(
        [](const convbwd_kernel_desc &d) {
            return std::string(d.family) == "conv_bwd_data_mma_gpu" || std::string(d.family) == "conv_bwd_weight_mma_gpu";
        },
        [&](const convbwd_kernel_desc &d, Device device) {
        std::mt19937 rng(std::hash<std::string>{}(d.name));
        const DType dt = d.dtype == CONVBWD_F16 ? DType::F16 : DType::BF16;
        const Direction dir = d.direction == CONVBWD_BWD_DATA ? Direction::BwdData : Direction::BwdWeight;
        const bool any_filter = std::string(d.filter_class) == "any";
        struct Shape { int N, C, H, W, K; };
        int tested = 0;
        // The channel multiples the kernel asks (the registry's traits, as the dispatcher checks them):
        // c of its channel vector (backward-weight's staged chunks and grouped copies: 8), k of that or
        // of the vector it loads dy's channels with in place (NHWC vec=4 backward-data: 4, staged 8;
        // NCHW's reads a copy zero past k: any k, 19, 3 and 65 below).
        const KernelInfo *info = find_kernel(d.name);
        if (!info) FAIL("no registry entry for ", d.name);
        const int cv = channel_vector(*info), kv = std::max(cv, input_channel_vector(*info));
        for (Shape sh : {Shape{1, 32, 4, 8, 8}, Shape{2, 70, 5, 13, 19}, Shape{1, 129, 3, 45, 40}, Shape{3, 8, 1, 1, 3},
                         Shape{5, 33, 17, 19, 65}}) {
            ConvProblem p = problem_of_class(d, sh.N, (sh.C + cv - 1) / cv * cv, sh.H, sh.W, (sh.K + kv - 1) / kv * kv, 1);
            p.dtype = dt;
            if (sh.H * sh.W == 1 && std::string(d.stride_class) == "s2") continue;  // a 1x1 plane has no stride
            check_problem(p, dir, d.name, rng, tested % 2 ? -2.0f : 0.0f, device);
            tested++;
            if (dir == Direction::BwdWeight && any_filter && sh.W >= 4) {  // stride 2 with a 3x3; a dilated 1x3, asymmetric pad
                ConvProblem s2 = p;
                s2.stride_h = s2.stride_w = 2, s2.P = s2.Q = 0;
                check_problem(with_derived_output(s2), dir, d.name, rng, 0.0f, device);
                ConvProblem dl = p;
                dl.R = 1, dl.S = 3, dl.dilation_w = 2, dl.pad_top = dl.pad_bottom = 0, dl.pad_left = 2, dl.pad_right = 1, dl.P = dl.Q = 0;
                check_problem(with_derived_output(dl), dir, d.name, rng, 0.5f, device);
            }
        }
        ConvProblem g = problem_of_class(d, 1, 64, 4, 4, 64, 2);
        g.dtype = dt;
        convbwd_problem c = to_c(g);
        convbwd_exec e{};
        e.kernel = d.name;
        e.target = d.target;
        const char *got = nullptr;
        CHECK(convbwd_select_kernel(&c, d.direction, d.dtype, d.layout, &e, &got) == CONVBWD_NO_KERNEL);
        CHECK(std::string(convbwd_last_error()).find("groups: a matrix-fragment kernel") != std::string::npos);
        });
    MESSAGE(frag_kernels, " matrix-fragment kernels");  // none where candidates are not built
#ifdef CONVBWD_HAVE_OPENCL
    // Every OpenCL fragment source run here passed the prelude's check: the emulation exchanged
    // operands once a k-block (runtime/src/opencl_fragments.h).
    const convbwd::FragmentPreludeCounts counts = convbwd::opencl_fragment_prelude_counts();
    MESSAGE(counts.sources, " OpenCL fragment sources, ", counts.grouped, " with one operand exchange a k-block");
    CHECK(counts.grouped == counts.sources);
#endif
}

// Kernels that copy dy with its zero border first (stage=3): the copy's grid must hold more than
// 65535 channel-images (2048 x 33 here; as the third grid dim it failed to launch on the H100).
TEST_CASE("stage3: padded-copy backward-data kernels over many channel-images") {
    const int kernels = for_each_usable_kernel(
        [](const convbwd_kernel_desc &d) { return std::strstr(d.schedule, "stage=3") && d.direction == CONVBWD_BWD_DATA; },
        [&](const convbwd_kernel_desc &d, Device device) {
        const int f = class_filter_or(d, 1), pad = f / 2;
        const int stride = std::string(d.stride_class) == "s2" ? 2 : 1;
        std::mt19937 rng(std::hash<std::string>{}(d.name));
        ConvProblem p{.N = 33, .C = 4, .H = 3, .W = 5, .K = 2048, .R = f, .S = f, .G = 1,
                      .pad_top = pad, .pad_bottom = pad, .pad_left = pad, .pad_right = pad, .stride_h = stride,
                      .stride_w = stride, .layout = Layout::NCHW};
        p = with_derived_output(p);
        check_problem(p, Direction::BwdData, d.name, rng, 0.0f, device);
        });
    MESSAGE(kernels, " padded-copy kernels");
}

// Kernels that load columns as vectors (xvec=4, NCHW pointwise read in place): planes of 4 to 60
// columns (a thread's 8-column tile shifted inwards by 4 at 20, 12 and 60), channel tails, two
// groups, beta 0 and != 0. Rows and strides that are not multiples of 4 are refused (test "flat
// backward-data kernels on padded strides").
TEST_CASE("xvec: column-vector backward-data kernels over column, channel and group tails") {
    const int xvec_kernels = for_each_usable_kernel(
        [](const convbwd_kernel_desc &d) { return std::strstr(d.schedule, "xvec=4") && d.direction == CONVBWD_BWD_DATA; },
        [&](const convbwd_kernel_desc &d, Device device) {
        std::mt19937 rng(std::hash<std::string>{}(d.name));
        int tested = 0;
        for (int C : {3, 8, 17, 36})
            for (auto hw : {std::pair{1, 4}, std::pair{5, 4}, std::pair{3, 4}, std::pair{2, 10}, std::pair{15, 4}})
                for (int G : {1, 2}) {
                    if (C % G != 0) continue;
                    ConvProblem p{.N = 2, .C = C, .H = hw.first, .W = hw.second, .K = 6 * G, .R = 1, .S = 1, .G = G,
                                  .layout = Layout::NCHW};
                    p = with_derived_output(p);
                    check_problem(p, Direction::BwdData, d.name, rng, tested % 2 ? -2.0f : 0.0f, device);
                    tested++;
                }
        CHECK(tested > 0);
        });
    MESSAGE(xvec_kernels, " column-vector kernels");
}

// Backward-weight kernels that load x's and dy's channels as vectors (vec=4): column counts that
// are and are not multiples of their columns per iteration, rows and images split several ways,
// beta 0 and != 0; channel counts that are not multiples of 4, and groups, are refused, naming
// the field.
TEST_CASE("wvec: channel-vector backward-weight kernels over column, row and split tails; refusals") {
    const int kernels = for_each_usable_kernel(
        [](const convbwd_kernel_desc &d) {
            // (The fragment family's vec loads pixel groups from its own copies, no condition on
            // the problem: test "matrix fragments" above.)
            return std::strstr(d.schedule, " vec=4") && d.direction == CONVBWD_BWD_WEIGHT &&
                   std::string(d.family) != "conv_bwd_weight_mma_gpu";
        },
        [&](const convbwd_kernel_desc &d, Device device) {
        std::mt19937 rng(std::hash<std::string>{}(d.name));
        auto problem = [&](int N, int C, int H, int W, int K, int G) { return problem_of_class(d, N, C, H, W, K, G); };
        const ConvProblem cls = problem(1, 4, 1, 1, 4, 1);  // the class's filter, stride and layout
        const int R = cls.R, stride = cls.stride_h;
        const Layout layout = cls.layout;
        struct Shape { int N, C, H, W, K; };
        int tested = 0;
        for (Shape sh : {Shape{2, 4, 5, 7, 8}, Shape{3, 12, 3, 9, 4}, Shape{1, 36, 2, 16, 20}, Shape{2, 8, 7, 5, 12},
                         Shape{5, 4, 2, 11, 4}})
            check_problem(problem(sh.N, sh.C, sh.H, sh.W, sh.K, 1), Direction::BwdWeight, d.name, rng,
                          tested++ % 2 ? -2.0f : 0.0f, device);
        // Splits of several rows and a short last one (the shapes above get one row per split):
        // 128 x 128 channels are 8 blocks of 64 x 32, so 528 blocks per launch (the 3x3 default)
        // make 66 splits, 1056 make 132, 2112 (the 1x1 default) 264, and an 8x8 tile's 512 (the
        // cap); 201 and 603 rows of output.
        {
            const int rows = R == 3 ? 201 : 603, P = rows / 3;
            const ConvProblem p = problem(3, 128, stride * (P - 1) + 1, 5, 128, 1);
            REQUIRE(p.N * p.P == rows);
            convbwd_problem cp = to_c(p);
            convbwd_exec exec{};
            exec.kernel = d.name;
            exec.target = d.target;
            size_t ws_bytes = 0;
            REQUIRE(convbwd_workspace_size(&cp, CONVBWD_BWD_WEIGHT, CONVBWD_F32, to_c(layout), &exec, &ws_bytes) ==
                    CONVBWD_SUCCESS);
            const int64_t splits = (int64_t)ws_bytes / ((int64_t)p.K * p.C * p.R * p.S * 4);
            CAPTURE(splits);
            CHECK(splits < rows);  // some split has more than one row
            check_problem(p, Direction::BwdWeight, d.name, rng, -2.0f, device);
        }
        struct Refused { int C, K, G; const char *why; };
        for (Refused rf : {Refused{6, 8, 1, "channels: c = 6"}, Refused{8, 6, 1, "channels: k = 6"},
                           Refused{8, 8, 2, "channels: k = 8, groups = 2"}}) {
            CAPTURE(rf.why);
            convbwd_problem cp = to_c(problem(2, rf.C, 5, 7, rf.K, rf.G));
            convbwd_exec exec{};
            exec.kernel = d.name;
            exec.target = d.target;
            const char *chosen = nullptr;
            CHECK(convbwd_select_kernel(&cp, CONVBWD_BWD_WEIGHT, CONVBWD_F32, to_c(layout), &exec, &chosen) ==
                  CONVBWD_NO_KERNEL);
            const std::string err = convbwd_last_error();
            CHECK_MESSAGE(err.find(rf.why) != std::string::npos, err);
        }
        });
    MESSAGE(kernels, " channel-vector backward-weight kernels");
}
}
