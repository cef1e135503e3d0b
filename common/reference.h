// The naive reference of each direction: the formulas of DESIGN.md as loops, double
// accumulation. Inputs and outputs are logical-order float arrays (NCHW / KCRS), so the
// reference knows nothing of layouts, dtypes or kernels.
#pragma once

#include <vector>

#include "generators/conv_problem.h"

namespace convbwd {

// dx (N, C, H, W) from dy (N, K, P, Q) and w (K, C/G, R, S). P, Q must be filled.
std::vector<double> ref_bwd_data(const ConvProblem &p, const std::vector<float> &dy, const std::vector<float> &w);
// dw (K, C/G, R, S) from x (N, C, H, W) and dy (N, K, P, Q).
std::vector<double> ref_bwd_weight(const ConvProblem &p, const std::vector<float> &x, const std::vector<float> &dy);

}  // namespace convbwd
