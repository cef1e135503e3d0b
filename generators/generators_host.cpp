// Host (CPU) generators: see generator_base.h.
#include "generator_base.h"

namespace convbwd::gen {
namespace {

class ConvBwdDataHost : public ConvGeneratorBase<ConvBwdDataHost> {
public:
    static constexpr bool kHasWorkspace = false;
    GeneratorParam<int> vec{"vec", BwdDataHostParams{}.vec, 1, 32};
    GeneratorParam<int> tile_c{"tile_c", BwdDataHostParams{}.tile_c, 1, 8};
    GeneratorParam<int> tile_x{"tile_x", BwdDataHostParams{}.tile_x, 1, 16};

    void generate() {
        ConvArgs args = bwd_data_args();
        BwdDataGraph g = build_bwd_data(args);
        BwdDataHostParams p{vec, tile_c, tile_x};
        schedule_bwd_data_host(g, p, args, layout, stride_class, filter_class);
    }
};

class ConvBwdWeightHost : public ConvGeneratorBase<ConvBwdWeightHost> {
public:
    static constexpr bool kHasWorkspace = true;
    GeneratorParam<int> vec{"vec", BwdWeightHostParams{}.vec, 1, 32};
    GeneratorParam<int> tile_c{"tile_c", BwdWeightHostParams{}.tile_c, 1, 8};
    GeneratorParam<int> tile_k{"tile_k", BwdWeightHostParams{}.tile_k, 1, 16};
    GeneratorParam<int> max_splits{"max_splits", BwdWeightHostParams{}.max_splits, 1, 4096};  // cap, read by the runtime

    void generate() {
        ConvArgs args = bwd_weight_args();
        BwdWeightGraph g = build_bwd_weight(args);
        BwdWeightHostParams p{vec, tile_c, tile_k, max_splits};
        schedule_bwd_weight_host(g, p, args, layout, stride_class, filter_class);
    }
};

using ConvBwdDataScatterHost = ConvBwdDataScatter<BwdDataHostParams, false>;

}  // namespace
}  // namespace convbwd::gen

HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdDataHost, conv_bwd_data_host)
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdWeightHost, conv_bwd_weight_host)
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdDataScatterHost, conv_bwd_data_scatter_host)
