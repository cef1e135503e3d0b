// Schedule functions: one per (direction, device kind). The stride and filter class change
// parameters and branches inside, never the algorithm.
#pragma once

#include "../generators/algorithms.h"
#include "spaces.h"

#include <vector>

namespace convbwd {

// Applies a schedule to each specialisation of an output Func: {fits, anything} x {beta == 0,
// beta != 0}; `full` tells the schedule whether its tiles fit. With beta == 0 the read of prev
// folds away, so the old output is never read. An undefined beta: only {fits, anything}.
// `whole` (optional) is added to `fits` where beta != 0: an output computed in place from prev
// must not have overlapping tiles (a ShiftInwards tail re-reading prev after a neighbour's
// store there would add beta * prev twice), so there the tiles must divide the extent.
template <class F>
void for_each_branch(Halide::Func f, Halide::Expr fits, Halide::Expr beta, F apply, Halide::Expr whole = Halide::Expr()) {
    if (beta.defined()) {
        apply(f.specialize(fits && beta == 0.0f), true);
        apply(f.specialize(whole.defined() ? fits && whole : fits), true);
        apply(f.specialize(beta == 0.0f), false);
    } else {
        apply(f.specialize(fits), true);
    }
    apply(Halide::Stage(f), false);
}

// The same with several tile shapes: shapes[i] is taken where its condition holds (first match
// wins); apply(stage, i) schedules it, apply(stage, -1) the fallback for everything else.
// `whole` (one condition per shape, or empty) is added to shape i's condition where beta != 0,
// as above.
template <class F>
void for_each_branch(Halide::Func f, const std::vector<Halide::Expr> &shapes, Halide::Expr beta, F apply,
                     const std::vector<Halide::Expr> &whole = {}) {
    for (size_t i = 0; i < shapes.size(); i++) {
        if (beta.defined()) apply(f.specialize(shapes[i] && beta == 0.0f), (int)i);
        apply(f.specialize(whole.empty() ? shapes[i] : shapes[i] && whole[i]), (int)i);
    }
    if (beta.defined()) apply(f.specialize(beta == 0.0f), -1);
    apply(Halide::Stage(f), -1);
}

void schedule_bwd_data_staged_gpu(BwdDataStagedGraph &g, const BwdDataStagedGpuParams &p, Layout layout);
void schedule_bwd_data_host(BwdDataGraph &g, const BwdDataHostParams &p, const ConvArgs &a, Layout layout,
                            StrideClass sc, FilterClass fc, GroupClass gc = GroupClass::Any);
void schedule_bwd_weight_host(BwdWeightGraph &g, const BwdWeightHostParams &p, const ConvArgs &a,
                              Layout layout, StrideClass sc, FilterClass fc);

void schedule_bwd_data_cols_host(BwdDataGraph &g, const BwdDataHostParams &p, const ConvArgs &a, FilterClass fc);
void schedule_bwd_data_packed_host(BwdDataGraph &g, const BwdDataHostParams &p, const ConvArgs &a, Layout layout,
                                   FilterClass fc);
void schedule_bwd_data_dw_nhwc_s1_host(BwdDataGraph &g, const BwdDataHostParams &p, const ConvArgs &a,
                                       FilterClass fc);
void schedule_bwd_data_dw_nchw_s1_host(BwdDataGraph &g, const BwdDataHostParams &p, const ConvArgs &a,
                                       FilterClass fc);
void schedule_bwd_weight_dw_host(BwdWeightGraph &g, const BwdWeightDwHostParams &p, const ConvArgs &a,
                                 Layout layout, StrideClass sc, FilterClass fc);
void schedule_bwd_weight_narrow_host(BwdWeightGraph &g, const BwdWeightNarrowHostParams &p, const ConvArgs &a,
                                     Layout layout, StrideClass sc, FilterClass fc);
void schedule_bwd_weight_grouped_host(BwdWeightGraph &g, const BwdWeightGroupedHostParams &p, const ConvArgs &a,
                                      FilterClass fc);

void schedule_bwd_data_gpu(BwdDataGraph &g, const BwdDataGpuParams &p, const ConvArgs &a, Layout layout,
                           StrideClass sc, FilterClass fc, GroupClass gc = GroupClass::Any);
void schedule_bwd_data_mma_gpu(BwdDataMmaGraph &g, const BwdDataMmaGpuParams &p, Layout layout);
void schedule_bwd_weight_mma_gpu(BwdWeightMmaGraph &g, const BwdWeightMmaGpuParams &p, Layout layout);
void schedule_bwd_weight_staged_gpu(BwdWeightStagedGraph &g, const BwdWeightStagedGpuParams &p, Layout layout);
void schedule_bwd_weight_gpu(BwdWeightGraph &g, const BwdWeightGpuParams &p, const ConvArgs &a, Layout layout,
                             StrideClass sc, FilterClass fc, GroupClass gc = GroupClass::Any);

}  // namespace convbwd
