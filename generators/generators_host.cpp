// Host (CPU) generators: see generator_base.h.
#include <type_traits>

#include "generator_base.h"

namespace convbwd::gen {
namespace {

// gc: the group class the generator is built for (the depthwise families are the same code with
// GroupClass::Depthwise).
template <GroupClass gc>
class ConvBwdDataHost : public ConvGeneratorBase<ConvBwdDataHost<gc>> {
public:
    static constexpr bool kHasWorkspace = false;
    static constexpr Direction kDir = Direction::BwdData;
    static constexpr GroupClass kGroups = gc;
    using Base = ConvGeneratorBase<ConvBwdDataHost<gc>>;
    using Base::layout, Base::stride_class, Base::filter_class;
    BwdDataHostKnobs knobs;

    void generate() {
        ConvArgs args = this->bwd_data_args();
        const BwdDataHostParams p = knobs.params();
        args.data_whole_columns = this->using_autoscheduler() ? 0 : p.cols_tile();
        args.data_row_phase = !this->using_autoscheduler();
        args.data_group_lanes = this->using_autoscheduler() ? 0 : p.group_exact();
        // NCHW depthwise stride 1 and 2 (schedule_bwd_data_dw_nchw_s1_host, _s2_host): dy copied per
        // task, its border apart; at stride 2 a tile is two phases' tile_x vectors.
        if (gc == GroupClass::Depthwise && layout == Layout::NCHW &&
            (stride_class == StrideClass::S1 || stride_class == StrideClass::S2) && !this->using_autoscheduler())
            args.data_copy_dy_columns = p.vec * p.tile_x * (stride_class == StrideClass::S2 ? 2 : 1);
        // pack = 1: acc reads the filter packed per channel tile (BwdDataGraph::w_p). Asked with
        // using_autoscheduler(): autoscheduled() sets out's estimates, and out is defined below.
        BwdDataGraph g = this->build_bwd_data(args, this->using_autoscheduler() ? 0 : p.packed_tile());
        if (this->autoscheduled()) return;
        this->require_valid(p, gc == GroupClass::Depthwise ? "conv_bwd_data_dw_host" : "conv_bwd_data_host");
        schedule_bwd_data_host(g, p, args, layout, stride_class, filter_class, gc);
    }
};

template <GroupClass gc, class Knobs>
class ConvBwdWeightHost : public ConvGeneratorBase<ConvBwdWeightHost<gc, Knobs>> {
    using Params = decltype(Knobs().params());
    // The general family (conv_bwd_weight_host) and the grouped-columns one share gc = Any.
    static constexpr bool kGeneral = std::is_same_v<Knobs, BwdWeightHostKnobs>;
    static constexpr bool kGroupedColumns = std::is_same_v<Knobs, BwdWeightGroupedHostKnobs>;

public:
    static constexpr bool kHasWorkspace = true;
    static constexpr Direction kDir = Direction::BwdWeight;
    static constexpr GroupClass kGroups = gc;
    static constexpr bool kImageSplits = weight_image_splits(ScheduleKind::Host, gc, &Params::knobs);
    using Base = ConvGeneratorBase<ConvBwdWeightHost<gc, Knobs>>;
    using Base::layout, Base::stride_class, Base::filter_class;
    Knobs knobs;

    void generate() {
        ConvArgs args = this->bwd_weight_args();
        const auto p = knobs.params();
        // A register tile's group read from its first k, where the family's tiles of k lie in one group
        // (group_k_tile(): the general family's group_tile, the narrow one's k_vectors, the grouped
        // columns' tile_k; 1: any k).
        int k_tile = 0;
        if constexpr (gc != GroupClass::Depthwise) k_tile = this->using_autoscheduler() ? 0 : p.group_k_tile();
        if constexpr (kGeneral) {
            args.weight_direct = !this->using_autoscheduler() && p.direct;
            args.weight_skip_pad = !this->using_autoscheduler() && p.skip_pad;
        }
        // Columns lanes over rows rounded up to whole vectors, x and dy copied per task with their
        // borders (ConvArgs::weight_copy_planes): the NCHW depthwise every-tap tiles, and the grouped
        // columns family's (tile_k k of one group: k_tile).
        if constexpr (gc == GroupClass::Depthwise) {
            args.likely_bounds = p.full_taps;  // x read in place, or staged per task
            // NCHW: column lanes over rows rounded up to whole vectors (dy and x staged per task).
            // (dy_in_place = 1: dy read in place, rows not rounded up, a row's last vector masked.)
            const bool columns = !p.along_channels(layout) && !this->using_autoscheduler();
            if (columns && !p.dy_in_place) args.weight_round_columns = p.vec;
            // NCHW every tap in the tile: x and dy copied per task, their borders written apart.
            // (channel_vectors = 1: x's and dy's planes copied transposed, x's border select read in the
            // tile, as NHWC's x_in_place.)
            args.weight_copy_planes = columns && p.full_taps;
            args.weight_dy_in_place = p.dy_in_place;
            args.weight_direct = p.direct && !this->using_autoscheduler();  // one split, no workspace
        }
        if constexpr (kGroupedColumns) {
            args.weight_round_columns = p.vec;
            args.weight_copy_planes = true;
        }
        BwdWeightGraph g = this->build_bwd_weight(args, k_tile);
        this->constrain_workspace_taps_to_filter();
        if (this->autoscheduled()) return;
        this->require_valid(p, family_name());
        if constexpr (gc == GroupClass::Depthwise)
            schedule_bwd_weight_dw_host(g, p, args, layout, stride_class, filter_class);
        else if constexpr (gc == GroupClass::Narrow)
            schedule_bwd_weight_narrow_host(g, p, args, layout, stride_class, filter_class);
        else if constexpr (kGroupedColumns)
            schedule_bwd_weight_grouped_host(g, p, args, filter_class);
        else
            schedule_bwd_weight_host(g, p, args, layout, stride_class, filter_class);
    }

private:
    static const char *family_name() {
        return gc == GroupClass::Depthwise ? "conv_bwd_weight_dw_host"
               : gc == GroupClass::Narrow  ? "conv_bwd_weight_narrow_host"
               : kGroupedColumns           ? "conv_bwd_weight_grouped_host"
                                           : "conv_bwd_weight_host";
    }
};

using ConvBwdDataScatterHost = ConvBwdDataScatter<BwdDataHostKnobs, false>;

}  // namespace
}  // namespace convbwd::gen

namespace convbwd::gen {
using ConvBwdDataHostAny = ConvBwdDataHost<GroupClass::Any>;
using ConvBwdDataHostDw = ConvBwdDataHost<GroupClass::Depthwise>;
using ConvBwdWeightHostAny = ConvBwdWeightHost<GroupClass::Any, BwdWeightHostKnobs>;
using ConvBwdWeightHostDw = ConvBwdWeightHost<GroupClass::Depthwise, BwdWeightDwHostKnobs>;
using ConvBwdWeightHostNarrow = ConvBwdWeightHost<GroupClass::Narrow, BwdWeightNarrowHostKnobs>;
using ConvBwdWeightHostGrouped = ConvBwdWeightHost<GroupClass::Any, BwdWeightGroupedHostKnobs>;
}  // namespace convbwd::gen
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdDataHostAny, conv_bwd_data_host)
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdDataHostDw, conv_bwd_data_dw_host)
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdWeightHostAny, conv_bwd_weight_host)
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdWeightHostDw, conv_bwd_weight_dw_host)
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdWeightHostNarrow, conv_bwd_weight_narrow_host)
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdWeightHostGrouped, conv_bwd_weight_grouped_host)
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdDataScatterHost, conv_bwd_data_scatter_host)
// The autoscheduler baselines (schedules/spaces.h): the same generators, run by convbwd-tune with
// autoscheduler=Adams2019 and estimates=...
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdDataHostAny, conv_bwd_data_adams2019_host)
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdWeightHostAny, conv_bwd_weight_adams2019_host)
