// Comparing a kernel's output with the reference: every element written (no NaN left from the
// poison), then exact (f32 on small-integer inputs) or within a tolerance scaled by the
// accumulation count (XNNPACK / MIOpen style).
#pragma once

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

// n_acc: accumulation length (K/G*R*S for bwd_data, N*P*Q for bwd_weight). exact: compare bit
// for bit (f32 on small-integer inputs, where every partial sum is exact).
inline VerifyResult verify_output(const HostTensor &out, const std::vector<double> &ref, int64_t n_acc, bool exact) {
    VerifyResult r;
    std::vector<float> got = out.to_logical();
    for (double v : ref)
        if (std::isfinite(v)) r.max_ref = std::max(r.max_ref, std::fabs(v));
    const double eps_out = eps_of(out.dtype), eps_acc = 0x1p-24;
    r.tol = exact ? 0.0 : r.max_ref * ((double)n_acc * eps_acc + eps_out) + eps_out;
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
