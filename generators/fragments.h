// Matrix fragments: the per-target matrix primitive the GEMM-shaped schedules call for their inner
// k-block. A fragment operation is a pure extern call Halide emits once per accumulator element
//   <name>(a0, a1, a2, a3, b0, b1, b2, b3, i)  ->  element i of this lane's part of A x B
// (the storage bits of the f16/bf16 operands; f32 result). Every lane of the wave makes the same
// calls with the same i in the same order (no bound guard around them: the schedule pads), and a
// per-target prelude defines the name before the kernel's source is compiled:
//   generators/fragments/amdgpu.cl    MFMA builtins: the 16 calls of one k-block merge into one
//                                     v_mfma_f32_32x32x8{f16,bf16_1k} (gfx908: two 32x32x4bf16);
//   generators/fragments/emulated.cl  the same lane layout computed through work-group local
//                                     memory and barriers (PoCL in CI, NVIDIA's OpenCL): it runs
//                                     and verifies the AMD mapping and the kernels around it.
// The lane layout (one source: these functions, used by the algorithm and by the test of the
// preludes), for the 32x32x8 fragment of a 64-lane wave, h = lane / 32:
//   A (32 x 8):  lane l holds A[l % 32][4h + j],     j = 0..3  (a_j)
//   B (8 x 32):  lane l holds B[4h + j][l % 32],     j = 0..3  (b_j)
//   D (32 x 32): lane l, element i holds D[8 (i / 4) + 4h + i % 4][l % 32],  i = 0..15
#pragma once

#include "Halide.h"
#include "conv_problem.h"

namespace convbwd::frag {

constexpr int kLanes = 64, kM = 32, kN = 32, kK = 8, kElems = 16, kPerLane = 4;

// Operand element j of lane l: its row (A) or column (B) within the fragment, and its k.
inline Halide::Expr a_row(Halide::Expr l) { return l % kM; }
inline Halide::Expr b_col(Halide::Expr l) { return l % kN; }
inline Halide::Expr k_of(Halide::Expr l, Halide::Expr j) { return 4 * (l / 32) + j; }
// Result element i of lane l: its row and column of D; and the inverse (lane, element of (row, col)).
inline Halide::Expr d_row(Halide::Expr l, Halide::Expr i) { return 8 * (i / 4) + 4 * (l / 32) + i % 4; }
inline Halide::Expr d_col(Halide::Expr l) { return l % kN; }
inline Halide::Expr lane_of(Halide::Expr row, Halide::Expr col) { return col + 32 * ((row / 4) % 2); }
inline Halide::Expr elem_of(Halide::Expr row) { return row % 4 + 4 * (row / 8); }

inline const char *op_name(DType t) {
    return t == DType::BF16 ? "convbwd_mfma32x32x8_bf16" : "convbwd_mfma32x32x8_f16";
}

// Element i of the lane's result of A x B for one k-block: a and b are the lane's kPerLane
// operand elements (storage type).
inline Halide::Expr op(DType t, const std::vector<Halide::Expr> &a, const std::vector<Halide::Expr> &b,
                       Halide::Expr i) {
    std::vector<Halide::Expr> args(a);
    args.insert(args.end(), b.begin(), b.end());
    args.push_back(i);
    return Halide::Internal::Call::make(Halide::Float(32), op_name(t), args, Halide::Internal::Call::PureExtern);
}

}  // namespace convbwd::frag
