// Host (CPU) generators: see generator_base.h.
#include "generator_base.h"

namespace convbwd::gen {
namespace {

class ConvBwdDataHost : public ConvGeneratorBase<ConvBwdDataHost> {
public:
    static constexpr bool kHasWorkspace = false;
    static constexpr Direction kDir = Direction::BwdData;
    BwdDataHostKnobs knobs;

    void generate() {
        ConvArgs args = bwd_data_args();
        BwdDataGraph g = build_bwd_data(args);
        const BwdDataHostParams p = knobs.params();
        require_valid(p, "conv_bwd_data_host");
        schedule_bwd_data_host(g, p, args, layout, stride_class, filter_class);
    }
};

class ConvBwdWeightHost : public ConvGeneratorBase<ConvBwdWeightHost> {
public:
    static constexpr bool kHasWorkspace = true;
    static constexpr Direction kDir = Direction::BwdWeight;
    BwdWeightHostKnobs knobs;

    void generate() {
        ConvArgs args = bwd_weight_args();
        BwdWeightGraph g = build_bwd_weight(args);
        const BwdWeightHostParams p = knobs.params();
        require_valid(p, "conv_bwd_weight_host");
        schedule_bwd_weight_host(g, p, args, layout, stride_class, filter_class);
    }
};

using ConvBwdDataScatterHost = ConvBwdDataScatter<BwdDataHostKnobs, false>;

}  // namespace
}  // namespace convbwd::gen

HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdDataHost, conv_bwd_data_host)
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdWeightHost, conv_bwd_weight_host)
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdDataScatterHost, conv_bwd_data_scatter_host)
