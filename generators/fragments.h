// Matrix fragments: the per-target matrix primitive the GEMM-shaped schedules call for their inner
// k-block. A fragment operation is a pure extern call Halide emits once per accumulator element
//   <name>(a_0, ..., a_{A-1}, b_0, ..., b_{B-1}, c_0, ..., c_{E-1}, i)
//       ->  element i of this lane's part of A x B + C
// (the storage bits of the f16/bf16 operands; C, the lane's E accumulator elements, and the
// result f32). A k-block's E calls are one scatter/gather update of the accumulator (mma() below):
// every call reads the elements before any is stored. Every lane of the wave makes the same calls
// with the same i in the same order (no bound guard around them: the schedule pads), and a
// per-target prelude defines the name before the kernel's source is compiled:
//   generators/fragments/amdgpu.cl    MFMA builtins: the 16 calls of one 32x32x8 k-block merge into
//                                     one v_mfma_f32_32x32x8{f16,bf16_1k} (gfx908: two
//                                     32x32x4bf16), C added after it;
//   generators/fragments/nvidia.cl    inline PTX for NVIDIA's OpenCL: the 4 calls of one 16x8x16
//                                     k-block merge into one mma.sync.m16n8k16 (tensor cores)
//                                     accumulating onto C;
//   runtime/src/cuda_fragments.cpp    the same instruction put into Halide's PTX (cuda) at load;
//   generators/fragments/emulated.cl  both lane layouts computed through work-group local memory
//                                     and barriers (PoCL in CI, any OpenCL): they run and verify
//                                     the AMD and NVIDIA mappings and the kernels around them.
// The lane layouts (one source: the functions below, used by the algorithm; the preludes follow
// them), with l the lane, j an operand element, i a result element:
//   kind 0, 32x32x8 over a 64-lane wave (AMD MFMA), h = l / 32:
//     A (32 x 8):  lane l holds A[l % 32][4h + j], j < 4;   B (8 x 32): B[4h + j][l % 32]
//     D (32 x 32): element i of lane l is D[8 (i / 4) + 4h + i % 4][l % 32], i < 16
//   kind 1, 16x8x16 over a 32-lane warp (NVIDIA mma.sync m16n8k16), g = l / 4, t = l % 4:
//     A (16 x 16): a_j = A[g + 8 ((j / 2) % 2)][2t + j % 2 + 8 (j / 4)], j < 8
//     B (16 x 8):  b_j = B[2t + j % 2 + 8 (j / 2)][g], j < 4
//     D (16 x 8):  element i = D[g + 8 (i / 2)][2t + i % 2], i < 4
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "conv_problem.h"

namespace convbwd::frag {

// frag::Shape and frag::shape(kind): generators/conv_problem.h (the runtime sizes splits by them).

using Halide::Expr;
// Operand element j of lane l: its row (A) / column (B) within the fragment, and its k.
inline Expr a_row(const Shape &s, Expr l, int j) { return s.kind == 0 ? l % 32 : l / 4 + 8 * ((j / 2) % 2); }
inline Expr a_k(const Shape &s, Expr l, int j) { return s.kind == 0 ? 4 * (l / 32) + j : 2 * (l % 4) + j % 2 + 8 * (j / 4); }
inline Expr b_col(const Shape &s, Expr l, int) { return s.kind == 0 ? l % 32 : l / 4; }
inline Expr b_k(const Shape &s, Expr l, int j) { return s.kind == 0 ? 4 * (l / 32) + j : 2 * (l % 4) + j % 2 + 8 * (j / 2); }
// Channel groups (vec=4 kernels): the fragment's k indices of one block mapped to channels so that
// each lane's operand elements of one row (A) or column (B) are 4 consecutive channels, one 8-byte
// load. The GEMM sums over k in any order, so A and B only have to agree. kind 0: lane l holds k =
// 4h + j already (h = l / 32: group h, element j); kind 1: k = 2t + b + 8u is channel 4t + 2u + b
// (group t = l % 4), so a_j is element 2 (j / 4) + j % 2 of its group and b_j element j.
inline Expr group_of(const Shape &s, Expr l) { return s.kind == 0 ? l / 32 : l % 4; }
inline int a_group_elem(const Shape &s, int j) { return s.kind == 0 ? j : 2 * (j / 4) + j % 2; }
inline int b_group_elem(const Shape &, int j) { return j; }
// A's row halves: a_j is row a_row(s, l, 0) + 8 a_half(s, j) (kind 1; kind 0 has one row per lane).
inline int a_half(const Shape &s, int j) { return s.kind == 0 ? 0 : (j / 2) % 2; }
// The lane and element that hold D[row][col].
inline Expr lane_of(const Shape &s, Expr row, Expr col) {
    return s.kind == 0 ? col + 32 * ((row / 4) % 2) : 4 * (row % 8) + col / 2;
}
inline Expr elem_of(const Shape &s, Expr row, Expr col) {
    return s.kind == 0 ? row % 4 + 4 * (row / 8) : col % 2 + 2 * (row / 8);
}

inline std::string op_name(const Shape &s, DType t) {
    return std::string(s.kind == 0 ? "convbwd_mfma32x32x8_" : "convbwd_mma16x8x16_") + (t == DType::BF16 ? "bf16" : "f16");
}

// One k-block on the lane's accumulator: acc(i, rest...) for i < s.elems becomes element i of
// A x B + C, C = acc's elements before the k-block (one scatter/gather update: Halide loads every
// element before it stores any; a Tuple update would not do here, as Halide 21's SplitTuples does
// not see reads inside a call's arguments, halide/Halide#8672, and stores the elements one by
// one). a and b are the lane's operand elements (storage type).
inline void mma(Halide::Func acc, const std::vector<Expr> &rest, const Shape &s, DType t, const std::vector<Expr> &a,
                const std::vector<Expr> &b) {
    std::vector<Expr> args(a), at(1, Expr()), elems, out;
    args.insert(args.end(), b.begin(), b.end());
    at.insert(at.end(), rest.begin(), rest.end());
    for (int e = 0; e < s.elems; e++) {
        at[0] = e;
        args.push_back(acc(at));
        elems.push_back(e);
    }
    for (int i = 0; i < s.elems; i++) {
        std::vector<Expr> with_i(args);
        with_i.push_back(i);
        out.push_back(Halide::Internal::Call::make(Halide::Float(32), op_name(s, t), with_i,
                                                   Halide::Internal::Call::PureExtern));
    }
    at[0] = Halide::scatter(elems);
    acc(at) = Halide::gather(out);
}

}  // namespace convbwd::frag
