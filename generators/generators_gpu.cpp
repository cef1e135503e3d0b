// GPU generators (CUDA, OpenCL, AMDGPU through OpenCL C): see generator_base.h.
#include "generator_base.h"

namespace convbwd::gen {
namespace {

// Constrains buffer dim d's extent to a multiple of v (checked on entry), so that Halide can
// prove tiles along it start at multiples of v (aligned vector loads).
template <class Buf>
void extent_multiple_of(Buf &buf, int d, int v) {
    buf->dim(d).set_extent((buf->dim(d).extent() / v) * v);
}

// Constrains an NHWC activation whose channels load in place as vectors of v elements of `bytes`
// each: its base and its N, H and W strides multiples of v (checked on entry; the dispatcher's
// input_channel_vector() checks first), so that Halide sees aligned vector loads.
template <class Buf>
void channels_in_place(Buf &buf, int v, int bytes) {
    buf->set_host_alignment(v * bytes);
    for (int d : {0, 1, 3}) buf->dim(d).set_stride((buf->dim(d).stride() / v) * v);
}

// gc: the group class (the depthwise families are the same generators with GroupClass::Depthwise).
template <GroupClass gc>
class ConvBwdDataGpu : public ConvGeneratorBase<ConvBwdDataGpu<gc>> {
public:
    static constexpr bool kHasWorkspace = false;
    static constexpr Direction kDir = Direction::BwdData;
    static constexpr GroupClass kGroups = gc;
    using Base = ConvGeneratorBase<ConvBwdDataGpu<gc>>;
    using Base::layout, Base::stride_class, Base::filter_class, Base::dtype, Base::out, Base::a, Base::b, Base::prev;
    BwdDataGpuKnobs knobs;

    void generate() {
        ConvArgs args = this->bwd_data_args();
        BwdDataGraph g = this->build_bwd_data(args);
        if (this->autoscheduled()) return;
        const BwdDataGpuParams p = knobs.params();
        this->require_valid(p, gc == GroupClass::Depthwise ? "conv_bwd_data_dw_gpu" : "conv_bwd_data_gpu");
        if (const int cv = p.channel_vector(); cv > 1) {
            // dx's channels (C) and w's (C / groups) a multiple of the vector: every channel
            // tile then starts at a multiple of it, which Halide sees (the extent symbols become
            // (e / cv) * cv, checked on entry; the dispatcher checks first).
            extent_multiple_of(out, 2, cv);
            extent_multiple_of(b, 2, cv);
        }
        if (const int xv = p.column_vector(); xv > 1) {
            // Columns as vectors (NCHW read in place): dx's and dy's rows a multiple of the
            // vector and their other strides too, so that every thread's first column is a
            // multiple of it from an aligned base (the dispatcher checks first).
            auto constrain = [&](auto &buf) {
                buf.set_host_alignment(xv * storage_type(dtype).bytes());
                buf.dim(0).set_extent((buf.dim(0).extent() / xv) * xv);
                for (int d = 1; d < 4; d++) buf.dim(d).set_stride((buf.dim(d).stride() / xv) * xv);
            };
            constrain(*out);
            constrain(*a);
            constrain(*prev);
        }
        schedule_bwd_data_gpu(g, p, args, layout, stride_class, filter_class, gc);
    }
};

// Staged backward-data (conv_bwd_data_staged_gpu): stride 1 or 2, f32, an implicit GEMM over taps x k
// with its operands staged per block in shared memory (valid() holds the class and the budget); with
// winograd = m, the same GEMM per Winograd transform point (class s1 k3 or k5).
class ConvBwdDataStagedGpu : public ConvGeneratorBase<ConvBwdDataStagedGpu> {
public:
    static constexpr bool kHasWorkspace = false;
    static constexpr Direction kDir = Direction::BwdData;
    static constexpr GroupClass kGroups = GroupClass::Any;
    BwdDataStagedGpuKnobs knobs;

    void generate() {
        ConvArgs args = bwd_data_args();
        const BwdDataStagedGpuParams p = knobs.params();
        require_valid(p, "conv_bwd_data_staged_gpu");
        BwdDataStagedGraph g =
            p.winograd ? define_bwd_data_winograd(*a, *b, *prev, Func(*out), args, dtype, p.winograd,
                                                  class_filter_size(filter_class), p.tile_x, p.tile_c, p.threads_x,
                                                  p.threads_c, p.block_k)
                       : define_bwd_data_staged(*a, *b, *prev, Func(*out), args, dtype, stride_class, filter_class, p.tile_x,
                                                p.tile_c, p.threads_x, p.threads_c, p.block_k, p.fold_images, p.skip_pad);
        constrain_bwd_data_buffers();
        schedule_bwd_data_staged_gpu(g, p, layout);
    }
};

// Matrix fragments (conv_bwd_data_mma_gpu): stride classes s1 and s2 as an implicit GEMM.
class ConvBwdDataMmaGpu : public ConvGeneratorBase<ConvBwdDataMmaGpu> {
public:
    static constexpr bool kHasWorkspace = false;
    static constexpr Direction kDir = Direction::BwdData;
    static constexpr GroupClass kGroups = GroupClass::Any;
    BwdDataMmaGpuKnobs knobs;

    void generate() {
        ConvArgs args = bwd_data_args();
        add_requirement(args.groups == 1, "matrix-fragment kernels take groups == 1");
        const BwdDataMmaGpuParams p = knobs.params();
        BwdDataMmaGraph g =
            define_bwd_data_mma(*a, *b, *prev, Func(*out), args, dtype, stride_class, filter_class, p.frag, p.vec,
                                data_mma_copies_dy(p, layout), p.stage, p.tile_m, p.tile_n, p.warps_m, p.warps_n,
                                data_block_columns(p), data_mma_copies_ahead(p), p.unroll);
        constrain_bwd_data_buffers();
        if (const int iv = data_mma_input_vector(p, layout); iv > 1) {
            // dy's channel groups load as vectors in place: k, dy's base and its other strides
            // multiples of the vector, which Halide then sees (the dispatcher checks first).
            add_requirement(args.K % iv == 0, "vec kernels take k a multiple of the vector");
            channels_in_place(a, iv, storage_type(dtype).bytes());
        }
        require_valid(p, "conv_bwd_data_mma_gpu");
        schedule_bwd_data_mma_gpu(g, p, layout);
    }
};

// Matrix fragments (conv_bwd_weight_mma_gpu): an implicit GEMM per filter tap, split over the
// pixels' k-blocks into the workspace.
class ConvBwdWeightMmaGpu : public ConvGeneratorBase<ConvBwdWeightMmaGpu> {
public:
    static constexpr bool kHasWorkspace = true;
    static constexpr Direction kDir = Direction::BwdWeight;
    static constexpr GroupClass kGroups = GroupClass::Any;
    BwdWeightMmaGpuKnobs knobs;

    void generate() {
        ConvArgs args = bwd_weight_args();
        add_requirement(args.groups == 1, "matrix-fragment kernels take groups == 1");
        const BwdWeightMmaGpuParams p = knobs.params();
        BwdWeightMmaGraph g = define_bwd_weight_mma(*a, *b, *prev, Func(*ws), Func(*out), args, dtype, stride_class,
                                                    filter_class, max(*splits, 1), p.frag, p.vec, p.stage, p.unroll,
                                                    p.copy_groups);
        constrain_weight_buffers();
        if (const int cv = p.channel_vector(); cv > 1) {
            // The staged chunks (copy_groups: the copies) read x's and dy's channels in groups of cv: C
            // and K multiples of cv; NHWC loads a group as one vector from the tensors in place, so the bases and the
            // other strides are multiples of cv too, which Halide then sees (the dispatcher checks
            // first: weight_mma_input_vector).
            for (auto *buf : {a, b}) {
                extent_multiple_of(buf, 2, cv);
                if (const int iv = weight_mma_input_vector(p, layout); iv > 1)
                    channels_in_place(buf, iv, storage_type(dtype).bytes());
            }
        }
        require_valid(p, "conv_bwd_weight_mma_gpu");
        schedule_bwd_weight_mma_gpu(g, p, layout);
    }
};

// Staged backward-weight (conv_bwd_weight_staged_gpu): f32, groups 1, an implicit GEMM per filter
// tap with its operands staged per block in shared memory, split over the rows into the workspace;
// with winograd = m, the same GEMM per Winograd transform point (class s1 k3 or k5).
class ConvBwdWeightStagedGpu : public ConvGeneratorBase<ConvBwdWeightStagedGpu> {
public:
    static constexpr bool kHasWorkspace = true;
    static constexpr Direction kDir = Direction::BwdWeight;
    static constexpr GroupClass kGroups = GroupClass::Any;
    BwdWeightStagedGpuKnobs knobs;

    void generate() {
        ConvArgs args = bwd_weight_args();
        add_requirement(args.groups == 1, "staged backward-weight kernels take groups == 1");
        const BwdWeightStagedGpuParams p = knobs.params();
        require_valid(p, "conv_bwd_weight_staged_gpu");
        BwdWeightStagedGraph g =
            p.winograd ? define_bwd_weight_winograd(*a, *b, *prev, Func(*ws), Func(*out), args, dtype, max(*splits, 1),
                                                    p.winograd, class_filter_size(filter_class), p.tile_c, p.tile_k,
                                                    p.threads_c, p.threads_k, p.block_p)
                       : define_bwd_weight_staged(*a, *b, *prev, Func(*ws), Func(*out), args, dtype, stride_class,
                                                  filter_class, max(*splits, 1), p.tile_c, p.tile_k, p.threads_c,
                                                  p.threads_k, p.block_p, p.skip_pad);
        constrain_weight_buffers();
        schedule_bwd_weight_staged_gpu(g, p, layout);
    }
};

template <GroupClass gc>
class ConvBwdWeightGpu : public ConvGeneratorBase<ConvBwdWeightGpu<gc>> {
public:
    static constexpr bool kHasWorkspace = true;
    static constexpr Direction kDir = Direction::BwdWeight;
    static constexpr GroupClass kGroups = gc;
    static constexpr bool kImageSplits = weight_image_splits(ScheduleKind::Gpu, gc, &BwdWeightGpuParams::knobs);
    using Base = ConvGeneratorBase<ConvBwdWeightGpu<gc>>;
    using Base::layout, Base::stride_class, Base::filter_class, Base::out, Base::a, Base::b, Base::ws;
    BwdWeightGpuKnobs knobs;

    void generate() {
        ConvArgs args = this->bwd_weight_args();
        BwdWeightGraph g = this->build_bwd_weight(args);
        if (this->autoscheduled()) return;
        const BwdWeightGpuParams p = knobs.params();
        this->require_valid(p, gc == GroupClass::Depthwise ? "conv_bwd_weight_dw_gpu"
                               : gc == GroupClass::Narrow  ? "conv_bwd_weight_narrow_gpu"
                                                           : "conv_bwd_weight_gpu");
        // The first-layer family takes one group (takes_one_group, schedules/spaces.h).
        if constexpr (gc == GroupClass::Narrow) this->add_requirement(args.groups == 1, "narrow GPU kernels take groups == 1");
        if (p.vec > 1) {
            // C and K multiples of the vector (dims 2 of x, dy, dw and the workspace): every channel
            // tile, ShiftInwards included, then starts at a multiple of it, which Halide sees (the
            // extents become (e / vec) * vec, checked on entry; the dispatcher checks first).
            extent_multiple_of(a, 2, p.vec);
            extent_multiple_of(b, 2, p.vec);
            for (int d : {2, 3}) {
                extent_multiple_of(out, d, p.vec);
                extent_multiple_of(ws, d, p.vec);
            }
            // Checked on the host before any launch (the schedule's specialize_fail for other
            // groups would only fail inside the kernel).
            this->add_requirement(args.groups == 1, "vec kernels take groups == 1");
        }
        schedule_bwd_weight_gpu(g, p, args, layout, stride_class, filter_class, gc);
    }
};

using ConvBwdDataScatterGpu = ConvBwdDataScatter<BwdDataGpuKnobs, true>;

}  // namespace
}  // namespace convbwd::gen

namespace convbwd::gen {
using ConvBwdDataGpuAny = ConvBwdDataGpu<GroupClass::Any>;
using ConvBwdDataGpuDw = ConvBwdDataGpu<GroupClass::Depthwise>;
using ConvBwdWeightGpuAny = ConvBwdWeightGpu<GroupClass::Any>;
using ConvBwdWeightGpuDw = ConvBwdWeightGpu<GroupClass::Depthwise>;
using ConvBwdWeightGpuNarrow = ConvBwdWeightGpu<GroupClass::Narrow>;
}  // namespace convbwd::gen
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdDataGpuAny, conv_bwd_data_gpu)
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdDataGpuDw, conv_bwd_data_dw_gpu)
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdWeightGpuAny, conv_bwd_weight_gpu)
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdWeightGpuDw, conv_bwd_weight_dw_gpu)
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdWeightGpuNarrow, conv_bwd_weight_narrow_gpu)
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdDataScatterGpu, conv_bwd_data_scatter_gpu)
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdDataStagedGpu, conv_bwd_data_staged_gpu)
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdDataMmaGpu, conv_bwd_data_mma_gpu)
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdWeightMmaGpu, conv_bwd_weight_mma_gpu)
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdWeightStagedGpu, conv_bwd_weight_staged_gpu)
// The autoscheduler baselines (schedules/spaces.h): the same generators, run by convbwd-tune with
// autoscheduler=Anderson2021 and estimates=...
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdDataGpuAny, conv_bwd_data_anderson2021_gpu)
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdWeightGpuAny, conv_bwd_weight_anderson2021_gpu)
