// Standalone check of common/device (the CUDA and OpenCL backends) and common/cudnn_peer (not part of the CMake build;
// see README.md here for the build line).
//   OpenCL: buffers of several sizes: upload, download, compare bytes; fill; partial copies;
//           error paths; the process-wide queue and context; the device timer.
//   CUDA:   the same round trips, then CudnnPeer on small problems (both directions, f32 / f16 /
//           bf16, NCHW / NHWC, strides, dilation, groups, depthwise) checked against the naive
//           reference of common/reference.h; refusals of inexpressible padding.
// A backend with no device is reported as SKIP. Exit status 0 iff every check that ran passed.
// Options: --no-opencl, --no-cuda, --quick (fewer cuDNN cases).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/device.h"
#include "common/reference.h"
#include "common/tensor.h"
#ifdef CONVBWD_WITH_CUDA
#include <cuda_runtime_api.h>
#include <cudnn_version.h>

#include "common/cudnn_peer.h"
#endif
#ifdef CONVBWD_WITH_OPENCL
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#endif

using namespace convbwd;

static int g_failures = 0, g_checks = 0;

static void check(bool cond, const std::string &what) {
    g_checks++;
    if (!cond) {
        g_failures++;
        std::printf("  FAIL %s\n", what.c_str());
    }
}

// Upload / download / fill / partial copies / errors on one backend.
[[maybe_unused]] static void buffer_checks(GpuDevice *dev) {
    std::mt19937 rng(1234);
    const size_t sizes[] = {0, 1, 3, 4096, (1u << 20) + 7, 16u << 20};
    for (size_t n : sizes) {
        std::string err;
        auto buf = dev->alloc(n, &err);
        check(buf != nullptr, "create(" + std::to_string(n) + "): " + err);
        if (!buf) continue;
        check(buf->size() == n && buf->handle() != nullptr, "size / handle of a " + std::to_string(n) + "-byte buffer");
        std::vector<unsigned char> src(n), dst(n, 0);
        for (auto &b : src) b = (unsigned char)rng();
        check(buf->upload(src.data(), n), "upload " + std::to_string(n) + ": " + buf->last_error());
        check(buf->download(dst.data(), n), "download " + std::to_string(n) + ": " + buf->last_error());
        check(src == dst, "round trip of " + std::to_string(n) + " bytes");
        check(buf->fill_bytes(0xA5), "fill_bytes: " + buf->last_error());
        std::fill(dst.begin(), dst.end(), 0);
        check(buf->download(dst.data(), n), "download after fill: " + buf->last_error());
        check(std::all_of(dst.begin(), dst.end(), [](unsigned char c) { return c == 0xA5; }),
              "fill_bytes(0xA5) of " + std::to_string(n) + " bytes");
        if (n >= 2) {  // a partial upload keeps the tail
            check(buf->upload(src.data(), n / 2), "partial upload: " + buf->last_error());
            check(buf->download(dst.data(), n), "download after partial upload: " + buf->last_error());
            bool head = std::memcmp(dst.data(), src.data(), n / 2) == 0;
            bool tail = std::all_of(dst.begin() + n / 2, dst.end(), [](unsigned char c) { return c == 0xA5; });
            check(head && tail, "partial upload of " + std::to_string(n / 2) + " of " + std::to_string(n) + " bytes");
        }
        // Errors are messages, not crashes.
        std::vector<unsigned char> big(n + 1);
        check(!buf->upload(big.data(), n + 1) && !buf->last_error().empty(), "oversized upload refused");
        check(!buf->download(big.data(), n + 1) && !buf->last_error().empty(), "oversized download refused");
    }
    std::string err;
    auto huge = dev->alloc((size_t)1 << 62, &err);
    check(huge == nullptr && !err.empty(), "a 4 EiB allocation fails with a message");
    std::printf("  4 EiB allocation: %s\n", err.c_str());

    // The device timer around a 64 MiB upload.
    auto buf = dev->alloc(64u << 20, &err);
    check(buf != nullptr, "create 64 MiB: " + err);
    if (buf) {
        std::vector<unsigned char> src(64u << 20, 7);
        double ms = -1;
        check(dev->time([&] { return buf->upload(src.data(), src.size()); }, &ms, &err), "timed 64 MiB upload: " + err);
        std::printf("  device timer: 64 MiB upload took %.3f ms\n", ms);
    }
    check(dev->sync(&err), "sync: " + err);
}

#ifdef CONVBWD_WITH_OPENCL
static void opencl_checks() {
    std::printf("== OpenCL\n");
    std::string why;
    GpuDevice *dev = gpu_device(Device::OpenCL, &why);
    if (!dev) {
        std::printf("  SKIP: %s\n", why.c_str());
        return;
    }
    std::printf("  device: %s\n", dev->name().c_str());
    // Like common/device_opencl.cpp, this program opens libOpenCL.so.1 at run time (no -lOpenCL).
    void *lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    auto clGetCommandQueueInfo = lib ? (decltype(&::clGetCommandQueueInfo))dlsym(lib, "clGetCommandQueueInfo") : nullptr;
    auto clGetMemObjectInfo = lib ? (decltype(&::clGetMemObjectInfo))dlsym(lib, "clGetMemObjectInfo") : nullptr;
    if (!clGetCommandQueueInfo || !clGetMemObjectInfo) {
        check(false, "libOpenCL.so.1 loaded by common/device but not here");
        return;
    }
    void *q = opencl_queue(), *ctx = opencl_context();
    check(q && ctx && opencl_device(), "queue, context and device exist");
    cl_context qctx = nullptr;
    check(clGetCommandQueueInfo((cl_command_queue)q, CL_QUEUE_CONTEXT, sizeof(qctx), &qctx, nullptr) == CL_SUCCESS &&
              qctx == (cl_context)ctx,
          "the queue belongs to the context (what the library derives from exec.stream)");
    check(opencl_queue() == q, "one queue per process");
    int before = g_failures;
    buffer_checks(dev);
    // A buffer's cl_mem is a real memory object of the context.
    std::string err;
    auto b = dev->alloc(100, &err);
    size_t sz = 0;
    cl_context mctx = nullptr;
    check(b && clGetMemObjectInfo((cl_mem)b->handle(), CL_MEM_SIZE, sizeof(sz), &sz, nullptr) == CL_SUCCESS &&
              sz == 100 &&
              clGetMemObjectInfo((cl_mem)b->handle(), CL_MEM_CONTEXT, sizeof(mctx), &mctx, nullptr) == CL_SUCCESS &&
              mctx == (cl_context)ctx,
          "handle() is a cl_mem of 100 bytes in the process context");
    std::printf("  %s\n", g_failures == before ? "PASS" : "FAILED");
}
#endif

#ifdef CONVBWD_WITH_CUDA
struct Case {
    const char *name;
    ConvProblem p;
};

static ConvProblem make(int N, int C, int H, int W, int K, int R, int S, int G, int pt, int pb, int pl, int pr, int sh,
                        int sw, int dh, int dw) {
    ConvProblem p;
    p.N = N, p.C = C, p.H = H, p.W = W, p.K = K, p.R = R, p.S = S, p.G = G;
    p.pad_top = pt, p.pad_bottom = pb, p.pad_left = pl, p.pad_right = pr;
    p.stride_h = sh, p.stride_w = sw, p.dilation_h = dh, p.dilation_w = dw;
    return with_derived_output(p);
}

// One cuDNN run checked against the reference. Returns false on a failed check.
static void cudnn_case(const Case &c, Direction dir, DType t, Layout l, std::mt19937 &rng, bool uniform = false) {
    ConvProblem p = c.p;
    p.dtype = t, p.layout = l;
    char label[160];
    std::snprintf(label, sizeof label, "%-10s %-16s %-4s %-4s", to_string(dir), c.name, to_string(t), to_string(l));
    if (uniform) std::strncat(label, " uniform", sizeof label - std::strlen(label) - 1);
    CudnnPeer peer(p, dir);
    if (!peer.ok()) {
        check(false, std::string(label) + ": cuDNN refused: " + peer.why());
        return;
    }
    HostTensor a, b, out;
    if (dir == Direction::BwdData) {
        a = HostTensor(dy_dims(p), t, l), b = HostTensor(w_dims(p), t, l), out = HostTensor(x_dims(p), t, l);
    } else {
        a = HostTensor(x_dims(p), t, l), b = HostTensor(dy_dims(p), t, l), out = HostTensor(w_dims(p), t, l);
    }
    if (uniform) a.fill_random_uniform(rng), b.fill_random_uniform(rng);
    else a.fill_random_ints(rng), b.fill_random_ints(rng);
    out.fill_nan();
    std::string err;
    auto da = gpu_device(Device::Cuda)->alloc(a.storage.size(), &err);
    auto db = gpu_device(Device::Cuda)->alloc(b.storage.size(), &err);
    auto dout = gpu_device(Device::Cuda)->alloc(out.storage.size(), &err);
    if (!da || !db || !dout) {
        check(false, std::string(label) + ": " + err);
        return;
    }
    bool io = da->upload(a.storage.data(), a.storage.size()) && db->upload(b.storage.data(), b.storage.size()) &&
              dout->upload(out.storage.data(), out.storage.size());  // NaN poison: every element must be written
    check(io, std::string(label) + ": upload");
    bool ran = peer.run(da->handle(), db->handle(), dout->handle());
    check(ran, std::string(label) + ": run: " + peer.why());
    check(gpu_device(Device::Cuda)->sync(&err), std::string(label) + ": " + err);
    check(dout->download(out.storage.data(), out.storage.size()), std::string(label) + ": download");
    if (!ran) return;

    std::vector<double> ref = dir == Direction::BwdData ? ref_bwd_data(p, a.to_logical(), b.to_logical())
                                                        : ref_bwd_weight(p, a.to_logical(), b.to_logical());
    std::vector<float> got = out.to_logical();
    double max_ref = 0, max_err = 0;
    int64_t bad = 0;
    for (double v : ref) max_ref = std::max(max_ref, std::fabs(v));
    // Inputs are small integers (exact in every dtype); error comes from the output rounding
    // (f16 2^-11, bf16 2^-8) and, in f32, from FFT / Winograd algorithms. With uniform f32
    // inputs, TF32 (10-bit mantissa) would show errors near 1e-3 of max_ref: 1e-5 catches it.
    const double rtol = t == DType::F32 ? 1e-5 : t == DType::F16 ? 1e-3 : 8e-3;
    const double tol = rtol * max_ref + 1e-6;
    for (size_t i = 0; i < got.size(); i++) {
        double e = std::fabs((double)got[i] - ref[i]);
        if (!std::isfinite(got[i]) || e > tol) bad++;
        if (std::isfinite(got[i])) max_err = std::max(max_err, e);
    }
    // Timing: median of 5 runs after a warm-up.
    peer.run(da->handle(), db->handle(), dout->handle());
    std::vector<double> ts;
    std::string terr;
    for (int i = 0; i < 5; i++) {
        double ms = -1;
        gpu_device(Device::Cuda)->time([&] { return peer.run(da->handle(), db->handle(), dout->handle()); }, &ms, &terr);
        ts.push_back(ms);
    }
    std::sort(ts.begin(), ts.end());
    std::printf("  %s %s  %-38s ws %9zu B  %.4f ms  max_err %.3g (tol %.3g)\n", bad ? "BAD" : "ok ", label,
                peer.algo_name().c_str(), peer.workspace_bytes(), ts[2], max_err, tol);
    check(bad == 0, std::string(label) + ": " + std::to_string(bad) + " of " + std::to_string(got.size()) +
                        " elements wrong");
    check(ts[0] >= 0, std::string(label) + ": device timer: " + terr);
}

static void cuda_checks(bool quick) {
    std::printf("== CUDA / cuDNN (cuDNN library %s, built against %d.%d.%d)\n", CudnnPeer::library_version().c_str(),
                CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL);
    // Refusals need no GPU.
    {
        ConvProblem p = make(1, 4, 10, 10, 4, 3, 3, 1, 1, 2, 1, 1, 2, 2, 1, 1);  // pads (1,2): P 6 vs 5 symmetric
        CudnnPeer peer(p, Direction::BwdData);
        check(!peer.ok() && peer.why().find("asymmetric padding") != std::string::npos,
              "asymmetric padding refused: " + peer.why());
        std::printf("  asymmetric pad_top 1 / pad_bottom 2 on H 10, stride 2: refused: %s\n", peer.why().c_str());
    }
    std::string why;
    GpuDevice *dev = gpu_device(Device::Cuda, &why);
    if (!dev) {
        std::printf("  SKIP: %s\n", why.c_str());
        ConvProblem p = make(1, 4, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1);
        CudnnPeer peer(p, Direction::BwdWeight);
        check(!peer.ok() && !peer.why().empty(), "CudnnPeer without a device: ok() false with a reason");
        std::printf("  CudnnPeer without a device: ok()=%d why: %s\n", (int)peer.ok(), peer.why().c_str());
        return;
    }
    std::printf("  device: %s\n", dev->name().c_str());
    int before = g_failures;
    buffer_checks(dev);

    std::vector<Case> cases = {
        {"3x3_s1_p1", make(2, 8, 9, 10, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1)},
        {"3x3_s2_p1", make(2, 6, 11, 12, 8, 3, 3, 1, 1, 1, 1, 1, 2, 2, 1, 1)},
        {"1x1_s2", make(2, 16, 8, 9, 8, 1, 1, 1, 0, 0, 0, 0, 2, 2, 1, 1)},
        {"g2_d2_p2", make(1, 8, 12, 11, 6, 3, 3, 2, 2, 2, 2, 2, 1, 1, 2, 2)},
        {"depthwise", make(2, 8, 7, 9, 8, 3, 3, 8, 1, 1, 1, 1, 1, 1, 1, 1)},
        {"5x3_s21_p21", make(1, 4, 13, 10, 5, 5, 3, 1, 2, 2, 1, 1, 2, 1, 1, 1)},
        // pad_bottom 2 != pad_top 1 but the same P as (1, 1): accepted.
        {"asym_equiv", make(1, 4, 9, 9, 4, 3, 3, 1, 1, 2, 1, 2, 2, 2, 1, 1)},
    };
    std::mt19937 rng(42);
    for (const Case &c : cases)
        for (Direction dir : {Direction::BwdData, Direction::BwdWeight})
            for (DType t : {DType::F32, DType::F16, DType::BF16})
                for (Layout l : {Layout::NCHW, Layout::NHWC}) {
                    if (quick && (t != DType::F32 || l != Layout::NCHW) && &c != &cases[0]) continue;
                    cudnn_case(c, dir, t, l, rng);
                }

    // f32 on random reals, channels large enough for tensor cores: fails if TF32 were used.
    {
        Case c{"tf32_probe", make(4, 64, 16, 16, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1)};
        for (Direction dir : {Direction::BwdData, Direction::BwdWeight})
            for (Layout l : {Layout::NCHW, Layout::NHWC}) cudnn_case(c, dir, DType::F32, l, rng, true);
    }

    // A peer on a non-default stream.
    {
        ConvProblem p = cases[0].p;
        CudnnPeer peer(p, Direction::BwdData);
        cudaStream_t s = nullptr;
        check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess, "cudaStreamCreate");
        peer.set_stream(s);
        std::string err;
        auto a = gpu_device(Device::Cuda)->alloc((size_t)p.N * p.K * p.P * p.Q * 4, &err);
        auto b = gpu_device(Device::Cuda)->alloc((size_t)p.K * p.C * p.R * p.S * 4, &err);
        auto o = gpu_device(Device::Cuda)->alloc((size_t)p.N * p.C * p.H * p.W * 4, &err);
        check(a && b && o && a->fill_bytes(0) && b->fill_bytes(0), "stream case buffers: " + err);
        if (a && b && o) {
            double ms = -1;
            std::string terr;
            bool ran = dev->time([&] { return peer.ok() && peer.run(a->handle(), b->handle(), o->handle()); }, &ms, &terr, s);
            check(ran, "run on a stream: " + peer.why() + terr);
            check(ms >= 0 && cudaStreamSynchronize(s) == cudaSuccess, "timer on a stream: " + terr);
            std::printf("  run on a non-blocking stream: %.4f ms\n", ms);
        }
        cudaStreamDestroy(s);
    }
    std::printf("  %s\n", g_failures == before ? "PASS" : "FAILED");
}
#endif

int main(int argc, char **argv) {
    bool no_opencl = false, no_cuda = false, quick = false;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--no-opencl")) no_opencl = true;
        else if (!std::strcmp(argv[i], "--no-cuda")) no_cuda = true;
        else if (!std::strcmp(argv[i], "--quick")) quick = true;
        else {
            std::fprintf(stderr, "usage: %s [--no-opencl] [--no-cuda] [--quick]\n", argv[0]);
            return 2;
        }
    }
#ifdef CONVBWD_WITH_OPENCL
    if (!no_opencl) opencl_checks();
#else
    std::printf("== OpenCL: not built in\n");
#endif
#ifdef CONVBWD_WITH_CUDA
    if (!no_cuda) cuda_checks(quick);
#else
    std::printf("== CUDA: not built in\n");
#endif
    (void)no_opencl, (void)no_cuda, (void)quick;
    std::printf("%d checks, %d failed: %s\n", g_checks, g_failures, g_failures ? "FAIL" : "PASS");
    return g_failures ? 1 : 0;
}
