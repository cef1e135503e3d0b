// Shared test machinery: problem sweeps, and "run one kernel on one problem against the
// reference" through the harness the driver and the tuner use (common/harness.h).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/device.h"
#include "common/harness.h"
#include "common/reference.h"
#include "common/shapes.h"
#include "common/tensor.h"
#include "common/verify.h"
#include "convbwd/convbwd.h"

namespace convbwd::test {

inline std::string describe(const ConvProblem &p, Direction d) {
    return std::string(to_string(d)) + " " + to_driver_line(p, d == Direction::BwdData ? 2 : 4) +
           " (P=" + std::to_string(p.P) + " Q=" + std::to_string(p.Q) + ")";
}

// The filter size kernel d's class fixes (k1, k3, k5), or dflt for "any".
inline int class_filter_or(const convbwd_kernel_desc &d, int dflt) {
    const int f = class_filter_size(filter_class_named(d.filter_class));
    return f ? f : dflt;
}

inline bool valid(const ConvProblem &p) {
    convbwd_problem c = to_c(p);
    const char *name = nullptr;
    // validate through the library itself (any kernel query validates first)
    return convbwd_select_kernel(&c, CONVBWD_BWD_DATA, CONVBWD_F32, CONVBWD_NCHW, nullptr, &name) !=
           CONVBWD_BAD_PARAM;
}

// The edge suite plus a sweep crossing stride {1,2,3}, dilation {1,2}, filter {1,2,3,5},
// padding {0,1,2, asymmetric}, groups {1, 2, depthwise} at odd sizes, and channel counts that
// reach the kernels' full register tiles (and their tails). Geometry only: dtype and layout are
// the kernel's.
inline std::vector<ConvProblem> conformance_problems() {
    std::vector<ConvProblem> out;
    for (const ShapeEntry &e : load_shapes(shapes_dir() + "/edge.txt")) out.push_back(e.problem);
    struct Ch {
        int C, K, G;
    };
    const Ch chans[] = {{3, 5, 1}, {17, 33, 1}, {6, 4, 2}, {4, 4, 4}, {32, 24, 1}, {34, 18, 2}, {20, 20, 20}};
    const int sizes[] = {7, 11, 13};
    int i = 0;
    for (int stride : {1, 2, 3})
        for (int dil : {1, 2})
            for (int f : {1, 2, 3, 5})
                for (int pad : {0, 1, 2, -1})  // -1: asymmetric (top/left 1, bottom/right 0 or 2)
                    for (int gsel = 0; gsel < 3; gsel++, i++) {
                        const Ch &ch = gsel == 0 ? chans[(i / 3) % 2 == 0 ? 0 : 1 + 3 * ((i / 6) % 2)]
                                     : gsel == 1 ? chans[(i / 3) % 2 == 0 ? 2 : 5]
                                                 : chans[(i / 3) % 2 == 0 ? 3 : 6];
                        ConvProblem p;
                        p.N = 1 + i % 2;
                        p.C = ch.C, p.K = ch.K, p.G = ch.G;
                        p.H = sizes[i % 3], p.W = sizes[(i + 1) % 3];
                        p.R = f, p.S = f == 5 ? 3 : f;  // non-square filters too
                        p.stride_h = stride, p.stride_w = stride;
                        p.dilation_h = dil, p.dilation_w = dil;
                        if (pad >= 0) {
                            p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = pad;
                        } else {
                            p.pad_top = 1, p.pad_bottom = 0, p.pad_left = 1, p.pad_right = 2;
                        }
                        p = with_derived_output(p);
                        if (valid(p)) out.push_back(p);
                    }
    // Full tiles of the specialised classes, with a channel tail and a column tail.
    for (int stride : {1, 2})
        for (int f : {1, 3}) {
            ConvProblem p;
            p.N = 2, p.C = 40, p.K = 36, p.H = 9, p.W = 13, p.R = p.S = f;
            p.stride_h = p.stride_w = stride;
            p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = f / 2;
            out.push_back(with_derived_output(p));
        }
    // Channels multiples of 8 (kernels reading x's and dy's channels in groups of 8, stage > 0),
    // not of the 32 x 64 fragment tiles, with columns past a 16-column k-block: 1x1 at strides 1
    // and 2 (a 2 x 3 x 5 plane, so the flat view's k-blocks cross rows), 3x3 padded at stride 2.
    for (int f : {1, 3}) {
        ConvProblem p;
        p.N = 3, p.C = 40, p.K = 56, p.H = f == 1 ? 3 : 9, p.W = f == 1 ? 5 : 19, p.R = p.S = f;
        p.stride_h = p.stride_w = f == 1 ? 1 : 2;
        p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = f / 2;
        out.push_back(with_derived_output(p));
    }
    {
        ConvProblem p;
        p.N = 2, p.C = 24, p.K = 72, p.H = 11, p.W = 21, p.R = p.S = 1, p.stride_h = p.stride_w = 2;
        out.push_back(with_derived_output(p));
    }
    // Grouped layers whose c / groups is a multiple of 8, 16 or 24 (the host's packed channel
    // tiles then lie inside one group and read it from the tile's first channel), with k tails.
    struct Grouped {
        int N, C, K, G, H, W, R, S, stride, dil, pad;
    };
    for (const Grouped &g : {Grouped{2, 16, 24, 2, 9, 11, 3, 3, 1, 1, 1}, Grouped{1, 48, 20, 2, 7, 9, 3, 3, 2, 1, 1},
                             Grouped{2, 32, 16, 2, 5, 7, 1, 1, 1, 1, 0}, Grouped{1, 64, 36, 4, 9, 8, 5, 3, 1, 2, 2},
                             // c / groups 64: a staged backward-data block's channels (block_k) in one group
                             Grouped{1, 128, 80, 2, 7, 9, 3, 3, 1, 1, 1},
                             // c / groups = k / groups 8 and 4: vectors of whole groups (group_lanes),
                             // two and more vectors, rows past and under a 14-column tile, both strides
                             Grouped{2, 32, 32, 4, 9, 17, 3, 3, 1, 1, 1}, Grouped{1, 48, 48, 6, 11, 13, 3, 3, 2, 1, 1},
                             Grouped{2, 32, 32, 8, 7, 19, 3, 3, 1, 1, 1}, Grouped{1, 32, 32, 8, 10, 9, 3, 3, 2, 1, 1},
                             Grouped{1, 64, 64, 8, 6, 30, 3, 3, 1, 1, 1}, Grouped{1, 16, 16, 4, 5, 9, 3, 3, 1, 1, 1},
                             Grouped{2, 16, 16, 2, 9, 15, 3, 3, 2, 1, 1}}) {
        ConvProblem p;
        p.N = g.N, p.C = g.C, p.K = g.K, p.G = g.G, p.H = g.H, p.W = g.W, p.R = g.R, p.S = g.S;
        p.stride_h = p.stride_w = g.stride;
        p.dilation_h = p.dilation_w = g.dil;
        p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = g.pad;
        out.push_back(with_derived_output(p));
    }
    // Depthwise 3x3 and 5x5 (MobileNet's, EfficientNet's) at strides 1 and 2, padding R / 2: 37
    // columns and 13 rows, past a warp's lanes along a plane's columns and rows (col_lanes 8-32:
    // tails in both), and 21 k: a tail past a block's k (2 or 4 with col_lanes).
    for (int f : {3, 5})
        for (int stride : {1, 2}) {
            ConvProblem p;
            p.N = 2, p.C = p.K = p.G = 21, p.H = 13, p.W = 37, p.R = p.S = f;
            p.stride_h = p.stride_w = stride;
            p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = f / 2;
            out.push_back(with_derived_output(p));
        }
    // Depthwise 3x3 on small planes, 35 channels (two 16-lane vectors and a tail): the host's NCHW
    // channel-vector backward-weight copies rows in transposed blocks of 8 columns (the 37-column planes
    // above, the last block shifted inwards), of 4 (7 columns; stride 2's 4-column dy) or of 1 (3 and
    // stride 2's 2), each of x and dy.
    for (int hw : {7, 3})
        for (int stride : {1, 2}) {
            ConvProblem p;
            p.N = 2, p.C = p.K = p.G = 35, p.H = hw == 7 ? 9 : 3, p.W = hw, p.R = p.S = 3;
            p.stride_h = p.stride_w = stride;
            p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 1;
            out.push_back(with_derived_output(p));
        }
    // A 32x32 plane (a multiple of 4 KiB: the host's NCHW backward-weight stages x in transposed
    // tiles there), with a channel tail, dilation and stride 1 and 2.
    for (int stride : {1, 2}) {
        ConvProblem p;
        p.N = 1, p.C = 12, p.K = 10, p.H = p.W = 32, p.R = p.S = 3;
        p.stride_h = p.stride_w = stride;
        p.dilation_h = p.dilation_w = 3 - stride;
        p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 1;
        out.push_back(with_derived_output(p));
    }
    // K past one chunk of 64 with a tail (the staged backward-data kernels sum k in chunks of
    // block_k), a 5x3 dilated filter, asymmetric padding, channels past one block tile.
    {
        ConvProblem p;
        p.N = 2, p.C = 40, p.K = 80, p.H = 9, p.W = 11, p.R = 5, p.S = 3;
        p.dilation_h = p.dilation_w = 2;
        p.pad_top = 3, p.pad_bottom = 1, p.pad_left = 2, p.pad_right = 2;
        out.push_back(with_derived_output(p));
    }
    // Taps that read only padding for whole tiles (the staged kernels skip them per block or chunk):
    // DeepLab's ASPP in small (rate 6 on a 12x12 plane: the outer taps reach 6 of 12 rows), a
    // plane of 130 columns with a column dilation of 64 (a 64-pixel tile inside one row whose
    // outer column taps read padding only), and the same at stride 2.
    struct Sparse {
        int N, C, K, H, W, R, S, stride, dil_h, dil_w, pad_h, pad_w;
    };
    for (const Sparse &s : {Sparse{2, 20, 72, 12, 12, 3, 3, 1, 6, 6, 6, 6}, Sparse{1, 24, 40, 3, 130, 1, 3, 1, 1, 64, 0, 64},
                            Sparse{2, 24, 40, 9, 140, 3, 3, 2, 4, 32, 4, 33}}) {
        ConvProblem p;
        p.N = s.N, p.C = s.C, p.K = s.K, p.H = s.H, p.W = s.W, p.R = s.R, p.S = s.S;
        p.stride_h = p.stride_w = s.stride;
        p.dilation_h = s.dil_h, p.dilation_w = s.dil_w;
        p.pad_top = p.pad_bottom = s.pad_h, p.pad_left = p.pad_right = s.pad_w;
        out.push_back(with_derived_output(p));
    }
    // 3x3 and 5x5 stride 1 with c and k past half a staged block (the Winograd kernels, winograd = m:
    // dx's m x m tiles, all images' in one sequence): planes whose sides are no multiple of 2 or 4 (a
    // 1-pixel plane too), padding 0, 2 (4) and asymmetric, k past two chunks with a tail.
    struct Wino {
        int N, C, K, H, W, pad_top, pad_bottom, pad_left, pad_right, R;
    };
    for (const Wino &w : {Wino{3, 33, 70, 10, 7, 0, 0, 0, 0, 3}, Wino{1, 48, 140, 5, 17, 2, 0, 0, 2, 3},
                          Wino{2, 16, 32, 6, 6, 2, 2, 2, 2, 3}, Wino{2, 40, 36, 1, 1, 1, 1, 1, 1, 3},
                          Wino{2, 33, 70, 11, 9, 2, 2, 2, 2, 5}, Wino{1, 48, 140, 7, 13, 0, 4, 3, 1, 5},
                          Wino{2, 40, 36, 2, 3, 2, 2, 2, 2, 5}}) {
        ConvProblem p;
        p.N = w.N, p.C = w.C, p.K = w.K, p.H = w.H, p.W = w.W, p.R = p.S = w.R;
        p.pad_top = w.pad_top, p.pad_bottom = w.pad_bottom, p.pad_left = w.pad_left, p.pad_right = w.pad_right;
        p = with_derived_output(p);
        if (valid(p)) out.push_back(p);
    }
    // A pointwise plane of 60 columns in rows of 10: read as one row it is whole vectors of 4
    // (kernels loading columns as vectors, xvec), its rows are not.
    {
        ConvProblem p;
        p.N = 2, p.C = 40, p.K = 36, p.H = 6, p.W = 10, p.R = p.S = 1;
        out.push_back(with_derived_output(p));
    }
    // A first layer: 3 or 4 input channels, 7-wide filters at stride 2 (the GPU stem tile:
    // all channels x 7 taps per thread), with a k tail and a non-square filter.
    for (int C : {3, 4}) {
        ConvProblem p;
        p.N = 2, p.C = C, p.K = 10, p.H = 19, p.W = 23, p.R = C == 3 ? 7 : 5, p.S = 7;
        p.stride_h = p.stride_w = 2;
        p.pad_top = p.pad_bottom = p.R / 2, p.pad_left = p.pad_right = 3;
        out.push_back(with_derived_output(p));
    }
    // First layers whose k is whole vectors of k (the host's narrow kernels along k, k_vectors: their
    // unguarded branch takes c = 3 with k a multiple of the k tile and, for any filter, S = tile_s), in
    // 3x3 at strides 1 and 2, 7x7 and 4x4 at stride 2; a k of 48 (a 32-k tile's tail); one input
    // channel; 3 channels a group of 2 groups with 32 k each (a k tile inside one group).
    struct First {
        int N, C, K, G, H, W, R, stride, pad;
    };
    for (const First &f : {First{2, 3, 32, 1, 11, 13, 3, 1, 1}, First{1, 3, 48, 1, 12, 9, 3, 2, 1},
                           First{2, 3, 64, 1, 19, 23, 7, 2, 3}, First{1, 3, 32, 1, 16, 16, 4, 2, 1},
                           First{2, 1, 32, 1, 9, 10, 3, 1, 1}, First{1, 6, 64, 2, 7, 10, 3, 1, 1}}) {
        ConvProblem p;
        p.N = f.N, p.C = f.C, p.K = f.K, p.G = f.G, p.H = f.H, p.W = f.W, p.R = p.S = f.R;
        p.stride_h = p.stride_w = f.stride;
        p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = f.pad;
        out.push_back(with_derived_output(p));
    }
    return out;
}

// Whether tests can run kernels of device d here; *why says why not.
inline bool device_usable(Device d, std::string *why) {
    return d == Device::Host || gpu_device(d, why) != nullptr;
}

// Runs `kernel` (or the dispatcher when empty) on p with fresh random inputs and compares with
// the reference, through the one harness (common/harness.h): output poisoned with NaN first,
// beta = 0 must not read it; on a GPU device the tensors and the workspace live in device
// memory and the call runs on its queue.
inline RunResult run_against_reference(ConvProblem p, Direction dir, const std::string &kernel, std::mt19937 &rng,
                                       float alpha = 1.0f, float beta = 0.0f, Device device = Device::Host) {
    RunSpec s;
    s.p = p, s.dir = dir, s.kernel = kernel, s.alpha = alpha, s.beta = beta, s.device = device;
    return run_case(s, rng);
}

}  // namespace convbwd::test
