// Schedule functions: one per (direction, device kind). The stride and filter class change
// parameters and branches inside, never the algorithm.
#pragma once

#include "../generators/algorithms.h"
#include "params.h"

namespace convbwd {

void schedule_bwd_data_host(BwdDataGraph &g, const BwdDataHostParams &p, const ConvArgs &a, Layout layout,
                            StrideClass sc, FilterClass fc);
void schedule_bwd_weight_host(BwdWeightGraph &g, const BwdWeightHostParams &p, const ConvArgs &a,
                              Layout layout, StrideClass sc, FilterClass fc);

void schedule_bwd_data_gpu(BwdDataGraph &g, const BwdDataGpuParams &p, const ConvArgs &a, Layout layout,
                           StrideClass sc, FilterClass fc);
void schedule_bwd_weight_gpu(BwdWeightGraph &g, const BwdWeightGpuParams &p, const ConvArgs &a, Layout layout,
                             StrideClass sc, FilterClass fc);

}  // namespace convbwd
