// Shared test machinery: problem sweeps and "run one kernel on one problem against the
// reference" (fresh random small-integer inputs, NaN-poisoned output, every element checked).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/reference.h"
#include "common/shapes.h"
#include "common/tensor.h"
#include "common/verify.h"
#if defined(CONVBWD_WITH_CUDA) || defined(CONVBWD_WITH_OPENCL)
#include "common/device_memory.h"
#endif
#include "convbwd/convbwd.h"

namespace convbwd::test {

inline std::string describe(const ConvProblem &p, Direction d) {
    return std::string(to_string(d)) + " " + to_driver_line(p, d == Direction::BwdData ? 2 : 4) +
           " (P=" + std::to_string(p.P) + " Q=" + std::to_string(p.Q) + ")";
}

inline bool valid(const ConvProblem &p) {
    convbwd_problem c = to_c(p);
    const char *name = nullptr;
    // validate through the library itself (any kernel query validates first)
    return convbwd_select_kernel(&c, CONVBWD_BWD_DATA, CONVBWD_F32, CONVBWD_NCHW, nullptr, &name) !=
           CONVBWD_BAD_PARAM;
}

// The edge suite plus a sweep crossing stride {1,2,3}, dilation {1,2}, filter {1,2,3,5},
// padding {0,1,2, asymmetric}, groups {1, 2, depthwise} at odd sizes, and channel counts that
// reach the kernels' full register tiles (and their tails). Geometry only: dtype and layout are
// the kernel's.
inline std::vector<ConvProblem> conformance_problems() {
    std::vector<ConvProblem> out;
    for (const ShapeEntry &e : load_shapes(shapes_dir() + "/edge.txt")) out.push_back(e.problem);
    struct Ch {
        int C, K, G;
    };
    const Ch chans[] = {{3, 5, 1}, {17, 33, 1}, {6, 4, 2}, {4, 4, 4}, {32, 24, 1}, {34, 18, 2}, {20, 20, 20}};
    const int sizes[] = {7, 11, 13};
    int i = 0;
    for (int stride : {1, 2, 3})
        for (int dil : {1, 2})
            for (int f : {1, 2, 3, 5})
                for (int pad : {0, 1, 2, -1})  // -1: asymmetric (top/left 1, bottom/right 0 or 2)
                    for (int gsel = 0; gsel < 3; gsel++, i++) {
                        const Ch &ch = gsel == 0 ? chans[(i / 3) % 2 == 0 ? 0 : 1 + 3 * ((i / 6) % 2)]
                                     : gsel == 1 ? chans[(i / 3) % 2 == 0 ? 2 : 5]
                                                 : chans[(i / 3) % 2 == 0 ? 3 : 6];
                        ConvProblem p;
                        p.N = 1 + i % 2;
                        p.C = ch.C, p.K = ch.K, p.G = ch.G;
                        p.H = sizes[i % 3], p.W = sizes[(i + 1) % 3];
                        p.R = f, p.S = f == 5 ? 3 : f;  // non-square filters too
                        p.stride_h = stride, p.stride_w = stride;
                        p.dilation_h = dil, p.dilation_w = dil;
                        if (pad >= 0) {
                            p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = pad;
                        } else {
                            p.pad_top = 1, p.pad_bottom = 0, p.pad_left = 1, p.pad_right = 2;
                        }
                        p = with_derived_output(p);
                        if (valid(p)) out.push_back(p);
                    }
    // Full tiles of the specialised classes, with a channel tail and a column tail.
    for (int stride : {1, 2})
        for (int f : {1, 3}) {
            ConvProblem p;
            p.N = 2, p.C = 40, p.K = 36, p.H = 9, p.W = 13, p.R = p.S = f;
            p.stride_h = p.stride_w = stride;
            p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = f / 2;
            out.push_back(with_derived_output(p));
        }
    // A pointwise plane of 60 columns in rows of 10: read as one row it is whole vectors of 4
    // (kernels loading columns as vectors, xvec), its rows are not.
    {
        ConvProblem p;
        p.N = 2, p.C = 40, p.K = 36, p.H = 6, p.W = 10, p.R = p.S = 1;
        out.push_back(with_derived_output(p));
    }
    // A first layer: 3 or 4 input channels, 7-wide filters at stride 2 (the GPU stem tile:
    // all channels x 7 taps per thread), with a k tail and a non-square filter.
    for (int C : {3, 4}) {
        ConvProblem p;
        p.N = 2, p.C = C, p.K = 10, p.H = 19, p.W = 23, p.R = C == 3 ? 7 : 5, p.S = 7;
        p.stride_h = p.stride_w = 2;
        p.pad_top = p.pad_bottom = p.R / 2, p.pad_left = p.pad_right = 3;
        out.push_back(with_derived_output(p));
    }
    return out;
}

struct RunResult {
    convbwd_status status = CONVBWD_SUCCESS;
    std::string error;
    VerifyResult verify;
};

inline convbwd_target target_of(Device d) {
    return d == Device::Host     ? CONVBWD_TARGET_HOST
           : d == Device::OpenCL ? CONVBWD_TARGET_OPENCL
           : d == Device::Cuda   ? CONVBWD_TARGET_CUDA
                                 : CONVBWD_TARGET_AMDGPU;
}

// Whether tests can run kernels of device d here; *why says why not.
inline bool device_usable(Device d, std::string *why) {
    if (d == Device::Host) return true;
#ifdef CONVBWD_WITH_DEVICE_MEMORY
    if (d == Device::AmdGpu) return device_available(DeviceKind::Hip, why);
#endif
#if defined(CONVBWD_WITH_CUDA) || defined(CONVBWD_WITH_OPENCL)
    if (d == Device::Cuda) return device_available(DeviceKind::Cuda, why);
    if (d == Device::OpenCL) return device_available(DeviceKind::OpenCL, why);
#endif
    *why = std::string("no ") + to_string(d) + " device support in this test build";
    return false;
}

#ifdef CONVBWD_WITH_DEVICE_MEMORY
// The device-memory kind of a GPU device (test/device_memory).
inline DeviceKind device_kind(Device d) {
    return d == Device::Cuda ? DeviceKind::Cuda : d == Device::OpenCL ? DeviceKind::OpenCL : DeviceKind::Hip;
}
#endif

// Runs `kernel` (or the dispatcher when empty) on p with fresh random inputs and compares with
// the reference. The output is poisoned with NaN first; beta = 0 must not read it. On a GPU
// device the tensors and the workspace live in device memory and the call runs on its queue.
inline RunResult run_against_reference(ConvProblem p, Direction dir, const std::string &kernel, std::mt19937 &rng,
                                       float alpha = 1.0f, float beta = 0.0f, Device device = Device::Host) {
    RunResult rr;
    convbwd_problem cp = to_c(p);
    convbwd_exec exec{};
    exec.kernel = kernel.empty() ? nullptr : kernel.c_str();
    exec.target = target_of(device);
    HostTensor a, b, out;
    if (dir == Direction::BwdData) {
        a = HostTensor(dy_dims(p), p.dtype, p.layout);
        b = HostTensor(w_dims(p), p.dtype, p.layout);
        out = HostTensor(x_dims(p), p.dtype, p.layout);
    } else {
        a = HostTensor(x_dims(p), p.dtype, p.layout);
        b = HostTensor(dy_dims(p), p.dtype, p.layout);
        out = HostTensor(w_dims(p), p.dtype, p.layout);
    }
    // Fresh random inputs; drawn again (a few times) if the reference would be all zeros, which
    // tiny problems hit by chance and which would hide an unwritten output.
    std::vector<double> ref;
    for (int attempt = 0; attempt < 8; attempt++) {
        a.fill_random_ints(rng);
        b.fill_random_ints(rng);
        ref = dir == Direction::BwdData ? ref_bwd_data(p, a.to_logical(), b.to_logical())
                                        : ref_bwd_weight(p, a.to_logical(), b.to_logical());
        if (std::any_of(ref.begin(), ref.end(), [](double v) { return v != 0; })) break;
    }
    std::vector<float> prev;
    if (beta == 0.0f) {
        out.fill_nan();
    } else {
        out.fill_random_ints(rng);
        prev = out.to_logical();
    }
    // The exec names the kernel, so the caller provides the workspace, as a framework would.
    size_t ws_bytes = 0;
    convbwd_direction cd = dir == Direction::BwdData ? CONVBWD_BWD_DATA : CONVBWD_BWD_WEIGHT;
    if (convbwd_workspace_size(&cp, cd, to_c(p.dtype), to_c(p.layout), &exec, &ws_bytes) != CONVBWD_SUCCESS) {
        rr.status = CONVBWD_NO_KERNEL;
        rr.error = convbwd_last_error();
        return rr;
    }
    std::vector<float> ws(ws_bytes / sizeof(float) + 1);
    exec.workspace = ws.data();
    exec.workspace_bytes = ws_bytes;
    convbwd_tensor ta = a.desc(), tb = b.desc(), to = out.desc();
    auto call = [&] {
        return dir == Direction::BwdData ? convbwd_bwd_data(&cp, &ta, &tb, &to, alpha, beta, &exec)
                                         : convbwd_bwd_weight(&cp, &ta, &tb, &to, alpha, beta, &exec);
    };
    if (device == Device::Host) {
        rr.status = call();
    } else {
#ifdef CONVBWD_WITH_DEVICE_MEMORY
        const DeviceKind kind = device_kind(device);
        std::string err;
        auto da = DeviceBuffer::create(kind, a.storage.size(), &err), db = DeviceBuffer::create(kind, b.storage.size(), &err),
             dout = DeviceBuffer::create(kind, out.storage.size(), &err), dws = DeviceBuffer::create(kind, ws_bytes, &err);
        if (!da || !db || !dout || !dws || !da->upload(a.storage.data(), a.storage.size()) ||
            !db->upload(b.storage.data(), b.storage.size()) || !dout->upload(out.storage.data(), out.storage.size())) {
            rr.status = CONVBWD_DEVICE_ERROR;
            rr.error = "device buffers: " + err;
            return rr;
        }
        ta.data = da->handle(), tb.data = db->handle(), to.data = dout->handle();
        exec.workspace = dws->handle();
        if (device == Device::OpenCL) exec.stream = opencl_queue();
        rr.status = call();
        if (rr.status == CONVBWD_SUCCESS && (!device_synchronize(kind, &err) || !dout->download(out.storage.data(), out.storage.size()))) {
            rr.status = CONVBWD_DEVICE_ERROR;
            rr.error = "after the call: " + err + dout->last_error();
            return rr;
        }
#else
        rr.status = CONVBWD_NOT_SUPPORTED;
        rr.error = "no device support in this test build";
        return rr;
#endif
    }
    if (rr.status != CONVBWD_SUCCESS) {
        rr.error = convbwd_last_error();
        return rr;
    }
    for (size_t i = 0; i < ref.size(); i++) ref[i] = alpha * ref[i] + (beta != 0.0f ? beta * prev[i] : 0.0);
    int64_t n_acc = dir == Direction::BwdData ? (int64_t)p.K / p.G * p.R * p.S : (int64_t)p.N * p.P * p.Q;
    bool exact = alpha == 1.0f && beta == 0.0f;  // small integers: every partial sum is exact in f32
    rr.verify = verify_output(out, ref, n_acc, exact);
    return rr;
}

}  // namespace convbwd::test
