// Schedule parameters: one struct per (direction, device kind), each field listed once with
// its default and legal values. visit() reads and writes the key=value strings of the kernel
// list (schedules/variants.cmake) and of autotuning results.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "../generators/conv_problem.h"

namespace convbwd {

struct BwdDataHostParams {
    int vec = 8;     // {4, 8, 16}: f32 SIMD lanes (8 = AVX2)
    int tile_c = 2;  // [1..4] vectors of channels per register tile
    int tile_x = 4;  // [1..8] output columns (per stride phase) per register tile
    // (A) tile_c * tile_x * stride <= 14 accumulators (16 ymm registers, 2 for operands)
    template <class Self, class F>
    static void visit(Self &&s, F f) {
        f(s.vec, "vec");
        f(s.tile_c, "tile_c");
        f(s.tile_x, "tile_x");
    }
};

struct BwdWeightHostParams {
    int vec = 8;          // {4, 8, 16}: f32 SIMD lanes
    int tile_c = 2;       // [1..4] vectors of input channels per register tile
    int tile_k = 4;       // [1..8] output channels per register tile; (A) tile_c * tile_k <= 14
    int max_splits = 16;  // [1..256] partial sums over N*P rows (reduction split, workspace); the
                          // runtime passes min(this, rows) so results never depend on the machine
    template <class Self, class F>
    static void visit(Self &&s, F f) {
        f(s.vec, "vec");
        f(s.tile_c, "tile_c");
        f(s.tile_k, "tile_k");
        f(s.max_splits, "max_splits");
    }
};

// GPU schedules (CUDA, OpenCL, AMDGPU through OpenCL C). Block sizes are kept multiples of 64
// threads so AMD's 64-wide wavefronts fill (threads_c * threads_x % 64 == 0).
struct BwdDataGpuParams {
    int tile_c = 4;      // [1..8] channels per thread (registers)
    int tile_x = 4;      // [1..8] output columns (per stride phase) per thread (registers)
    int threads_c = 16;  // {8, 16, 32, 64} threads along the channel tiles
    int threads_x = 8;   // {2, 4, 8, 16} threads along the column tiles; (A) tile_c*tile_x <= 64
    int stage = 0;       // {0, 1, 2, 3}: 1 = dy and w are first copied with channels innermost
                         // (dy with its zero border materialised) and threads run along channels
                         // whatever the layout; 2 = the same, NCHW dy copied through a
                         // shared-memory tile (coalesced on both sides); 3 = dy copied in its own
                         // layout with its zero border (no range test per load), w read in place,
                         // threads as in place; 0 = read in place
    int first_layer = 0; // {0, 1}: 1 = a 3- or 4-channel dx (a network's first layer) gets all 3
                         // channels x tile_x columns per thread, threads along columns (one w load
                         // serves tile_x FMAs, one dy load 3); 0 = one channel per thread, 4
                         // channel threads. 1 lost 2.3x on the H100 (a warp's dy loads scatter)
    int unroll_taps = 0; // {0, 1}: 1 = the taps along x of a compile-time filter are unrolled
                         // inside the k loop, so neighbouring columns share their dy loads
    int narrow = 1;      // {0, 1}: 1 = rows of few column tiles (7x7, 14x14 layers) move the
                         // block's idle column threads onto channels (2 or 4 column threads; 8 too
                         // where a block has 16, as NCHW read in place)
    int flat = 0;        // {0, 1}: read by the runtime: 1 = a pointwise stride-1 problem (1x1
                         // filter, no padding) whose dy and dx planes are dense is presented to the
                         // kernel as one row of H*W columns per channel and image (no short rows)
    int vec = 1;         // {1, 4}: 4 = w's channels loaded as 16-byte vectors from its staged copy
                         // (needs stage=1 and tile_c % 4 == 0; tiles along channels then never
                         // shift, so the kernel requires C and C / groups multiples of 4, which
                         // the dispatcher checks); 1 = scalar loads
    int xvec = 1;        // {1, 4}: 4 = NCHW read in place (stage=0): a thread's columns loaded from
                         // dy and stored to dx as 16-byte vectors (tile_x a multiple of 4). The
                         // kernel then requires the row (flat: the plane) a multiple of 4 columns
                         // and 16-byte aligned tensors and strides, which the dispatcher checks
    // The channel vector the kernel loads w with, and so the multiple that C and C / groups must
    // be: the generator, the schedule and the dispatcher all ask here (vec needs stage).
    int channel_vector() const { return stage == 1 || stage == 2 ? std::max(1, vec) : 1; }
    // The column vector of an NCHW kernel read in place: the multiple that its rows (flat: planes)
    // and the strides of dy and dx must be, in elements (xvec needs stage=0).
    int column_vector() const { return stage ? 1 : std::max(1, xvec); }
    template <class Self, class F>
    static void visit(Self &&s, F f) {
        f(s.tile_c, "tile_c");
        f(s.tile_x, "tile_x");
        f(s.threads_c, "threads_c");
        f(s.threads_x, "threads_x");
        f(s.stage, "stage");
        f(s.first_layer, "first_layer");
        f(s.unroll_taps, "unroll_taps");
        f(s.narrow, "narrow");
        f(s.flat, "flat");
        f(s.vec, "vec");
        f(s.xvec, "xvec");
    }
};

struct BwdWeightGpuParams {
    int tile_c = 4;        // [1..8] input channels per thread (registers)
    int tile_k = 4;        // [1..8] output channels per thread (registers)
    int threads_c = 16;    // {8, 16, 32} threads along input-channel tiles
    int threads_k = 8;     // {4, 8, 16} threads along output-channel tiles
    int max_splits = 512;  // [1..4096] cap on the partial sums over N*P rows; the dispatcher picks
                           // split_blocks blocks' worth per launch and <= 256 MiB of workspace
    int split_blocks = 528;  // [132..8448] blocks per launch the split count aims at (read by the
                             // runtime; 528 = 4 per H100 multiprocessor)
    int fuse_taps = 0;     // {0, 1}: 1 = each thread loops over the filter taps (one launch);
                           // 0 = one launch per tap
    int stage = 0;         // {0, 1}: 1 = x and dy are first copied with channels innermost and x's
                           // padding materialised (no bounds test in the inner loop; NCHW reads
                           // become contiguous); 0 = read in place
    int unroll_q = 1;      // {1, 2, 4, 7}: unroll of the reduction loop along output columns
    int tile_s = 1;        // [1..8] filter taps along x per thread (registers; needs fuse_taps=1):
                           // a thread's x loads serve tile_s taps, and with unroll_q > 1 at
                           // stride 1 neighbouring columns share them. Problems with S < tile_s
                           // take a branch without it. With fuse_taps=1, a 3- or 4-channel
                           // problem (a first layer) gets all its channels and tile_s taps per
                           // thread, threads along k and the filter rows.
    int vec = 1;           // {1, 4}: 4 = with stage=1, each thread's x channels and dy channels of
                           // one column block loaded once into registers as 16-byte vectors
                           // (tile_c, tile_k multiples of 4, dy staged in either layout); the
                           // kernel requires C, K and their groups' shares multiples of 4, which
                           // the dispatcher checks; 1 = scalar loads inside the FMA loop
    // The channel vector of x and dy (the multiple C, K, C / groups and K / groups must be).
    int channel_vector() const { return stage == 1 ? std::max(1, vec) : 1; }
    template <class Self, class F>
    static void visit(Self &&s, F f) {
        f(s.tile_c, "tile_c");
        f(s.tile_k, "tile_k");
        f(s.threads_c, "threads_c");
        f(s.threads_k, "threads_k");
        f(s.max_splits, "max_splits");
        f(s.split_blocks, "split_blocks");
        f(s.fuse_taps, "fuse_taps");
        f(s.stage, "stage");
        f(s.unroll_q, "unroll_q");
        f(s.tile_s, "tile_s");
        f(s.vec, "vec");
    }
};

// Backward-weight on GPUs: the filter taps a thread holds (tile_s needs fuse_taps), and whether
// a problem takes the first-layer tile (fuse_taps kernels, 3 or 4 input channels: 3 channels x
// tile_k x taps per thread, threads along k tiles and filter rows). One definition for the
// schedule (Halide Exprs, schedules/gpu.cpp) and the dispatcher's split count (integers,
// runtime/src/registry.cpp).
inline int taps_per_thread(const BwdWeightGpuParams &p) { return p.fuse_taps ? std::max(1, p.tile_s) : 1; }
template <class T>
auto takes_first_layer_tile(const BwdWeightGpuParams &p, const T &Cg, const T &K, const T &S) {
    // (Not with channel vectors: their tiles are whole vectors.)
    return p.channel_vector() == 1 && Cg >= 3 && Cg <= 4 && K >= p.tile_k && S >= taps_per_thread(p);
}

// Space-separated "key=value" string of a params struct, in visit() order.
template <class Params>
std::string to_string(const Params &p) {
    std::string out;
    Params::visit(p, [&](const int &v, const char *name) {
        if (!out.empty()) out += ' ';
        out += std::string(name) + "=" + std::to_string(v);
    });
    return out;
}

// Sets one field by name; false if the struct has no such field or the value is not an int.
template <class Params>
bool set_param(Params &p, const std::string &key, const std::string &value) {
    bool found = false;
    Params::visit(p, [&](int &v, const char *name) {
        if (key != name) return;
        char *end = nullptr;
        long parsed = std::strtol(value.c_str(), &end, 10);
        if (end && *end == 0 && !value.empty()) {
            v = (int)parsed;
            found = true;
        }
    });
    return found;
}

}  // namespace convbwd
