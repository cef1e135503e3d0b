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

class ConvBwdDataGpu : public ConvGeneratorBase<ConvBwdDataGpu> {
public:
    static constexpr bool kHasWorkspace = false;
    GeneratorParam<int> tile_c{"tile_c", BwdDataGpuParams{}.tile_c, 1, 16};
    GeneratorParam<int> tile_x{"tile_x", BwdDataGpuParams{}.tile_x, 1, 16};
    GeneratorParam<int> threads_c{"threads_c", BwdDataGpuParams{}.threads_c, 1, 1024};
    GeneratorParam<int> threads_x{"threads_x", BwdDataGpuParams{}.threads_x, 1, 1024};
    GeneratorParam<int> stage{"stage", BwdDataGpuParams{}.stage, 0, 3};
    GeneratorParam<int> first_layer{"first_layer", BwdDataGpuParams{}.first_layer, 0, 1};
    GeneratorParam<int> unroll_taps{"unroll_taps", BwdDataGpuParams{}.unroll_taps, 0, 1};
    GeneratorParam<int> narrow{"narrow", BwdDataGpuParams{}.narrow, 0, 1};
    GeneratorParam<int> flat{"flat", BwdDataGpuParams{}.flat, 0, 1};  // read by the runtime
    GeneratorParam<int> vec{"vec", BwdDataGpuParams{}.vec, 1, 4};
    GeneratorParam<int> xvec{"xvec", BwdDataGpuParams{}.xvec, 1, 4};

    void generate() {
        ConvArgs args = bwd_data_args();
        BwdDataGraph g = build_bwd_data(args);
        BwdDataGpuParams p{tile_c, tile_x, threads_c, threads_x, stage, first_layer, unroll_taps, narrow, flat, vec, xvec};
        // Parameters that would otherwise be ignored, or give a kernel no problem can use.
        _halide_user_assert(p.vec == 1 || p.vec == 4) << "vec must be 1 or 4";
        _halide_user_assert(p.vec == 1 || p.stage == 1 || p.stage == 2) << "vec=4 needs stage 1 or 2 (w's staged copy)";
        _halide_user_assert(p.xvec == 1 || p.xvec == 2 || p.xvec == 4) << "xvec must be 1, 2 or 4";
        _halide_user_assert(p.xvec == 1 || p.stage == 0) << "xvec needs stage=0 (read in place)";
        _halide_user_assert(p.stage != 3 || layout == Layout::NCHW) << "stage=3 (a padded copy in the input's layout) is for nchw";
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
            _halide_user_assert(layout == Layout::NCHW && stride_class == StrideClass::S1) << "xvec needs layout nchw, stride_class s1";
            _halide_user_assert(p.tile_x % xv == 0) << "xvec needs tile_x a multiple of it";
            auto constrain = [&](auto &buf) {
                buf.set_host_alignment(xv * storage_type(dtype).bytes());
                buf.dim(0).set_extent((buf.dim(0).extent() / xv) * xv);
                for (int d = 1; d < 4; d++) buf.dim(d).set_stride((buf.dim(d).stride() / xv) * xv);
            };
            constrain(*out);
            constrain(*a);
            constrain(*prev);
        }
        schedule_bwd_data_gpu(g, p, args, layout, stride_class, filter_class);
    }
};

class ConvBwdWeightGpu : public ConvGeneratorBase<ConvBwdWeightGpu> {
public:
    static constexpr bool kHasWorkspace = true;
    GeneratorParam<int> tile_c{"tile_c", BwdWeightGpuParams{}.tile_c, 1, 16};
    GeneratorParam<int> tile_k{"tile_k", BwdWeightGpuParams{}.tile_k, 1, 16};
    GeneratorParam<int> threads_c{"threads_c", BwdWeightGpuParams{}.threads_c, 1, 1024};
    GeneratorParam<int> threads_k{"threads_k", BwdWeightGpuParams{}.threads_k, 1, 1024};
    GeneratorParam<int> max_splits{"max_splits", BwdWeightGpuParams{}.max_splits, 1, 65536};  // cap, read by the runtime
    GeneratorParam<int> split_blocks{"split_blocks", BwdWeightGpuParams{}.split_blocks, 1, 1 << 20};  // read by the runtime
    GeneratorParam<int> fuse_taps{"fuse_taps", BwdWeightGpuParams{}.fuse_taps, 0, 1};
    GeneratorParam<int> stage{"stage", BwdWeightGpuParams{}.stage, 0, 1};
    GeneratorParam<int> unroll_q{"unroll_q", BwdWeightGpuParams{}.unroll_q, 1, 8};
    GeneratorParam<int> tile_s{"tile_s", BwdWeightGpuParams{}.tile_s, 1, 8};
    GeneratorParam<int> vec{"vec", BwdWeightGpuParams{}.vec, 1, 4};

    void generate() {
        ConvArgs args = bwd_weight_args();
        BwdWeightGraph g = build_bwd_weight(args);
        BwdWeightGpuParams p{tile_c, tile_k, threads_c, threads_k, max_splits, split_blocks, fuse_taps, stage, unroll_q, tile_s, vec};
        _halide_user_assert(p.vec == 1 || p.vec == 4) << "vec must be 1 or 4";
        if (p.vec > 1) {
            _halide_user_assert(p.stage == 1) << "vec=4 needs stage=1 (x and dy staged channels innermost)";
            _halide_user_assert(p.tile_c % p.vec == 0 && p.tile_k % p.vec == 0) << "vec=4 needs tile_c and tile_k multiples of 4";
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
            add_requirement(args.groups == 1, "vec kernels take groups == 1");
        }
        schedule_bwd_weight_gpu(g, p, args, layout, stride_class, filter_class);
    }
};

using ConvBwdDataScatterGpu = ConvBwdDataScatter<BwdDataGpuParams, true>;

}  // namespace
}  // namespace convbwd::gen

HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdDataGpu, conv_bwd_data_gpu)
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdWeightGpu, conv_bwd_weight_gpu)
HALIDE_REGISTER_GENERATOR(convbwd::gen::ConvBwdDataScatterGpu, conv_bwd_data_scatter_gpu)
