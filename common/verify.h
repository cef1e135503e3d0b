// Comparing a kernel's output with the reference: every element written (no NaN left from the
// poison), then exact (f32 on small-integer inputs) or within a tolerance scaled by the
// accumulation count (XNNPACK / MIOpen style).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/tensor.h"

namespace convbwd {

struct VerifyResult {
    bool ok = true;
    int64_t unwritten = 0;   // elements still NaN (poison) or non-finite
    int64_t mismatches = 0;
    double max_err = 0, tol = 0, max_ref = 0;
    std::string first_bad;   // "at (0, 3, 1, 2): got 5, want 4"
};

inline double eps_of(DType t) { return t == DType::F32 ? 0x1p-24 : t == DType::F16 ? 0x1p-11 : 0x1p-8; }

// The rounding an implementation is allowed, beyond the exact result (tolerance =
// max|ref| x (n_acc x 2^-24 x acc_scale + eps(dtype) x storage_roundings) + eps(dtype)):
// - convbwd's kernels sum in f32 (2^-24 a term, linear in the reduction length n_acc) and round
//   once to the storage type: the default.
// - A peer (oneDNN, cuDNN) is an implementation whose internals the run does not control, held to
//   the rounding its algorithm may add, by dtype and reduction length: its partial sums may be
//   stored in the tensors' type at each level of a split or tree reduction (ceil(log2 n_acc)
//   levels; bf16 at 1e5 terms: 17 roundings of 2^-8), and an algorithm that works in a
//   transformed domain (FFT, Winograd) rounds values that the transform has made larger than the
//   result (acc_scale, from the peer: 16 for cuDNN's FFT and Winograd algorithms).
struct ErrorModel {
    double acc_scale = 1;       // f32 accumulation error, a multiple of n_acc x 2^-24
    double storage_roundings = 1;  // roundings to the storage type
    std::string why;            // how a peer's model differs from the default (for its note)
};

// A transform-domain algorithm's f32 error allowance (FFT, Winograd: cuDNN's and convbwd's Winograd
// kernels alike), a multiple of the direct sum's n_acc x 2^-24.
inline constexpr double kTransformErrorScale = 16;

inline ErrorModel peer_error_model(int64_t n_acc, double transform_scale, const std::string &transform_what) {
    ErrorModel m;
    m.acc_scale = transform_scale;
    m.storage_roundings = 1 + std::ceil(std::log2((double)std::max<int64_t>(n_acc, 1)));
    m.why = "peer: partial sums rounded to the storage type at " + std::to_string((int)m.storage_roundings - 1) +
            " levels";
    if (transform_scale != 1) m.why += ", f32 error x" + std::to_string((int)transform_scale) + " (" + transform_what + ")";
    return m;
}

// n_acc: accumulation length (K/G*R*S for bwd_data, N*P*Q for bwd_weight). exact: compare bit
// for bit (f32 on small-integer inputs, where every partial sum is exact).
inline VerifyResult verify_output(const HostTensor &out, const std::vector<double> &ref, int64_t n_acc, bool exact,
                                  const ErrorModel &model = {}) {
    VerifyResult r;
    std::vector<float> got = out.to_logical();
    for (double v : ref)
        if (std::isfinite(v)) r.max_ref = std::max(r.max_ref, std::fabs(v));
    const double eps_out = eps_of(out.dtype), eps_acc = 0x1p-24;
    r.tol = exact ? 0.0
                  : r.max_ref * ((double)n_acc * eps_acc * model.acc_scale + eps_out * model.storage_roundings) + eps_out;
    const auto &d = out.dims;
    for (size_t i = 0; i < got.size(); i++) {
        double want = ref[i];
        if (out.dtype != DType::F32 && exact) {  // the exact result, rounded once to the storage type
            want = out.dtype == DType::F16 ? f16_to_f32(f32_to_f16((float)want)) : bf16_to_f32(f32_to_bf16((float)want));
        }
        // A non-finite reference (NaN or Inf in the inputs) is matched by the same non-finite
        // value; otherwise a non-finite output is unwritten (the NaN poison) or wrong.
        bool bad;
        if (!std::isfinite(want)) {
            bad = std::isnan(want) ? !std::isnan(got[i]) : (double)got[i] != want;
        } else {
            double err = std::fabs((double)got[i] - want);
            bad = !std::isfinite(got[i]) || err > r.tol;
            if (!std::isfinite(got[i])) r.unwritten++;
            else r.max_err = std::max(r.max_err, err);
        }
        if (bad) {
            if (r.mismatches == 0) {
                int64_t i3 = i % d[3], i2 = (i / d[3]) % d[2], i1 = (i / d[3] / d[2]) % d[1], i0 = i / d[3] / d[2] / d[1];
                r.first_bad = "at (" + std::to_string(i0) + ", " + std::to_string(i1) + ", " + std::to_string(i2) + ", " +
                              std::to_string(i3) + "): got " + std::to_string(got[i]) + ", want " + std::to_string(want);
            }
            r.mismatches++;
        }
    }
    r.ok = r.mismatches == 0;
    return r;
}

}  // namespace convbwd
