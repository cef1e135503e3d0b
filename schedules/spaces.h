// Schedule spaces: each schedule family (a Halide generator: direction x device kind x algorithm
// variant) declares its knobs once, in one X-macro table: name, default, kind, tag code, what it
// does, and its domain (the legal values). Everything else is derived from that table:
//   - the params struct the schedule reads (one int field per knob, initialised to its default);
//   - the generator's GeneratorParams (compile-time knobs only: launch-time ones never reach it);
//   - parsing and printing of "key=value" strings (manifest records, tuning databases, results);
//   - the kernel's tag (kernel_tag(): the name's last field, CUTLASS-style);
//   - --list-spaces and --list-kernels --json (the knobs with their domains).
// One valid() per family holds every constraint between knobs and with the problem class and
// device; the manifest tool refuses invalid records, the generator asserts, autotuning skips them.
//
// Adding a knob: one X(...) line in its family's table, then its use in the schedule.
//
// Kinds: compile = changes the generated code (part of the kernel's identity and tag);
//        launch  = read by the runtime when it calls the kernel (grid shape, reduction splits,
//                  views): one compiled kernel serves every value, and a tuning-database record
//                  may set it per problem.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../generators/conv_problem.h"
#include "../generators/winograd.h"

namespace convbwd {

enum class KnobKind { Compile, Launch };
// A kernel's role in the manifest: default (dispatched in order), candidate (run by name or by a
// tuning-database record), baseline (a comparison, run by name only).
enum class Role { Default, Candidate, Baseline };
inline const char *to_string(Role r) { return r == Role::Default ? "default" : r == Role::Candidate ? "candidate" : "baseline"; }

struct Knob {
    const char *name;
    int def;
    KnobKind kind;
    const char *tag;  // tag code: "" = never in the tag; a code ending in '!' is always printed
    const char *doc;
    std::vector<int> domain;  // legal values, ascending
};

#define CONVBWD_KNOB_STRUCT_FIELD(name, def, kind, tag, doc, ...) int name = def;
#define CONVBWD_KNOB_ROW(name, def, kind, tag, doc, ...) {#name, def, KnobKind::kind, tag, doc, {__VA_ARGS__}},
#define CONVBWD_KNOB_VISIT(name, def, kind, tag, doc, ...) f(s.name, #name);

// A params struct from a knob table: fields, the table (knobs()) and visit(f(field, name)).
#define CONVBWD_DEFINE_PARAMS(Struct, TABLE)                                   \
    struct Struct {                                                            \
        TABLE(CONVBWD_KNOB_STRUCT_FIELD)                                       \
        static const std::vector<Knob> &knobs() {                              \
            static const std::vector<Knob> k = {TABLE(CONVBWD_KNOB_ROW)};      \
            return k;                                                          \
        }                                                                      \
        template <class Self, class F>                                         \
        static void visit(Self &&s, F f) {                                     \
            TABLE(CONVBWD_KNOB_VISIT)                                          \
        }                                                                      \
        int channel_vector() const;                                            \
        int column_vector() const;                                             \
        int group_channel_tile() const;                                        \
        int group_channels_min() const;                                        \
        int group_k_tile() const;                                              \
        int group_exact() const;                                               \
        int channel_lanes() const;                                             \
        int packed_tile() const;                                               \
        int cols_tile() const;                                                 \
        bool channels_dense(Layout layout) const;                              \
        int column_threads(Layout layout) const;                               \
        bool along_channels(Layout layout) const;                              \
    };

// ---- Backward-data, host CPU (generators conv_bwd_data_host, conv_bwd_data_scatter_host) ----
#define CONVBWD_BWD_DATA_HOST_KNOBS(X)                                                                       \
    X(tile_c, 2, Compile, "c!", "vectors of channels per register tile (cols = 1: channels)", 1, 2, 3, 4, 6, 8) \
    X(tile_x, 4, Compile, "x!",                                                                          \
      "output columns (per stride phase) per register tile (NCHW depthwise stride 1 and cols = 1: "      \
      "column vectors)",                                                                                 \
      1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14)                                                                \
    X(vec, 8, Compile, "v", "f32 SIMD lanes (8 = AVX2, 16 = AVX-512)", 4, 8, 16)                         \
    X(pack, 0, Compile, "p",                                                                             \
      "1: tasks of (channel tile, row block), the filter packed per channel tile (consecutive k "        \
      "contiguous: it stays in cache across the task's rows) and dy's rows staged with their zero "       \
      "border, k innermost; 0: tasks of output rows reading w and dy in place",                          \
      0, 1)                                                                                              \
    X(task_rows, 8, Compile, "r", "pack = 1: output rows per parallel task", 1, 2, 4, 8, 16, 32)           \
    X(cols, 0, Compile, "q",                                                                             \
      "1 (NCHW, stride class s1): dx = w^T dy as a GEMM along dx's rows, register tiles of tile_c "       \
      "channels x tile_x column vectors, w broadcast, dx stored as dense vectors (no transposing copy "   \
      "of dy or dx); dy read in place (class k1) or staged once with its zero border; 0: vectors along "  \
      "the channels",                                                                                    \
      0, 1)                                                                                              \
    X(flat, 0, Launch, "", "cols = 1, class k1: a problem with dense planes presented as one row of H*W columns", 0, 1) \
    X(group_lanes, 0, Compile, "l",                                                                      \
      "pack = 1, groups of exactly this many channels (c / groups = k / groups = group_lanes < vec): a "  \
      "vector's lanes hold vec / group_lanes whole groups, each lane loading its group's dy value (one "  \
      "dense load of the groups' values and a shuffle: the pairs are adjacent in the staged dy); 0: a "   \
      "tile lies inside one group (c / groups a multiple of it)",                                        \
      0, 2, 4, 8)
CONVBWD_DEFINE_PARAMS(BwdDataHostParams, CONVBWD_BWD_DATA_HOST_KNOBS)

// ---- Backward-weight, host CPU (conv_bwd_weight_host) ----
#define CONVBWD_BWD_WEIGHT_HOST_KNOBS(X)                                                                 \
    X(tile_c, 2, Compile, "c!", "vectors of input channels per register tile", 1, 2, 3, 4)              \
    X(tile_k, 4, Compile, "k!", "output channels per register tile", 1, 2, 3, 4, 5, 6, 7, 8)            \
    X(vec, 8, Compile, "v", "f32 SIMD lanes", 4, 8, 16)                                                  \
    X(k_tasks, 4, Compile, "kt",                                                                         \
      "k tiles per parallel task within a split, at least (at most 4 tasks a split; x's rows are staged once per task)", 1, 2, 4, 8, 16, 64) \
    X(c_outer, 0, Compile, "o",                                                                           \
      "1: the c tiles outside the row blocks, x staged per c tile over the split's rows, so the part of "  \
      "the filter gradient a row block updates stays in L2 (layers whose C*K*R*S outgrows L2 against "   \
      "few pixels: DeepLab's ASPP); 0: x staged per row block",                                          \
      0, 1)                                                                                              \
    X(group_tile, 0, Compile, "g",                                                                        \
      "1: a register tile's k lie in one group (the dispatcher's condition: k / groups a multiple of "   \
      "tile_k), so x is read once per tile, not once per k (grouped layers); 0: any k / groups",         \
      0, 1)                                                                                              \
    X(direct, 0, Compile, "d",                                                                           \
      "1: one split, each register tile summing every pixel and writing dw itself (no workspace, no "   \
      "second pass: layers of few pixels against many filter elements, whose workspace copy and sum "  \
      "outweighed the FMAs); the dispatcher gives it problems of at most kWgradDirectTerms terms "     \
      "(N*P*Q: one running f32 sum, accuracy); 0: splits summed through the workspace",                \
      0, 1)                                                                                              \
    X(k_lanes, 1, Compile, "l",                                                                          \
      "k per vector: vec / k_lanes channel lanes x k_lanes k (adjacent k of the register tile), so 8 "   \
      "channels a group fill a 16-lane vector (x's channels broadcast to each k, dy's k values one "     \
      "load and a shuffle); 1: vectors of channels",                                                      \
      1, 2, 4)                                                                                           \
    X(skip_pad, 0, Compile, "p",                                                                          \
      "1: each tap sums only the output pixels whose x lies inside the image (the loop over a row's "   \
      "columns trimmed per tap, a row whose x is padding skipped: dilated layers whose taps reach into " \
      "the padding, DeepLab's ASPP); 0: every pixel, x's zero border multiplied",                         \
      0, 1)                                                                                              \
    X(full_taps, 0, Compile, "f",                                                                         \
      "k_lanes > 1 with a class filter: 1 = every tap of the filter in the register tile (each shuffled "  \
      "vector of dy's k serves R x S FMAs); 0 = a filter row's taps",                                     \
      0, 1)                                                                                              \
    X(max_splits, 16, Launch, "",                                                                       \
      "partial sums over the N*P rows (the reduction split; min(this, rows), so results never depend "  \
      "on the machine)",                                                                                \
      1, 2, 4, 8, 16, 32, 64, 128, 256)                                                                 \
    X(split_pixels, 512, Launch, "",                                                                    \
      "reduction pixels (N*P*Q) per split at least this many: each split "                             \
      "writes and reads back a whole filter-sized partial, which must stay small against its "         \
      "arithmetic (0: max_splits alone)",                                                               \
      0, 128, 256, 512, 1024, 2048, 4096)
CONVBWD_DEFINE_PARAMS(BwdWeightHostParams, CONVBWD_BWD_WEIGHT_HOST_KNOBS)

// ---- Backward-weight, host CPU, depthwise (conv_bwd_weight_dw_host): vectors along k (= c) ----
#define CONVBWD_BWD_WEIGHT_DW_HOST_KNOBS(X)                                                              \
    X(tile_c, 2, Compile, "c!", "NHWC (NCHW with channel_vectors = 1): vectors of channels per register tile (x the filter row's taps)", 1, 2, 3, 4) \
    X(tile_k, 4, Compile, "k", "NCHW: channels per register tile (x the filter row's taps; vectors along the columns)", 1, 2, 3, 4) \
    X(vec, 8, Compile, "v", "f32 SIMD lanes", 4, 8, 16)                                                  \
    X(full_taps, 0, Compile, "f",                                                                         \
      "class filters: 1 = a register tile holds every tap of the filter (NHWC: tile_c vectors x R x S, "  \
      "tasks of (k tile, split), one parallel loop; NCHW: tile_k channels x R x S column vectors, one "  \
      "pass over the planes) over the task's whole planes; 0 = a filter row's taps per tile",            \
      0, 1)                                                                                              \
    X(x_in_place, 0, Compile, "i",                                                                        \
      "full_taps = 1 along the channels: 1 = x read in place (NCHW: from the task's transposed copy), its " \
      "zero border by partitioned loops; 0 = the task's channels of x staged with the border",           \
      0, 1)                                                                                              \
    X(tile_q, 1, Compile, "q",                                                                           \
      "full_taps = 1: output columns (NHWC) or rows (NCHW) per step, unrolled, so that an x vector "     \
      "loaded serves up to S (R) taps",                                                                  \
      1, 2, 3, 4, 6, 8)                                                                                  \
    X(dy_in_place, 0, Compile, "d",                                                                      \
      "NCHW, full_taps = 1: 1 = dy read in place (a row's last vector masked; rows not rounded up); 0 = " \
      "dy copied per k tile with zeros past Q (rows rounded up to whole vectors)",                       \
      0, 1)                                                                                              \
    X(channel_vectors, 0, Compile, "t",                                                                  \
      "NCHW, full_taps = 1: 1 = vectors along the channels (the NHWC tile: tile_c vectors x R x S), a "   \
      "task's planes of x and dy copied channels innermost (blocks of 8 or 4 columns transposed in "     \
      "registers), x's border then as x_in_place says; 0 = vectors along the columns (tile_k channels)", \
      0, 1)                                                                                              \
    X(direct, 0, Compile, "D",                                                                            \
      "full_taps = 1 along the channels: 1 = one split of every image, dw written from the register "    \
      "tile in its task (no workspace, no pass summing splits); 0 = splits of images in a workspace, "  \
      "summed after",                                                                                    \
      0, 1)                                                                                              \
    X(max_splits, 16, Launch, "", "partial sums over the images (a divisor of N, at most this)", 1, 2, 4, 8, 16, 32, 64, 128, 256)
CONVBWD_DEFINE_PARAMS(BwdWeightDwHostParams, CONVBWD_BWD_WEIGHT_DW_HOST_KNOBS)

// ---- Backward-weight, host CPU, narrow (conv_bwd_weight_narrow_host): c / groups < 8, so the
// vectors run along dy's and x's columns; each split is whole images (x and dy staged per split,
// columns innermost) and its tasks are (filter row, k tiles).
#define CONVBWD_BWD_WEIGHT_NARROW_HOST_KNOBS(X)                                                          \
    X(tile_k, 4, Compile, "k!", "output channels per register tile (k_vectors = 1: vectors of them)", 1, 2, 3, 4, 6, 8) \
    X(tile_cg, 3, Compile, "c!", "input channels (of a group) per register tile", 1, 2, 3, 4)            \
    X(vec, 8, Compile, "v", "f32 SIMD lanes along the columns (k_vectors = 1: along k)", 4, 8, 16)        \
    X(k_vectors, 0, Compile, "K",                                                                         \
      "1: vectors along k (NHWC: dy's innermost dim, read in place; NCHW: a block's dy copied k innermost); " \
      "a register tile of tile_k vectors "                                                                 \
      "x tile_cg channels x a filter row's taps (x broadcast from a copy with its zero border, channels " \
      "innermost, so a tile's taps are adjacent) sums a row at a time; tasks of blocks of output rows "   \
      "(their dy stays in L2 for every filter row and k tile); a grouped problem's k / groups a multiple " \
      "of the tile. 0: vectors along the columns",                                                       \
      0, 1)                                                                                              \
    X(tile_s, 3, Compile, "s",                                                                           \
      "k_vectors = 1, filter class any: a filter row's taps per register tile (a row of S = tile_s taps "  \
      "runs unguarded, as with a class filter's own size; other S in guarded tiles)",                    \
      1, 2, 3, 4, 5, 6, 7, 8)                                                                            \
    X(full_taps, 0, Compile, "f",                                                                         \
      "k_vectors = 1, a class filter: every filter row's taps in the register tile too (tile_k x tile_cg " \
      "x R x S accumulators), so each line of dy loaded from memory serves all the filter's FMAs at once", \
      0, 1)                                                                                              \
    X(max_splits, 16, Launch, "", "partial sums over the images (a divisor of N, at most this)", 1, 2, 4, 8, 16, 32, 64)
CONVBWD_DEFINE_PARAMS(BwdWeightNarrowHostParams, CONVBWD_BWD_WEIGHT_NARROW_HOST_KNOBS)

// ---- Backward-weight, host CPU, grouped along the columns (conv_bwd_weight_grouped_host): NCHW
// grouped layers, vectors along a plane's columns (rows rounded up to whole vectors), a register tile
// of tile_k channels of one group x every tap of a class filter, per input channel of the group;
// tasks of whole groups, x's planes of a group copied once per task. Splits of whole images.
#define CONVBWD_BWD_WEIGHT_GROUPED_HOST_KNOBS(X)                                                         \
    X(tile_k, 2, Compile, "k!", "output channels of one group per register tile (x every tap of the filter)", 1, 2, 3, 4) \
    X(vec, 16, Compile, "v", "f32 SIMD lanes along the columns", 8, 16)                                    \
    X(tile_q, 1, Compile, "q", "output rows a step (unrolled: an x row loaded serves up to R taps)", 1, 2, 4) \
    X(max_splits, 16, Launch, "", "partial sums over the images (a divisor of N, at most this)", 1, 2, 4, 8, 16, 32, 64)
CONVBWD_DEFINE_PARAMS(BwdWeightGroupedHostParams, CONVBWD_BWD_WEIGHT_GROUPED_HOST_KNOBS)

// ---- Backward-data, GPU (CUDA, OpenCL, AMDGPU; conv_bwd_data_gpu, conv_bwd_data_scatter_gpu) ----
// Blocks are threads_c x threads_x threads, multiples of 64 (two NVIDIA warps, one AMD wave).
#define CONVBWD_BWD_DATA_GPU_KNOBS(X)                                                                        \
    X(tile_c, 4, Compile, "c!", "channels per thread (registers)", 1, 2, 3, 4, 8, 16)                        \
    X(tile_x, 4, Compile, "x!", "output columns (per stride phase) per thread (registers)", 1, 2, 3, 4, 5, 6, 7, 8) \
    X(threads_c, 16, Compile, "tc", "threads along the channel tiles", 4, 8, 16, 32, 64)                     \
    X(threads_x, 8, Compile, "tx", "threads along the column tiles", 2, 4, 8, 16, 32)                        \
    X(stage, 0, Compile, "s",                                                                                \
      "0 = read in place; 1 = dy and w first copied channels-innermost (dy with its zero border) and "      \
      "threads along channels whatever the layout; 2 = the same, NCHW dy through a shared-memory tile; "    \
      "3 = dy copied in its own layout with its zero border (no range test per load), w in place",          \
      0, 1, 2, 3)                                                                                            \
    X(first_layer, 0, Compile, "l",                                                                          \
      "1 = a 3- or 4-channel dx (a first layer) gets 3 channels x tile_x columns per thread", 0, 1)         \
    X(unroll_taps, 0, Compile, "u",                                                                          \
      "1 = the taps along x of a compile-time filter unrolled inside the k loop (neighbouring columns "     \
      "share their dy loads)",                                                                               \
      0, 1)                                                                                                  \
    X(tap_chunk, 0, Compile, "j",                                                                        \
      "filter any: the taps along x in chunks of this many, unrolled inside the k loop (where the "        \
      "dilation is 1, a tile's columns and a chunk's taps share their dy loads); the last chunk guarded",   \
      0, 2, 4)                                                                                               \
    X(narrow, 1, Compile, "n", "1 = rows of few column tiles move idle column threads onto channels", 0, 1) \
    X(fuse_rows, 0, Compile, "y",                                                                            \
      "1 = the column-tile threads run along a row's tiles and on into the next rows (one fused index), "  \
      "so planes whose rows are a few tiles wide (35 or 17 columns) leave no column thread idle",           \
      0, 1)                                                                                                  \
    X(vec, 1, Compile, "v",                                                                                  \
      "4 = w's channels loaded as 16-byte vectors from its staged copy (C, C/groups multiples of 4)", 1, 4) \
    X(xvec, 1, Compile, "xv",                                                                                \
      "4 = NCHW read in place: a thread's columns loaded and stored as 16-byte vectors (rows, strides "     \
      "and bases multiples of 4 elements)",                                                                  \
      1, 4)                                                                                                  \
    X(flat, 0, Launch, "",                                                                                   \
      "1 = a pointwise stride-1 problem with dense planes is presented as one row of H*W columns", 0, 1)
CONVBWD_DEFINE_PARAMS(BwdDataGpuParams, CONVBWD_BWD_DATA_GPU_KNOBS)

// ---- Backward-data, GPU, staged (conv_bwd_data_staged_gpu): f32 backward-data at stride 1 or 2 (by
// stride phases) as an implicit GEMM over taps x k through shared memory (define_bwd_data_staged). A
// block of threads_c x threads_x threads owns tile_c * threads_c channels x tile_x * threads_x pixels
// of a plane (or phase) whose rows are flattened (fold_images: the images' planes too); per filter
// tap and chunk of block_k k it copies dy's shifted pixels and w's
// channels into shared memory, each thread sums its tile of the chunk in registers and adds it into
// the block's accumulators, which stay in shared memory across the chunks.
#define CONVBWD_BWD_DATA_STAGED_GPU_KNOBS(X)                                                                 \
    X(tile_c, 4, Compile, "c!", "channels per thread (registers): every threads_c-th of the block's", 1, 2, 4, 8) \
    X(tile_x, 4, Compile, "x!", "pixels per thread (registers): every threads_x-th of the block's", 1, 2, 4, 8)  \
    X(threads_c, 8, Compile, "tc", "threads along the block's channels", 4, 8, 16, 32)                       \
    X(threads_x, 16, Compile, "tx", "threads along the block's pixels", 4, 8, 16, 32)                        \
    X(block_k, 64, Compile, "b", "k per chunk staged in shared memory (k / groups under half a chunk goes "  \
      "to another kernel: the dispatcher)", 8, 16, 32, 64)                                                  \
    X(fold_images, 0, Compile, "f", "1: the images folded into the pixel tiles (a tile may span images: "   \
      "planes, or stride phases, smaller than a tile fill it); 0: a tile per image", 0, 1)                  \
    X(skip_pad, 1, Compile, "p", "1: a block skips the filter taps whose dy reads lie wholly in the "      \
      "padding for all of its pixels (a uniform test per tap); 0: every tap", 0, 1)                         \
    X(winograd, 0, Compile, "w", "0: the implicit GEMM over taps x k; m = 2, 4 or 6: Winograd F(m x m, r x r) "  \
      "(class s1 k3 or k5, m + r - 1 <= 8): dy's tiles of m x m pixels and w transformed, one GEMM over k "  \
      "per transform point "                                                                                \
      "(the pixels are the tiles, staged as above), the products transformed back (define_bwd_data_winograd)", \
      0, 2, 4, 6)
CONVBWD_DEFINE_PARAMS(BwdDataStagedGpuParams, CONVBWD_BWD_DATA_STAGED_GPU_KNOBS)
// A staged backward-data block's tile: pixels and channels, every thread's.
inline int data_block_pixels(const BwdDataStagedGpuParams &p) { return p.tile_x * p.threads_x; }
inline int data_block_channels(const BwdDataStagedGpuParams &p) { return p.tile_c * p.threads_c; }
// The words of a row of dy's staged chunk (one row per k): the block's pixels plus 4. A multiple of 4
// words, so that a thread reads its consecutive pixels as 16-byte vectors; plus 4, as NHWC's copy
// threads run along k and store a column, which rows of a multiple of 32 words put on one bank.
inline int staged_dy_row_words(const BwdDataStagedGpuParams &p) { return data_block_pixels(p) + 4; }

// The fragment kind, one knob of both matrix-fragment families (generators/fragments.h).
#define CONVBWD_FRAG_KNOB(X)                                                                                 \
    X(frag, 0, Compile, "f!",                                                                                \
      "fragment: 0 = 32x32x8 over a 64-lane wave (AMD v_mfma_f32_32x32x8*); 1 = 16x8x16 over a 32-lane "   \
      "warp (NVIDIA mma.sync.m16n8k16, inline PTX on NVIDIA's OpenCL); other OpenCL devices run either "   \
      "layout emulated in local memory",                                                                     \
      0, 1)

// The most waves a matrix-fragment block has on OpenCL and AMDGPU (warps_m x warps_n at stage 0):
// the emulated fragments' local scratch holds one wave's operands for each
// (runtime/src/opencl_fragments.cpp).
constexpr int kMaxOpenclFragmentWaves = 4;

// The one-warp fragment kernels' k-block loop, one knob of both matrix-fragment families.
#define CONVBWD_FRAG_UNROLL_KNOB(X)                                                                          \
    X(unroll, 1, Compile, "u",                                                                               \
      "stage 0: k-blocks a step of the k-block loop, unrolled, their operands loaded together before their " \
      "fragments (u k-blocks' loads in flight in a warp); the k-blocks rounded up to a multiple of u, those " \
      "past the reduction (backward-data: past k; backward-weight: past the split) reading zeros",          \
      1, 2, 4)

// ---- Backward-data, GPU, matrix instructions (conv_bwd_data_mma_gpu): an NHWC f16/bf16 problem of
// stride 1 or 2 as the implicit GEMM dx[pixel, c] = sum_{tap, k} dy[(pixel - tap) / stride, k]
// w[tap, k, c] on matrix fragments (generators/fragments.h): one wave (AMD, 64 lanes) or warp
// (NVIDIA, 32) per block, tile_m x tile_n fragments per wave and stride phase, f32 accumulation
// in registers, the result written through shared memory.
#define CONVBWD_BWD_DATA_MMA_GPU_KNOBS(X)                                                                   \
    CONVBWD_FRAG_KNOB(X)                                                                                     \
    X(tile_m, 1, Compile, "m!", "fragments per wave along the pixels (32 or 16 pixels each)", 1, 2, 4, 8)   \
    X(tile_n, 1, Compile, "n!", "fragments per wave along the channels (32 or 8 channels each)", 1, 2, 4, 8) \
    X(vec, 1, Compile, "v",                                                                                  \
      "4 = each lane's operand elements are groups of 4 consecutive channels (fragment k mapped to "        \
      "channels so), loaded as 8-byte vectors: NHWC dy in place (k a multiple of 4, dy's base and strides " \
      "multiples of 4 elements), NCHW dy and w from copies with k innermost made at the start of the call", \
      1, 4)                                                                                                  \
    X(stage, 0, Compile, "s",                                                                                \
      "k-blocks per chunk staged in shared memory (0 = none; NHWC, stride 1, vec=4): the block copies a "  \
      "chunk of dy (in place, 8 channels a vector: k a multiple of 8) and of w's copy at one tap into "      \
      "shared memory, channels innermost, then its warps run the chunk's fragments from there",             \
      0, 1, 2, 4)                                                                                            \
    X(warps_m, 1, Compile, "wm",                                                                             \
      "stage > 0: warps per block along the pixels, each with its tile_m x tile_n fragments (its "          \
      "accumulators in its registers over the whole reduction, put in shared memory once at the end)",      \
      1, 2, 4)                                                                                               \
    X(warps_n, 1, Compile, "wn", "stage > 0: warps per block along the channels (as warps_m)", 1, 2, 4)      \
    X(ahead, 0, Compile, "a",                                                                                \
      "1 = stage > 0 with chunk w + 1 copied before chunk w runs (two chunks in shared memory; the chunk "   \
      "loop starts one chunk early): the copies are cp.async (runtime/src/cuda_fragments.cpp), waited for " \
      "one chunk later, so a chunk's loads fly while the chunk before it runs",                             \
      0, 1)                                                                                                  \
    CONVBWD_FRAG_UNROLL_KNOB(X)                                                                              \
    X(flat, 1, Launch, "", "1 = a pointwise problem with dense planes presented as one row of H*W pixels (else a row is W pixels)", 0, 1)
CONVBWD_DEFINE_PARAMS(BwdDataMmaGpuParams, CONVBWD_BWD_DATA_MMA_GPU_KNOBS)
// A backward-data fragment block's tile: fragments along the pixels (M) and channels (N), every warp's.
inline int data_block_frags_m(const BwdDataMmaGpuParams &p) { return p.tile_m * p.warps_m; }
inline int data_block_frags_n(const BwdDataMmaGpuParams &p) { return p.tile_n * p.warps_n; }
// A backward-data fragment block's columns of one row (of a stride phase): its fragments along the
// pixels, fs.M each. The schedule splits dx's columns by it; the dispatcher's rule G1 compares it with
// the plane.
inline int data_block_columns(const BwdDataMmaGpuParams &p) { return frag::shape(p.frag).M * data_block_frags_m(p); }

// ---- Backward-weight, GPU, matrix instructions (conv_bwd_weight_mma_gpu): an NHWC f16/bf16 problem
// (any stride, filter, dilation) as one implicit GEMM per filter tap, dw[k, c] = sum_{pixel}
// dy[pixel, k] x[pixel * stride + tap, c], on matrix fragments: one wave (AMD) or warp (NVIDIA)
// per block holds tile_m x tile_n fragments (k x c) of one tap and one split of the reduction
// over the pixels' k-blocks (rows of columns, in fragment-K steps); the f32 partials go to the
// workspace and a second kernel sums them in a fixed order.
#define CONVBWD_BWD_WEIGHT_MMA_GPU_KNOBS(X)                                                                 \
    CONVBWD_FRAG_KNOB(X)                                                                                     \
    X(tile_m, 1, Compile, "m!", "fragments per wave along the output channels k (32 or 16 each)", 1, 2, 4, 8) \
    X(tile_n, 1, Compile, "n!", "fragments per wave along the input channels c (32 or 8 each)", 1, 2, 4, 8)   \
    X(vec, 1, Compile, "v",                                                                                  \
      "4 = each lane's operand elements are groups of 4 consecutive pixels (fragment k mapped to pixels "   \
      "so), loaded as 8-byte vectors from copies of dy and of x per tap column with the columns innermost " \
      "made at the start of the call (stage=0) or from the staged chunk (stage > 0)",                        \
      1, 4)                                                                                                  \
    X(stage, 0, Compile, "s",                                                                                \
      "k-blocks per chunk staged in shared memory (0 = none): the block copies a chunk of dy and of x at "  \
      "the tap from the tensors in place (vector loads along the channels, C and K multiples of 8) into "   \
      "shared memory with the pixels innermost, then its warps run the chunk's fragments from there (no "   \
      "copies per call)",                                                                                    \
      0, 1, 2, 4, 8)                                                                                         \
    X(warps_m, 1, Compile, "wm",                                                                             \
      "warps per block along k, each with its tile_m x tile_n fragments (stage > 0: a warp sums a chunk in " \
      "registers and adds it into the block's accumulators in shared memory; stage 0, vec 4: each warp "   \
      "loads its operands from the copies, its neighbours' k-blocks at the same time, through L1)",        \
      1, 2, 4)                                                                                               \
    X(warps_n, 1, Compile, "wn", "warps per block along c (as warps_m)", 1, 2, 4)                             \
    CONVBWD_FRAG_UNROLL_KNOB(X)                                                                              \
    X(copy_groups, 0, Compile, "g",                                                                          \
      "1 = stage 0, vec 4, NHWC: the copies of dy and x (columns innermost) read 8-channel groups of the "   \
      "tensors in place as 16-byte vectors, 4 columns a thread, and write each channel's 4 columns as one "  \
      "vector, a warp 8 column vectors x 4 channel groups (whole 32-byte sectors both ways; c and k "        \
      "multiples of 8)",                                                                                     \
      0, 1)                                                                                                  \
    X(flat, 1, Launch, "",                                                                                   \
      "1 = a pointwise stride-1 problem with dense planes presented as one row of H*W pixels (else a row "  \
      "is W pixels: a fragment's k-block of pixels stays within a row)",                                     \
      0, 1)                                                                                                  \
    X(max_splits, 1024, Launch, "", "cap on the partial sums over the pixels' k-blocks (workspace <= 256 MiB)", \
      1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)                                              \
    X(split_blocks, 1056, Launch, "",                                                                        \
      "waves per launch the split count aims at (1056 = 8 per H100 multiprocessor)", 132, 264, 528, 1056,   \
      2112, 4224, 8448)
CONVBWD_DEFINE_PARAMS(BwdWeightMmaGpuParams, CONVBWD_BWD_WEIGHT_MMA_GPU_KNOBS)
// A backward-weight fragment block's tile: fragments along k (M) and c (N), every warp's.
inline int weight_block_frags_m(const BwdWeightMmaGpuParams &p) { return p.tile_m * p.warps_m; }
inline int weight_block_frags_n(const BwdWeightMmaGpuParams &p) { return p.tile_n * p.warps_n; }
// The output channels (k) of dw a block holds: its fragments along k, each of the fragment's M rows.
inline int weight_block_rows(const BwdWeightMmaGpuParams &p) { return frag::shape(p.frag).M * weight_block_frags_m(p); }

// The launch knobs of the SIMT GPU backward-weight families' split over the N*P rows (register
// tiles and staged: the same splits and workspace), one declaration for both tables.
#define CONVBWD_GPU_WEIGHT_SPLIT_KNOBS(X)                                                                   \
    X(max_splits, 512, Launch, "", "cap on the partial sums over the N*P rows (workspace <= 256 MiB)",       \
      1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)                                              \
    X(split_blocks, 528, Launch, "",                                                                         \
      "blocks per launch the split count aims at (528 = 4 per H100 multiprocessor)", 132, 264, 528, 1056,  \
      2112, 4224, 8448)

// ---- Backward-weight, GPU (conv_bwd_weight_gpu) ----
#define CONVBWD_BWD_WEIGHT_GPU_KNOBS(X)                                                                      \
    X(tile_c, 4, Compile, "c!", "input channels per thread (registers)", 1, 2, 3, 4, 8)                      \
    X(tile_k, 4, Compile, "k!", "output channels per thread (registers)", 1, 2, 4, 8)                        \
    X(threads_c, 16, Compile, "tc", "threads along input-channel tiles", 4, 8, 16, 32)                       \
    X(threads_k, 8, Compile, "tk", "threads along output-channel tiles", 4, 8, 16, 32)                       \
    X(fuse_taps, 0, Compile, "f", "1 = each thread loops over the filter taps (one launch); 0 = a launch per tap", 0, 1) \
    X(stage, 0, Compile, "s",                                                                                \
      "1 = x and dy first copied channels-innermost, x's padding materialised (no bounds test inside)", 0, 1) \
    X(tile_s, 1, Compile, "t",                                                                               \
      "filter taps along x per thread (needs fuse_taps); a first layer (3-4 channels) gets 3 channels x "   \
      "tile_k x tile_s per thread",                                                                          \
      1, 2, 3, 4, 5, 6, 7, 8)                                                                                \
    X(tile_r, 1, Compile, "r",                                                                               \
      "depthwise: filter rows per thread (with tile_s taps each, needs fuse_taps): a column's dy serves "    \
      "tile_r x tile_s accumulators, and its x rows the neighbouring columns' taps",                         \
      1, 2, 3)                                                                                                 \
    X(unroll_q, 1, Compile, "u", "unroll of the reduction loop along output columns", 1, 2, 4, 7)            \
    X(split_threads, 1, Compile, "q",                                                                        \
      "depthwise: threads along the splits, the block's other threads_c x threads_k / split_threads along k " \
      "(fewer k a block: 32 or 144 channels leave no thread idle)",                                         \
      1, 2, 4)                                                                                               \
    X(col_lanes, 1, Compile, "l",                                                                            \
      "depthwise: a warp's lanes along the output columns (col_lanes) x k (k_lanes) x rows (the rest), "    \
      "threads_c * threads_k / 32 warps a block, each lane's filter taps in registers over its columns "   \
      "and rows, the lanes summed in shared memory (1: threads along k)",                                    \
      1, 4, 8, 16, 32)                                                                                       \
    X(k_lanes, 1, Compile, "j",                                                                              \
      "depthwise, col_lanes > 1: a warp's lanes along k (NHWC: 32 / col_lanes consecutive channels, so a "  \
      "warp's loads are col_lanes runs of k_lanes channels; NCHW: 1, the rest of the warp along rows)",     \
      1, 2, 4, 8)                                                                                            \
    X(vec, 1, Compile, "v",                                                                                  \
      "4 = a column block's x and dy channels loaded once into registers as 16-byte vectors (C, K "         \
      "multiples of 4, groups 1)",                                                                           \
      1, 4)                                                                                                  \
    CONVBWD_GPU_WEIGHT_SPLIT_KNOBS(X)
CONVBWD_DEFINE_PARAMS(BwdWeightGpuParams, CONVBWD_BWD_WEIGHT_GPU_KNOBS)

// ---- Backward-weight, GPU, staged (conv_bwd_weight_staged_gpu): f32 backward-weight (any stride,
// filter, dilation) as one implicit GEMM per filter tap through shared memory
// (define_bwd_weight_staged), dw[k, c] = sum over pixels dy[pixel, k] x[pixel * stride + tap, c]. A
// block of threads_c x threads_k threads owns tile_c * threads_c channels x tile_k * threads_k k of
// one tap and one split of the N*P rows (the splits of conv_bwd_weight_gpu: the same workspace);
// per chunk of block_p pixels of its split (rows flattened with their columns) it copies dy's and
// x's pixels into shared memory, each thread sums its tile of the chunk in registers and adds it
// into the block's accumulators, which stay in shared memory across the chunks.
#define CONVBWD_BWD_WEIGHT_STAGED_GPU_KNOBS(X)                                                               \
    X(tile_c, 4, Compile, "c!", "input channels per thread (registers): every threads_c-th of the block's", 1, 2, 4, 8) \
    X(tile_k, 4, Compile, "k!", "output channels per thread (registers): every threads_k-th of the block's", 1, 2, 4, 8) \
    X(threads_c, 8, Compile, "tc", "threads along the block's input channels", 4, 8, 16, 32)                 \
    X(threads_k, 16, Compile, "tk", "threads along the block's output channels", 4, 8, 16, 32)               \
    X(block_p, 64, Compile, "b", "pixels per chunk staged in shared memory", 8, 16, 32, 64)                  \
    X(skip_pad, 1, Compile, "p", "1: a block skips the chunks whose x reads at its tap lie wholly in the "  \
      "padding (a uniform test per chunk); 0: every chunk", 0, 1)                                          \
    X(winograd, 0, Compile, "w", "0: one GEMM per filter tap; m = 2 or 4: Winograd F(r x r, m x m) (class "  \
      "s1 k3 or k5): dy's m x m tiles and x's (m + r - 1)^2 windows transformed, one GEMM over the tiles "  \
      "per transform point (the tiles are the pixels above; the workspace holds the points), the sums "    \
      "transformed back to the r x r filter (define_bwd_weight_winograd)", 0, 2, 4)                         \
    CONVBWD_GPU_WEIGHT_SPLIT_KNOBS(X)
CONVBWD_DEFINE_PARAMS(BwdWeightStagedGpuParams, CONVBWD_BWD_WEIGHT_STAGED_GPU_KNOBS)
// A staged backward-weight block's tile: input and output channels, every thread's.
inline int weight_block_channels(const BwdWeightStagedGpuParams &p) { return p.tile_c * p.threads_c; }
inline int weight_block_k(const BwdWeightStagedGpuParams &p) { return p.tile_k * p.threads_k; }
// The words of a staged pixel's row of channels in shared memory: the block's channels (or k) plus
// 4. A multiple of 4 words, so that a thread reads its consecutive channels as one 16-byte vector;
// plus 4, so that the copies' 16-byte stores (a thread per pixel) of 8 threads, which a phase of the
// shared memory serves, fall on distinct banks.
inline int staged_channel_row_words(int channels) { return channels + 4; }
// Its shared memory: the block's accumulators and a chunk of both operands.
inline int weight_staged_shared_bytes(const BwdWeightStagedGpuParams &p) {
    const int bc = weight_block_channels(p), bk = weight_block_k(p);
    return 4 * (bc * bk + p.block_p * (staged_channel_row_words(bc) + staged_channel_row_words(bk)));
}

// The channel vector a kernel loads with, and so the multiple C and C / groups must be (backward-
// weight: K too). The generator, the schedule and the dispatcher all ask here.
inline int BwdDataHostParams::channel_vector() const { return 1; }
inline int BwdWeightHostParams::channel_vector() const { return 1; }
inline int BwdWeightDwHostParams::channel_vector() const { return 1; }
inline int BwdDataGpuParams::channel_vector() const { return stage == 1 || stage == 2 ? std::max(1, vec) : 1; }
inline int BwdWeightGpuParams::channel_vector() const { return stage == 1 ? std::max(1, vec) : 1; }
// The column vector of an NCHW backward-data kernel read in place: the multiple its rows (flat: the
// planes) and the strides of dy and dx must be, in elements.
inline int BwdDataHostParams::column_vector() const { return 1; }
inline int BwdWeightHostParams::column_vector() const { return 1; }
// Depthwise NCHW backward-weight with dy read in place: the rows of dy (Q) a multiple of the vector,
// else the dispatcher passes the kernel by (it computes any Q, but a row's masked last vector lost
// 1.4x on MobileNet's 14x14 planes to the copying kernels, which round the rows up).
inline int BwdWeightDwHostParams::column_vector() const { return dy_in_place ? std::max(1, vec) : 1; }
// Whether a depthwise backward-weight kernel's vectors run along the channels (NHWC; NCHW with
// channel_vectors = 1: x and dy copied channels innermost) rather than along a plane's columns: the
// schedule's path, valid()'s register tile and the dispatcher's row rule (5) ask here.
inline bool BwdWeightDwHostParams::along_channels(Layout l) const { return l == Layout::NHWC || channel_vectors; }
inline int BwdDataMmaGpuParams::channel_vector() const { return 1; }
inline int BwdDataMmaGpuParams::column_vector() const { return 1; }
inline int BwdWeightMmaGpuParams::channel_vector() const { return stage > 0 || copy_groups ? kStagedChannelGroup : 1; }
inline int BwdWeightMmaGpuParams::column_vector() const { return 1; }
// The vector a backward-weight fragment kernel loads x's and dy's channels with in place (its staged
// chunks, or its per-call copies with copy_groups; NHWC): C, K, the bases and the N, H, W strides multiples of it. NCHW's chunks load along the
// pixels, an element a thread (1: no condition on the strides; channel_vector() still asks C and K in
// groups of it).
inline int weight_mma_input_vector(const BwdWeightMmaGpuParams &p, Layout l) {
    return l == Layout::NHWC ? p.channel_vector() : 1;
}
// Whether a backward-data fragment kernel copies dy with its channels innermost first (NCHW, vec > 1:
// BwdDataMmaGraph::dyt, zero past K), and the vector it loads dy's channels with in place: NHWC vec
// (K, dy's base and its N, H, W strides multiples of it); a copying kernel asks nothing of the tensor.
inline bool data_mma_copies_dy(const BwdDataMmaGpuParams &p, Layout l) { return l == Layout::NCHW && p.vec > 1; }
// Whether a backward-data fragment kernel copies each staged chunk one chunk ahead of its use (ahead:
// its chunk loop's copies may stay in flight across the barriers of the chunk they were issued in;
// the runtime's PTX rewrite then waits for them one chunk later).
inline bool data_mma_copies_ahead(const BwdDataMmaGpuParams &p) { return p.stage > 0 && p.ahead; }
// The staged chunks (stage > 0, NHWC) load groups of kStagedChannelGroup channels.
inline int data_mma_input_vector(const BwdDataMmaGpuParams &p, Layout l) {
    return data_mma_copies_dy(p, l) ? 1 : p.stage > 0 ? kStagedChannelGroup : p.vec;
}
inline int BwdDataGpuParams::column_vector() const { return stage ? 1 : std::max(1, xvec); }
// GPU backward-data threads: along the channels where they are dense (NHWC, or the staged
// channels-innermost copies), else along the columns (NCHW read in place), so a warp's loads are
// contiguous; column_threads() is then threads_x, else threads_c: the threads along a row's
// column tiles (with fuse_rows, along the tiles of every row of a plane).
inline bool BwdDataGpuParams::channels_dense(Layout layout) const { return layout == Layout::NHWC || stage == 1 || stage == 2; }
inline int BwdDataGpuParams::column_threads(Layout layout) const { return channels_dense(layout) ? threads_x : threads_c; }
inline int BwdWeightGpuParams::column_vector() const { return 1; }
// Host register tiles of channel vectors and groups. group_channel_tile(): a grouped problem's
// c / groups must be a multiple of it (packed backward-data reads a tile's group from the tile's
// first channel, define_bwd_data). group_channels_min(): c / groups at least this, else the tiles
// run mostly masked (backward-weight, 8 channels a group under 16-channel tiles: 0.02 of oneDNN;
// with 8-channel tiles 0.4). 1: any.
// packed_tile(): the channels per tile of the packed filter (pack=1, BwdDataGraph::w_tile), 0 = none.
inline int BwdDataHostParams::packed_tile() const { return pack ? vec * tile_c : 0; }
// cols_tile(): the columns of a register tile of the planes' GEMM (cols = 1: tile_x vectors), 0 = none.
inline int BwdDataHostParams::cols_tile() const { return cols ? vec * tile_x : 0; }
inline int BwdDataHostParams::group_channel_tile() const { return group_lanes ? group_lanes : std::max(1, packed_tile()); }
inline int BwdDataHostParams::group_channels_min() const { return 1; }
inline int BwdWeightHostParams::group_channel_tile() const { return 1; }
// Staged backward-data: a block's channels lie in one group (its group read from its first
// channel, define_bwd_data_staged); no channel or column vectors.
inline int BwdDataStagedGpuParams::group_channel_tile() const { return data_block_channels(*this); }
inline int BwdDataStagedGpuParams::group_channels_min() const { return 1; }
inline int BwdDataStagedGpuParams::channel_vector() const { return 1; }
inline int BwdDataStagedGpuParams::column_vector() const { return 1; }
inline int BwdWeightStagedGpuParams::channel_vector() const { return 1; }
inline int BwdWeightStagedGpuParams::column_vector() const { return 1; }
inline int BwdWeightHostParams::group_channels_min() const { return channel_lanes() * tile_c; }
// group_k_tile(): a grouped problem's k / groups must be a multiple of it (1: any).
inline int BwdWeightHostParams::group_k_tile() const { return group_tile ? tile_k : 1; }
inline int BwdDataHostParams::group_k_tile() const { return 1; }
inline int BwdDataStagedGpuParams::group_k_tile() const { return 1; }
// group_exact(): > 0 where a kernel takes only groups of exactly this many channels and k
// (c / groups = k / groups), the groups whole vectors' worth (groups a multiple of packed_tile() /
// group_exact(): define_bwd_data's staged dy holds a tile's groups side by side, unclamped).
inline int BwdDataHostParams::group_exact() const { return pack ? group_lanes : 0; }
inline int BwdWeightHostParams::group_exact() const { return 0; }
// channel_lanes(): the lanes of a vector along the channels (backward-weight's k_lanes share the rest).
inline int BwdWeightHostParams::channel_lanes() const { return vec / std::max(1, k_lanes); }
inline int BwdDataStagedGpuParams::group_exact() const { return 0; }
// The grouped columns family: a register tile's k lie in one group (its group from the tile's first k).
// Narrow backward-weight with k_vectors: a register tile's k vectors lie in one group (x's channel read
// from the tile's first k, define_bwd_weight's k_tile), so k / groups a multiple of them.
// Its register tile's taps along a filter row (a class filter's size, else tile_s) and filter rows (with
// full_taps a class filter's R, else 1): one definition for the schedule and valid().
struct KVectorTaps {
    int row = 0, rows = 1;
};
inline KVectorTaps k_vector_taps(const BwdWeightNarrowHostParams &p, FilterClass fc) {
    const int cf = class_filter_size(fc);
    return {cf > 0 ? cf : p.tile_s, p.full_taps && cf > 0 ? cf : 1};
}
inline int BwdWeightNarrowHostParams::group_channel_tile() const { return 1; }
inline int BwdWeightNarrowHostParams::group_channels_min() const { return 1; }
inline int BwdWeightNarrowHostParams::group_k_tile() const { return k_vectors ? vec * tile_k : 1; }
inline int BwdWeightNarrowHostParams::group_exact() const { return 0; }
inline int BwdWeightNarrowHostParams::packed_tile() const { return 0; }
inline int BwdWeightGroupedHostParams::group_channel_tile() const { return 1; }
inline int BwdWeightGroupedHostParams::group_channels_min() const { return 1; }
inline int BwdWeightGroupedHostParams::group_k_tile() const { return tile_k; }
inline int BwdWeightGroupedHostParams::group_exact() const { return 0; }
inline int BwdWeightGroupedHostParams::packed_tile() const { return 0; }

// Backward-weight on GPUs: the taps a thread holds (tile_s needs fuse_taps), and whether a
// problem takes the first-layer tile. One definition for the schedule (Halide Exprs) and the
// dispatcher's split count (integers).
inline int taps_per_thread(const BwdWeightGpuParams &p) { return p.fuse_taps ? std::max(1, p.tile_s) : 1; }
template <class T>
auto takes_first_layer_tile(const BwdWeightGpuParams &p, const T &Cg, const T &K, const T &S) {
    // (Not with channel vectors: their tiles are whole vectors.)
    return p.channel_vector() == 1 && Cg >= 3 && Cg <= 4 && K >= p.tile_k && S >= taps_per_thread(p);
}

// Without fuse_taps, few channels (c / groups <= kFewChannelThreads) take a tile of one channel a
// thread, kFewChannelThreads threads along the channels (schedules/gpu.cpp's kFewChannels shape).
constexpr int kFewChannelThreads = 4;
template <class T>
auto takes_few_channels_tile(const BwdWeightGpuParams &p, const T &Cg, const T &K) {
    return !p.fuse_taps && p.channel_vector() == 1 && Cg <= kFewChannelThreads && K >= p.tile_k;
}
// The input channels a GPU backward-weight block spans for a problem, from the tile
// schedules/gpu.cpp picks (the same conditions): 0 for the first-layer tile (its block spans k and
// filter rows), 4 for the few-channels tile, else tile_c x threads_c. The dispatcher refuses
// grouped problems of under half as many channels a group for the kernels of a specific class.
inline int gpu_weight_block_channels(const BwdWeightGpuParams &p, int64_t Cg, int64_t K, int64_t S) {
    if (p.fuse_taps && takes_first_layer_tile<int64_t>(p, Cg, K, S)) return 0;
    if (takes_few_channels_tile<int64_t>(p, Cg, K)) return kFewChannelThreads;
    return p.tile_c * p.threads_c;
}

// Depthwise with col_lanes: the lanes of the warp that col_lanes x k_lanes x rows span (half an AMD
// wave; the lanes are summed through shared memory, not by warp shuffles), and its rows.
constexpr int kDepthwiseWarpLanes = 32;
inline int depthwise_row_lanes(const BwdWeightGpuParams &g) { return kDepthwiseWarpLanes / (g.col_lanes * g.k_lanes); }
// Depthwise: the k of a block, a thread's each (the rest, split_threads, along the splits); with
// col_lanes, k_lanes a warp.
inline int depthwise_k_threads(const BwdWeightGpuParams &g) {
    return g.col_lanes > 1 ? g.threads_c * g.threads_k / kDepthwiseWarpLanes * g.k_lanes
                           : g.threads_c * g.threads_k / g.split_threads;
}
// Blocks per reduction split of a GPU backward-weight kernel: what schedules/gpu.cpp puts on the
// grid per split (the dispatcher sizes the split count from it). Depthwise: k tiles of
// depthwise_k_threads() threads x tile_k channels (a block holds split_threads splits); else channel
// tiles x k tiles, or (a first layer's tile) k tiles x filter rows.
inline int64_t gpu_weight_blocks_per_split(const BwdWeightGpuParams &g, GroupClass gc, int64_t Cg, int64_t K, int64_t R,
                                          int64_t S) {
    auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
    if (gc == GroupClass::Depthwise) return ceil_div(K, (int64_t)g.tile_k * depthwise_k_threads(g));
    if (g.fuse_taps && takes_first_layer_tile<int64_t>(g, Cg, K, S))
        return ceil_div(K, (int64_t)g.tile_k * g.threads_k) * ceil_div(R, g.threads_c);
    return ceil_div(Cg, (int64_t)g.tile_c * g.threads_c) * ceil_div(K, (int64_t)g.tile_k * g.threads_k);
}
// The splits that put about `blocks` blocks on the grid (before the caps on splits): blocks times the
// splits a block holds (depthwise split_threads, else 1) over the blocks along the channels of one split.
inline int64_t gpu_weight_splits_for_blocks(const BwdWeightGpuParams &g, GroupClass gc, int64_t Cg, int64_t K, int64_t R,
                                            int64_t S, int64_t blocks) {
    const int64_t tiles = gpu_weight_blocks_per_split(g, gc, Cg, K, R, S);
    const int64_t per_block = gc == GroupClass::Depthwise ? g.split_threads : 1;
    return (std::max<int64_t>(1, blocks) * per_block + tiles - 1) / tiles;
}

// ---- Families ----
enum class ScheduleKind { Host, Gpu };
inline ScheduleKind schedule_kind(Device d) { return d == Device::Host ? ScheduleKind::Host : ScheduleKind::Gpu; }

// Whether a backward-weight family (its kind, group class and knob table) reduces over splits of
// whole images (algorithms.h) rather than of rows: the host's narrow, depthwise and grouped-columns
// families, which stage x and dy per split or task. The generators build the algorithm with it; the
// dispatcher keeps their split count a divisor of N.
constexpr bool weight_image_splits(ScheduleKind kind, GroupClass gc, const std::vector<Knob> &(*knobs)()) {
    return kind == ScheduleKind::Host && (gc != GroupClass::Any || knobs == &BwdWeightGroupedHostParams::knobs);
}

// A kernel's conditions on a grouped problem's c / groups, from its params' group_channel_tile()
// and group_channels_min(): a multiple of tile, at least min (1: any). The dispatcher asks each
// kernel's family (Family::group_channels); families without the traits take any.
struct GroupChannels {
    int tile = 1, min = 1;
    int k_tile = 1;  // k / groups a multiple of this (group_k_tile())
    int exact = 0;   // > 0: c / groups = k / groups = exact and groups a multiple of groups_tile (group_exact())
    int groups_tile = 1;
};
struct KnobValues;
template <class Params>
GroupChannels group_channels_of(const KnobValues &vals);

// A family: a generator and the space its knobs span. tag_prefix starts the kernel tag of the
// family's kernels (algorithm variants other than the direction's main one).
struct Family {
    const char *name;  // the generator's registered name
    Direction dir;
    ScheduleKind kind;
    GroupClass groups;  // Depthwise: the family's kernels take only c = k = groups; Narrow: c / groups < 8
    const char *tag_prefix;
    const std::vector<Knob> &(*knobs)();
    const char *doc;
    // Autoscheduler baselines (convbwd-tune --baseline): Halide's autoscheduler of this name
    // schedules the family's Funcs in place of the hand schedule. The knob table is the hand
    // family's (the runtime reads its launch knobs), but no compile-time knob changes the code:
    // the tag is the prefix alone and every point is valid.
    const char *autoscheduler = nullptr;
    // The family's conditions on c / groups (group_channels_of<its params>), or none.
    GroupChannels (*group_channels)(const KnobValues &) = nullptr;
};

inline bool weight_image_splits(const Family &f) { return weight_image_splits(f.kind, f.groups, f.knobs); }

// An autoscheduler baseline's kernel name: the name its record derives, followed by the group
// class for a depthwise or narrow class (convbwd-tune builds one module per class, each with its
// class's estimates; the module loader accepts these names).
inline std::string baseline_kernel_name(const std::string &derived, GroupClass g) {
    return g == GroupClass::Any ? derived : derived + to_string(g);
}

inline const std::vector<Family> &families() {
    static const std::vector<Family> f = {
        {"conv_bwd_data_host", Direction::BwdData, ScheduleKind::Host, GroupClass::Any, "", &BwdDataHostParams::knobs,
         "backward-data by stride phases, register tiles of channel vectors x columns", nullptr,
         &group_channels_of<BwdDataHostParams>},
        {"conv_bwd_data_dw_host", Direction::BwdData, ScheduleKind::Host, GroupClass::Depthwise, "dw",
         &BwdDataHostParams::knobs, "depthwise backward-data (c = k = groups): the same tiles, dense channel vectors"},
        {"conv_bwd_data_scatter_host", Direction::BwdData, ScheduleKind::Host, GroupClass::Any, "scatter",
         &BwdDataHostParams::knobs, "comparison baseline: zero-inserted dy (scatter) then the stride-1 algorithm"},
        {"conv_bwd_weight_host", Direction::BwdWeight, ScheduleKind::Host, GroupClass::Any, "", &BwdWeightHostParams::knobs,
         "backward-weight, split reduction over N*P rows into a workspace", nullptr,
         &group_channels_of<BwdWeightHostParams>},
        {"conv_bwd_weight_dw_host", Direction::BwdWeight, ScheduleKind::Host, GroupClass::Depthwise, "dw",
         &BwdWeightDwHostParams::knobs, "depthwise backward-weight (c = k = groups): vectors along the channels"},
        {"conv_bwd_weight_narrow_host", Direction::BwdWeight, ScheduleKind::Host, GroupClass::Narrow, "nr",
         &BwdWeightNarrowHostParams::knobs,
         "narrow backward-weight (c / groups < 8: first layers, small groups): vectors along the columns or along k",
         nullptr, &group_channels_of<BwdWeightNarrowHostParams>},
        {"conv_bwd_weight_grouped_host", Direction::BwdWeight, ScheduleKind::Host, GroupClass::Any, "gr",
         &BwdWeightGroupedHostParams::knobs,
         "NCHW grouped backward-weight: vectors along the columns, a tile of one group's k x every filter tap, "
         "tasks of whole groups",
         nullptr, &group_channels_of<BwdWeightGroupedHostParams>},
        {"conv_bwd_data_gpu", Direction::BwdData, ScheduleKind::Gpu, GroupClass::Any, "", &BwdDataGpuParams::knobs,
         "backward-data by stride phases, a register tile per thread"},
        {"conv_bwd_data_staged_gpu", Direction::BwdData, ScheduleKind::Gpu, GroupClass::Any, "st",
         &BwdDataStagedGpuParams::knobs,
         "f32 backward-data (stride 1, 2 by phases) as an implicit GEMM over taps x k, operands staged per block in shared memory",
         nullptr, &group_channels_of<BwdDataStagedGpuParams>},
        {"conv_bwd_data_scatter_gpu", Direction::BwdData, ScheduleKind::Gpu, GroupClass::Any, "scatter",
         &BwdDataGpuParams::knobs, "comparison baseline: zero-inserted dy (scatter) then the stride-1 algorithm"},
        {"conv_bwd_weight_gpu", Direction::BwdWeight, ScheduleKind::Gpu, GroupClass::Any, "", &BwdWeightGpuParams::knobs,
         "backward-weight, split reduction, a register tile per thread"},
        {"conv_bwd_weight_staged_gpu", Direction::BwdWeight, ScheduleKind::Gpu, GroupClass::Any, "st",
         &BwdWeightStagedGpuParams::knobs,
         "f32 backward-weight as an implicit GEMM per filter tap, operands staged per block in shared memory, split over the rows"},
        {"conv_bwd_data_mma_gpu", Direction::BwdData, ScheduleKind::Gpu, GroupClass::Any, "mma",
         &BwdDataMmaGpuParams::knobs,
         "f16/bf16 backward-data (stride 1, 2; NHWC, NCHW with vec=1) as an implicit GEMM on matrix fragments (MFMA, mma.sync; emulated elsewhere)"},
        {"conv_bwd_weight_mma_gpu", Direction::BwdWeight, ScheduleKind::Gpu, GroupClass::Any, "mma",
         &BwdWeightMmaGpuParams::knobs,
         "f16/bf16 backward-weight (NHWC, NCHW) as an implicit GEMM per filter tap on matrix fragments, split over the pixels"},
        {"conv_bwd_data_dw_gpu", Direction::BwdData, ScheduleKind::Gpu, GroupClass::Depthwise, "dw", &BwdDataGpuParams::knobs,
         "depthwise backward-data (c = k = groups): the GPU tiles read in place"},
        {"conv_bwd_weight_dw_gpu", Direction::BwdWeight, ScheduleKind::Gpu, GroupClass::Depthwise, "dw",
         &BwdWeightGpuParams::knobs, "depthwise backward-weight (c = k = groups): threads along the channels"},
        {"conv_bwd_weight_narrow_gpu", Direction::BwdWeight, ScheduleKind::Gpu, GroupClass::Narrow, "nr",
         &BwdWeightGpuParams::knobs,
         "first layers (c < 8, one group): the register tiles' first-layer tile, threads along k and filter rows"},
        {"conv_bwd_data_adams2019_host", Direction::BwdData, ScheduleKind::Host, GroupClass::Any, "adams2019",
         &BwdDataHostParams::knobs, "comparison baseline: Halide's Adams2019 autoscheduler on the backward-data Funcs",
         "Adams2019"},
        {"conv_bwd_weight_adams2019_host", Direction::BwdWeight, ScheduleKind::Host, GroupClass::Any, "adams2019",
         &BwdWeightHostParams::knobs, "comparison baseline: Halide's Adams2019 autoscheduler on the backward-weight Funcs",
         "Adams2019"},
        {"conv_bwd_data_anderson2021_gpu", Direction::BwdData, ScheduleKind::Gpu, GroupClass::Any, "anderson2021",
         &BwdDataGpuParams::knobs, "comparison baseline: Halide's Anderson2021 GPU autoscheduler on the backward-data Funcs",
         "Anderson2021"},
        {"conv_bwd_weight_anderson2021_gpu", Direction::BwdWeight, ScheduleKind::Gpu, GroupClass::Any, "anderson2021",
         &BwdWeightGpuParams::knobs, "comparison baseline: Halide's Anderson2021 GPU autoscheduler on the backward-weight Funcs",
         "Anderson2021"},
    };
    return f;
}
// Whether a family's kernels call matrix fragments (generators/fragments.h): their OpenCL C needs a
// prelude first (cmake/ConvbwdKernels.cmake, convbwd-tune's builds) and they take one group only.
inline bool calls_fragments(const Family &f) {
    return f.knobs == &BwdDataMmaGpuParams::knobs || f.knobs == &BwdWeightMmaGpuParams::knobs;
}
// Whether a family's kernels take groups == 1 only (one GEMM over all channels): the fragment
// families and staged backward-weight (a block's k would have to lie in one group). The generators
// require it on entry; the dispatcher asks here first.
inline bool takes_one_group(const Family &f) {
    return calls_fragments(f) || f.knobs == &BwdWeightStagedGpuParams::knobs ||
           (f.kind == ScheduleKind::Gpu && f.groups == GroupClass::Narrow);
}

inline const Family *find_family(const std::string &name) {
    for (const Family &f : families())
        if (name == f.name) return &f;
    return nullptr;
}
inline const Knob *find_knob(const Family &f, const std::string &name) {
    for (const Knob &k : f.knobs())
        if (name == k.name) return &k;
    return nullptr;
}

// ---- Knob values: one kernel's point in its family's space ----
// Values in table order; missing ones are the defaults.
struct KnobValues {
    const Family *family = nullptr;
    std::vector<int> v;
    int get(const char *name) const {  // no std::string per call: the runtime asks on every call
        const auto &ks = family->knobs();
        for (size_t i = 0; i < ks.size(); i++)
            if (std::strcmp(name, ks[i].name) == 0) return v[i];
        return 0;
    }
};
inline KnobValues default_values(const Family &f) {
    KnobValues kv{&f, {}};
    for (const Knob &k : f.knobs()) kv.v.push_back(k.def);
    return kv;
}

// Whether a kernel's f32 arithmetic is exact on small-integer data (every intermediate value a
// dyadic rational, as a direct sum's): not so for Winograd transforms with thirds and sixths
// (F(4x4, 3x3)). The harness verifies such a kernel within the f32 tolerance (common/verify.h)
// instead of bit for bit; convbwd_kernel_desc.exact_on_integers carries it.
inline bool exact_on_integers(const KnobValues &vals, FilterClass fc) {
    const int m = vals.get("winograd"), r = class_filter_size(fc);  // winograd: the staged families' (else 0)
    if (m == 0) return true;
    // Backward-data: F(m, r) over dy; backward-weight: F(r, m), dy's m x m tiles the "filter".
    return (vals.family->dir == Direction::BwdData ? winograd::transform(m, r) : winograd::transform(r, m)).dyadic();
}

// The taps a backward-weight kernel's workspace holds per (c, k) and split (ws(s, r, ...)'s first two
// extents, {S, R}): the filter's own, or a Winograd kernel's transform points (alpha x alpha, alpha =
// m + R - 1: its class fixes R = S). One definition for the kernels' workspace shape
// (runtime/src/api.cpp) and its size.
struct WeightTaps {
    int s, r;
};
// A backward-weight kernel that sums every pixel in one pass and writes dw itself (the general and
// depthwise host families' direct = 1): no workspace, one split; the dispatcher keeps it to problems
// of at most kWgradDirectTerms terms (runtime/src/internal.h).
inline bool weight_sums_direct(const KnobValues &kv) {
    return (kv.family->knobs == &BwdWeightHostParams::knobs || kv.family->knobs == &BwdWeightDwHostParams::knobs) &&
           !kv.family->autoscheduler && kv.get("direct") != 0;
}

inline WeightTaps weight_partial_taps(const KnobValues &vals, int S, int R) {
    const int m = vals.family->dir == Direction::BwdWeight ? vals.get("winograd") : 0;
    return m ? WeightTaps{winograd::alpha_of(m, S), winograd::alpha_of(m, R)} : WeightTaps{S, R};
}

// A Winograd kernel's largest device intermediate in bytes (f32; 0 for every other kernel): alpha^2
// points x its tiles x the wider channel count (backward-data: dx's m x m tiles, dy and the products
// transformed; backward-weight: dy's m x m tiles, dy and x transformed). The kernel allocates it
// inside the call, and a Halide buffer holds at most 2^31 - 1 bytes: the dispatcher refuses larger
// problems first (the next kernel takes them).
inline int64_t winograd_intermediate_bytes(const KnobValues &vals, int64_t N, int64_t C, int64_t K, int64_t H, int64_t W,
                                           int64_t P, int64_t Q, int64_t R) {
    const int64_t m = vals.get("winograd");
    if (m == 0) return 0;
    const int64_t alpha = winograd::alpha_of((int)m, (int)R);
    const bool data = vals.family->dir == Direction::BwdData;
    const int64_t tiles = N * (((data ? H : P) + m - 1) / m) * (((data ? W : Q) + m - 1) / m);
    return alpha * alpha * tiles * std::max(C, K) * 4;
}

// Parses "key=value ..." into vals (which holds the defaults or earlier values). Errors name the
// field: an unknown knob, a value that is not an integer, a value outside the domain, a knob of
// the wrong kind (only_kind, where set). Returns "" on success.
inline std::string parse_knobs(const std::string &text, KnobValues *vals, const KnobKind *only_kind = nullptr) {
    const auto &ks = vals->family->knobs();
    size_t pos = 0;
    while (pos < text.size()) {
        while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t')) pos++;
        if (pos >= text.size()) break;
        size_t end = text.find_first_of(" \t", pos);
        if (end == std::string::npos) end = text.size();
        const std::string kv = text.substr(pos, end - pos);
        pos = end;
        const size_t eq = kv.find('=');
        if (eq == std::string::npos || eq == 0)
            return "'" + kv + "' is not knob=value";
        const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
        size_t i = 0;
        while (i < ks.size() && key != ks[i].name) i++;
        if (i == ks.size()) return "unknown knob '" + key + "' for family " + vals->family->name;
        if (only_kind && ks[i].kind != *only_kind)
            return "knob '" + key + "' is " + (ks[i].kind == KnobKind::Compile ? "compile-time" : "launch-time") +
                   " (a " + (*only_kind == KnobKind::Launch ? "launch-time" : "compile-time") + " knob is expected here)";
        char *e = nullptr;
        const long parsed = std::strtol(value.c_str(), &e, 10);
        if (value.empty() || !e || *e != 0) return "knob " + key + " = '" + value + "' is not an integer";
        if (std::find(ks[i].domain.begin(), ks[i].domain.end(), (int)parsed) == ks[i].domain.end() ||
            parsed != (long)(int)parsed) {
            std::string dom;
            for (int d : ks[i].domain) dom += (dom.empty() ? "" : ",") + std::to_string(d);
            return "knob " + key + " = " + value + " is outside its domain {" + dom + "}";
        }
        vals->v[i] = (int)parsed;
    }
    return {};
}

// "key=value ..." of the knobs of one kind (or all), every one or only those off their default.
inline std::string print_knobs(const KnobValues &vals, const KnobKind *kind = nullptr, bool only_changed = false) {
    const auto &ks = vals.family->knobs();
    std::string out;
    for (size_t i = 0; i < ks.size(); i++) {
        if (kind && ks[i].kind != *kind) continue;
        if (only_changed && vals.v[i] == ks[i].def) continue;
        out += (out.empty() ? "" : " ") + std::string(ks[i].name) + "=" + std::to_string(vals.v[i]);
    }
    return out;
}

// The kernel's tag, from its compile-time knobs in table order: codes ending in '!' always
// (code + value: "c4x4"); others only off their default: a 0/1 knob set to 1 as its code alone
// ("u"), anything else as code + value ("s2", "n0", "t3"). Launch-time knobs are not in the tag:
// one compiled kernel serves all their values. E.g. tile_c=4 tile_x=7 stage=1 unroll_taps=1 vec=4
// -> "c4x7s1uv4".
inline std::string kernel_tag(const KnobValues &vals) {
    const auto &ks = vals.family->knobs();
    std::string out = vals.family->tag_prefix;
    if (vals.family->autoscheduler) return out;  // no knob reaches its code
    for (size_t i = 0; i < ks.size(); i++) {
        const Knob &k = ks[i];
        std::string code = k.tag;
        if (code.empty() || k.kind != KnobKind::Compile) continue;
        const bool always = code.back() == '!';
        if (always) code.pop_back();
        if (!always && vals.v[i] == k.def) continue;
        const bool flag = k.domain.size() == 2 && k.domain[0] == 0 && k.domain[1] == 1;
        out += (flag && !always && vals.v[i] == 1) ? code : code + std::to_string(vals.v[i]);
    }
    return out;
}

// The kernel name: <dir>_<dtype>_<layout>_<stride>_<filter>_<device>_<tag>.
inline std::string kernel_name(Direction dir, DType t, Layout l, StrideClass s, FilterClass f, Device d,
                               const std::string &tag) {
    return std::string(dir == Direction::BwdData ? "bwdd" : "bwdw") + "_" + to_string(t) + "_" + to_string(l) + "_" +
           to_string(s) + "_" + to_string(f) + "_" + to_string(d) + "_" + tag;
}

// Fills a params struct from knob values of its family.
template <class Params>
Params to_params(const KnobValues &vals) {
    Params p;
    size_t i = 0;
    Params::visit(p, [&](int &field, const char *) { field = vals.v[i++]; });
    return p;
}

template <class Params>
GroupChannels group_channels_of(const KnobValues &vals) {
    const Params p = to_params<Params>(vals);
    const int exact = p.group_exact();
    return {p.group_channel_tile(), p.group_channels_min(), p.group_k_tile(), exact,
            exact > 0 ? std::max(1, p.packed_tile() / exact) : 1};
}

// ---- valid(): every constraint of a family, for one point, problem class and device ----
// Returns "" where valid, else the first constraint that fails, naming its knobs.
struct KernelClass {
    Direction dir;
    DType dtype;
    Layout layout;
    StrideClass stride;
    FilterClass filter;
    Device device;
};

// A Winograd point (winograd = m > 0) of a staged family: F(m x m, r x r) or F(r x r, m x m) needs the
// class's compile-time stride 1 and filter r = 3 or 5, and alpha = m + r - 1 <= 8 transform points
// per dim (generators/winograd.h: seven finite points and infinity).
inline std::string winograd_class_rule(const KernelClass &c, int m) {
    const int r = class_filter_size(c.filter);
    if (c.stride != StrideClass::S1 || (r != 3 && r != 5))
        return "winograd > 0: class s1 k3 or k5 (Winograd needs stride 1 and a 3x3 or 5x5 filter at compile time)";
    if (winograd::alpha_of(m, r) > 8)
        return "winograd = " + std::to_string(m) + ": m + r - 1 <= 8 transform points (filter " + std::to_string(r) + ")";
    return {};
}

inline std::string valid(const KnobValues &vals, const KernelClass &c) {
    const Family &f = *vals.family;
    if (f.dir != c.dir) return std::string("family ") + f.name + " is " + to_string(f.dir);
    if (f.kind != schedule_kind(c.device)) return std::string("family ") + f.name + " does not build for " + to_string(c.device);
    if (f.autoscheduler) return {};  // the autoscheduler's schedule: no hand knob constrains it
    const bool amd = c.device == Device::AmdGpu;
    auto need = [](bool ok, const std::string &why) { return ok ? std::string() : why; };
    std::string e;
    // Host register budget: 16 vector registers (AVX2), 2 for operands; 16-lane vectors mean
    // AVX-512 and its 32 registers.
    auto budget = [](int vec) { return vec >= 16 ? 28 : 14; };
    auto acc_rule = [&](const char *what, int vec) {
        return std::string(what) + " <= " + std::to_string(budget(vec)) + " accumulators (vec " + std::to_string(vec) + ")";
    };
    if (f.kind == ScheduleKind::Host && f.dir == Direction::BwdData) {
        const auto p = to_params<BwdDataHostParams>(vals);
        // The unpacked schedule folds a class filter's taps per phase, so its tile holds both
        // stride phases; the packed one's tile holds one phase at a time (the phases go outside
        // the taps: schedules/host.cpp), as an any-filter tile does.
        const int phases = c.stride == StrideClass::S2 && c.filter != FilterClass::Any && !p.pack ? 2 : 1;
        if (!(e = need(p.tile_c * p.tile_x * phases <= budget(p.vec), acc_rule("tile_c * tile_x * stride phases", p.vec))).empty()) return e;
        // The packed filter is the general family's (the depthwise and scatter ones read w_f).
        if (!(e = need(!p.pack || std::string(f.name) == "conv_bwd_data_host",
                       "pack = 1 is conv_bwd_data_host's (family " + std::string(f.name) + ")")).empty()) return e;
        if (p.cols) {
            if (!(e = need(std::string(f.name) == "conv_bwd_data_host" && !p.pack && c.layout == Layout::NCHW &&
                               c.stride == StrideClass::S1,
                           "cols = 1: conv_bwd_data_host, pack = 0, layout nchw, stride class s1")).empty()) return e;
        }
        if (!(e = need(!p.flat || (p.cols && c.filter == FilterClass::K1), "flat = 1 needs cols = 1 and class k1")).empty())
            return e;
        if (p.group_lanes) {
            if (!(e = need(p.pack && std::string(f.name) == "conv_bwd_data_host",
                           "group_lanes > 0: conv_bwd_data_host with pack = 1")).empty()) return e;
            if (!(e = need(p.group_lanes < p.vec && p.vec % p.group_lanes == 0,
                           "group_lanes < vec, a divisor of it (a vector holds whole groups)")).empty()) return e;
        }
    } else if (f.knobs == &BwdWeightGroupedHostParams::knobs) {
        const auto p = to_params<BwdWeightGroupedHostParams>(vals);
        const int taps = class_filter_size(c.filter);
        if (!(e = need(c.layout == Layout::NCHW, "layout nchw (vectors along a plane's columns)")).empty()) return e;
        if (!(e = need(taps > 0, "a class filter (k1, k3, k5: every tap in the register tile, unrolled)")).empty()) return e;
        if (!(e = need(p.tile_k * taps * taps <= budget(p.vec), acc_rule("tile_k * R * S", p.vec))).empty()) return e;
    } else if (f.kind == ScheduleKind::Host && f.groups == GroupClass::Narrow) {
        const auto p = to_params<BwdWeightNarrowHostParams>(vals);
        if (p.k_vectors) {
            const int cf = class_filter_size(c.filter);
            if (!(e = need(!p.full_taps || cf > 0, "full_taps = 1: a class filter (k1, k3, k5: its rows unrolled)")).empty())
                return e;
            if (!(e = need(cf == 0 || p.tile_s == 3,
                           "tile_s: filter class any only (a class filter's row is the tile's taps)")).empty()) return e;
            const KVectorTaps t = k_vector_taps(p, c.filter);
            if (!(e = need(p.tile_k * p.tile_cg * t.row * t.rows <= budget(p.vec),
                           acc_rule("k_vectors = 1: tile_k * tile_cg * taps (the class filter's row or, full_taps, all of it; else tile_s)", p.vec))).empty())
                return e;
        } else {
            if (!(e = need(p.tile_s == 3 && !p.full_taps, "tile_s, full_taps: k_vectors = 1 only")).empty()) return e;
            if (!(e = need(p.tile_k * p.tile_cg <= budget(p.vec), acc_rule("tile_k * tile_cg", p.vec))).empty()) return e;
        }
    } else if (f.kind == ScheduleKind::Host && f.groups == GroupClass::Depthwise) {
        const auto p = to_params<BwdWeightDwHostParams>(vals);
        const int taps = std::max(class_filter_size(c.filter), 1);  // a class filter's taps are unrolled
        if (!(e = need(p.tile_c * taps <= budget(p.vec), acc_rule("tile_c * taps (3 for k3, 5 for k5)", p.vec))).empty()) return e;
        if (!(e = need(p.tile_k * taps <= budget(p.vec), acc_rule("tile_k * taps (3 for k3, 5 for k5)", p.vec))).empty()) return e;
        if (p.full_taps) {
            if (!(e = need(c.filter != FilterClass::Any,
                           "full_taps = 1: a class filter (k3, k5: its taps are unrolled)")).empty()) return e;
            const int tile = p.along_channels(c.layout) ? p.tile_c : p.tile_k;
            if (!(e = need(tile * taps * taps <= budget(p.vec),
                           acc_rule("full_taps = 1: tile_c (nhwc; nchw with channel_vectors = 1) or tile_k (nchw) * R * S", p.vec))).empty())
                return e;
        }
        if (!(e = need(!p.channel_vectors || (c.layout == Layout::NCHW && p.full_taps && !p.dy_in_place),
                       "channel_vectors = 1: layout nchw, full_taps = 1, dy_in_place = 0")).empty())
            return e;
        if (!(e = need(!p.direct || (p.full_taps && p.along_channels(c.layout)),
                       "direct = 1: full_taps = 1 along the channels (nhwc; nchw with channel_vectors = 1)")).empty())
            return e;
        if (!(e = need(p.full_taps || (p.tile_q == 1 && !p.x_in_place), "tile_q > 1 and x_in_place = 1 need full_taps = 1")).empty())
            return e;
        if (!(e = need(p.along_channels(c.layout) || !p.x_in_place, "x_in_place = 1: layout nhwc, or nchw with channel_vectors = 1")).empty())
            return e;
        if (!(e = need(!p.dy_in_place || (c.layout == Layout::NCHW && p.full_taps), "dy_in_place = 1: layout nchw and full_taps = 1")).empty())
            return e;
    } else if (f.kind == ScheduleKind::Host) {
        const auto p = to_params<BwdWeightHostParams>(vals);
        // k_lanes > 1 with a class filter: the row's S taps are in the tile too (full_taps: all R x S).
        const int row_taps = p.k_lanes > 1 ? std::max(1, class_filter_size(c.filter)) : 1;
        const int taps = p.full_taps ? row_taps * row_taps : row_taps;
        if (!(e = need(p.tile_c * p.tile_k / std::max(1, p.k_lanes) * taps <= budget(p.vec),
                       acc_rule("tile_c * tile_k / k_lanes (x S with k_lanes > 1, x R x S with full_taps)", p.vec))).empty())
            return e;
        if (!(e = need(!p.full_taps || (p.k_lanes > 1 && class_filter_size(c.filter) > 0),
                       "full_taps = 1 needs k_lanes > 1 and a class filter (k1, k3, k5)")).empty())
            return e;
        if (!(e = need(!p.skip_pad || p.k_lanes == 1, "skip_pad = 1 needs k_lanes = 1 (taps in the tile share its columns)")).empty())
            return e;
        if (!(e = need(!p.group_tile || p.tile_k > 1, "group_tile=1 needs tile_k > 1 (a tile of one k is in one group)")).empty())
            return e;
        if (!(e = need(p.k_lanes == 1 || (p.tile_k % p.k_lanes == 0 && p.channel_lanes() >= 4 && !p.direct),
                       "k_lanes > 1: a divisor of tile_k, vec / k_lanes >= 4 channel lanes, direct = 0")).empty())
            return e;
        if (!(e = need(!p.direct || (p.k_tasks == 4 && !p.c_outer),
                       "direct = 1: k_tasks and c_outer at their defaults (4, 0; a direct kernel's tasks are channel tiles)")).empty())
            return e;
    } else if (calls_fragments(f)) {
        // Knobs both families' tables have, by name.
        const struct { int frag, tile_m, tile_n; } p{vals.get("frag"), vals.get("tile_m"), vals.get("tile_n")};
        if (!(e = need(c.dtype != DType::F32, "matrix fragments take f16 or bf16 (f32 has no matrix instruction here)")).empty()) return e;
        if (!(e = need(f.dir == Direction::BwdWeight || c.stride != StrideClass::Any,
                       "matrix-fragment backward-data: stride class s1 or s2 (a compile-time stride: its phases are "
                       "a block's)")).empty()) return e;
        if (!(e = need(p.frag == 0 || c.device != Device::AmdGpu,
                       "frag=1 (NVIDIA's m16n8k16) is for cuda and opencl (amdgpu: frag=0, MFMA)")).empty()) return e;
        if (!(e = need(p.frag == 1 || c.device != Device::Cuda,
                       "cuda: frag=1 (mma.sync.m16n8k16; the 32x32x8 layout has no CUDA instruction)")).empty()) return e;
        if (!(e = need(p.frag == 1 || p.tile_m * p.tile_n <= 4,
                       "frag=0: tile_m * tile_n <= 4 fragments (16 f32 accumulators each: 64 VGPRs)")).empty()) return e;
        if (!(e = need(p.frag == 1 || c.filter == FilterClass::K1 || f.dir == Direction::BwdWeight || p.tile_m * p.tile_n <= 2,
                       "frag=0 backward-data over filter taps (k3, any): tile_m * tile_n <= 2 fragments (4 took 132 VGPRs on "
                       "gfx90a in f16: 3 waves per SIMD)")).empty())
            return e;
        if (!(e = need(p.frag == 0 || p.tile_m * p.tile_n <= 32,
                       "frag=1: tile_m * tile_n <= 32 fragments (4 f32 accumulators each: 128 registers)")).empty()) return e;
        // The block's tile (every warp's fragments, f32 in shared memory) and its staged chunks (two
        // with ahead): the shared-memory checks below.
        const bool data = f.dir == Direction::BwdData;
        const frag::Shape fs = frag::shape(p.frag);
        int bm, bn, chunks = 1;
        if (data) {
            const auto d = to_params<BwdDataMmaGpuParams>(vals);
            bm = data_block_columns(d), bn = fs.N * data_block_frags_n(d);
            if (data_mma_copies_ahead(d)) chunks = 2;
        } else {
            const auto w = to_params<BwdWeightMmaGpuParams>(vals);
            bm = weight_block_rows(w), bn = fs.N * weight_block_frags_n(w);
        }
        if (vals.get("stage") > 0) {
            if (!(e = need(vals.get("vec") == 4, std::string("stage > 0 needs vec=4 (a lane's ") + (data ? "channel" : "pixel") +
                                                     " groups read from the staged chunk as vectors)")).empty()) return e;
            if (!(e = need(c.device == Device::Cuda, "stage > 0 is for cuda (not yet checked on OpenCL)")).empty()) return e;
            if (data && !(e = need(c.stride == StrideClass::S1 && c.layout == Layout::NHWC,
                                   "backward-data stage > 0: NHWC, stride class s1")).empty())
                return e;
            // Shared memory: the block's f32 accumulators and a chunk of both operands (fragment-K
            // pixels (backward-weight) or channels (backward-data) a k-block, 2 bytes each), within
            // the 48 KiB a launch gets without opting in.
            const int bytes = bm * bn * 4 + chunks * vals.get("stage") * fs.K * (bm + bn) * 2;
            if (!(e = need(bytes <= 48 * 1024, "stage > 0: block accumulators + chunk <= 48 KiB of shared memory (" +
                                                   std::to_string(bytes) + " bytes)")).empty()) return e;
        }
        if (f.dir == Direction::BwdWeight && vals.get("copy_groups"))
            if (!(e = need(vals.get("stage") == 0 && vals.get("vec") == 4 && c.layout == Layout::NHWC,
                           "copy_groups = 1 needs stage = 0, vec = 4 and layout nhwc (it reads the NHWC tensors' channel "
                           "groups for the per-call copies)")).empty()) return e;
        if (vals.get("unroll") > 1) {
            if (!(e = need(vals.get("stage") == 0, "unroll > 1 needs stage = 0 (the staged chunk's k-blocks are unrolled already)")).empty()) return e;
            if (!(e = need(vals.get("vec") == 4, "unroll > 1 needs vec = 4 (only the vector lanes' loop is split by it)")).empty()) return e;
        }
        if (f.dir == Direction::BwdData && vals.get("ahead"))
            if (!(e = need(vals.get("stage") > 0, "ahead = 1 needs stage > 0 (it copies staged chunks ahead)")).empty()) return e;
        if (vals.get("warps_m") * vals.get("warps_n") > 1 && vals.get("stage") == 0) {
            // Stage 0: the block's warps load their operands themselves, the same k-blocks at once,
            // so that a warp's neighbours find them in L1; the block's fragments (f32) in shared
            // memory within 48 KiB.
            if (!(e = need(vals.get("vec") == 4, "warps_m, warps_n > 1 with stage = 0 need vec = 4")).empty()) return e;
            if (!(e = need(c.device == Device::Cuda || vals.get("warps_m") * vals.get("warps_n") <= kMaxOpenclFragmentWaves,
                           "warps_m x warps_n <= " + std::to_string(kMaxOpenclFragmentWaves) +
                               " on opencl and amdgpu (the emulated fragments' scratch)")).empty())
                return e;
            const int bytes = bm * bn * 4;
            if (!(e = need(bytes <= 48 * 1024, "warps_m x warps_n warps' fragments <= 48 KiB of shared memory (" +
                                                   std::to_string(bytes) + " bytes)")).empty()) return e;
        }
    } else if (f.knobs == &BwdDataStagedGpuParams::knobs) {
        const auto p = to_params<BwdDataStagedGpuParams>(vals);
        if (!(e = need(c.stride != StrideClass::Any && c.dtype == DType::F32, "staged backward-data: stride s1 or s2, dtype f32")).empty()) return e;
        if (!(e = need(p.tile_c * p.tile_x <= 64, "tile_c * tile_x <= 64 accumulators")).empty()) return e;
        if (!(e = need((p.threads_c * p.threads_x) % 64 == 0 && p.threads_c * p.threads_x <= 1024,
                       "threads_c * threads_x a multiple of 64 (an AMD wave), at most 1024")).empty()) return e;
        // Shared memory: the block's accumulators and a chunk of both operands, within the 48 KiB a
        // launch gets without opting in.
        const int bc = data_block_channels(p);
        const int bytes = 4 * (data_block_pixels(p) * bc + p.block_k * (staged_dy_row_words(p) + bc));
        if (!(e = need(bytes <= 48 * 1024, "block accumulators + chunk <= 48 KiB of shared memory (" +
                                               std::to_string(bytes) + " bytes)")).empty()) return e;
        if (amd && !(e = need(p.tile_c * p.tile_x <= 32, "AMD: tile_c * tile_x <= 32 (4 waves per SIMD)")).empty()) return e;
        if (p.winograd) {
            if (!(e = winograd_class_rule(c, p.winograd)).empty()) return e;
            if (!(e = need(!p.fold_images, "winograd > 0: fold_images = 0 (its tiles span the images already)")).empty()) return e;
            if (!(e = need(p.skip_pad, "winograd > 0: skip_pad = 1, the default (no filter taps to skip: one GEMM per transform point)")).empty())
                return e;
        }
    } else if (f.knobs == &BwdWeightStagedGpuParams::knobs) {
        const auto p = to_params<BwdWeightStagedGpuParams>(vals);
        if (!(e = need(c.dtype == DType::F32, "staged backward-weight: dtype f32")).empty()) return e;
        if (!(e = need(p.tile_c * p.tile_k <= 64, "tile_c * tile_k <= 64 accumulators")).empty()) return e;
        if (!(e = need((p.threads_c * p.threads_k) % 64 == 0 && p.threads_c * p.threads_k <= 1024,
                       "threads_c * threads_k a multiple of 64 (an AMD wave), at most 1024")).empty()) return e;
        const int bytes = weight_staged_shared_bytes(p);
        if (!(e = need(bytes <= 48 * 1024, "block accumulators + chunk <= 48 KiB of shared memory (" +
                                               std::to_string(bytes) + " bytes)")).empty()) return e;
        if (amd && !(e = need(p.tile_c * p.tile_k <= 32, "AMD: tile_c * tile_k <= 32 (4 waves per SIMD)")).empty()) return e;
        if (p.winograd) {
            if (!(e = winograd_class_rule(c, p.winograd)).empty()) return e;
            if (!(e = need(p.skip_pad, "winograd > 0: skip_pad = 1, the default (no filter taps to skip: one GEMM per transform point)")).empty())
                return e;
        }
    } else if (f.dir == Direction::BwdData) {
        const auto p = to_params<BwdDataGpuParams>(vals);
        if (!(e = need(p.tile_c * p.tile_x <= 64, "tile_c * tile_x <= 64 accumulators")).empty()) return e;
        if (!(e = need((p.threads_c * p.threads_x) % 64 == 0 && p.threads_c * p.threads_x <= 1024,
                       "threads_c * threads_x a multiple of 64 (an AMD wave), at most 1024")).empty()) return e;
        if (!(e = need(p.vec == 1 || p.stage == 1 || p.stage == 2, "vec=4 needs stage 1 or 2 (w's staged copy)")).empty()) return e;
        if (!(e = need(p.vec == 1 || p.tile_c % p.vec == 0, "vec=4 needs tile_c a multiple of 4")).empty()) return e;
        if (!(e = need(p.stage != 3 || c.layout == Layout::NCHW, "stage=3 (a padded copy in the input's layout) is for nchw")).empty()) return e;
        if (!(e = need(p.tap_chunk == 0 || (c.filter == FilterClass::Any && c.stride != StrideClass::Any),
                       "tap_chunk needs filter any and stride s1|s2 (compile-time filters unroll all their taps: "
                       "unroll_taps)")).empty()) return e;
        if (!(e = need(p.tap_chunk == 0 || p.unroll_taps == 0, "tap_chunk and unroll_taps are exclusive")).empty()) return e;
        if (!(e = need(p.fuse_rows == 0 || p.narrow == 0,
                       "fuse_rows=1 needs narrow=0 (fused rows leave no column thread idle to move)")).empty()) return e;
        if (p.xvec > 1) {
            if (!(e = need(p.stage == 0, "xvec needs stage=0 (read in place)")).empty()) return e;
            if (!(e = need(c.layout == Layout::NCHW && c.stride == StrideClass::S1, "xvec needs layout nchw, stride s1")).empty()) return e;
            if (!(e = need(p.tile_x % p.xvec == 0, "xvec needs tile_x a multiple of it")).empty()) return e;
            if (!(e = need(c.device != Device::OpenCL || p.tile_x <= 8, "OpenCL C vectors: tile_x <= 8")).empty()) return e;
        }
        if (!(e = need(!(p.vec > 1 && c.device != Device::Cuda && p.tile_c * p.tile_x > 16 && p.tile_x % 4 != 0),
                       "vec=4 with tile_x not a multiple of 4 needs CUDA (OpenCL C has no such register vector)")).empty())
            return e;
        if (!(e = need(p.flat == 0 || (c.stride != StrideClass::S2 && (c.filter == FilterClass::K1 || c.filter == FilterClass::Any)),
                       "flat=1 applies to pointwise stride-1 problems only (stride s1|any, filter k1|any)")).empty())
            return e;
        if (amd && !(e = need(p.tile_c * p.tile_x <= 32, "AMD: tile_c * tile_x <= 32 (4 waves per SIMD)")).empty()) return e;
    } else {
        const auto p = to_params<BwdWeightGpuParams>(vals);
        const int ts = taps_per_thread(p);
        if (!(e = need(p.tile_s == 1 || p.fuse_taps, "tile_s > 1 needs fuse_taps=1")).empty()) return e;
        if (!(e = need(p.tile_r == 1 || (f.groups == GroupClass::Depthwise && p.fuse_taps),
                       "tile_r > 1: the depthwise family, with fuse_taps=1")).empty()) return e;
        if (!(e = need(p.split_threads == 1 || f.groups == GroupClass::Depthwise,
                       "split_threads > 1: the depthwise family")).empty()) return e;
        // (No effect elsewhere: a search would build the same code under another name.)
        if (!(e = need((p.col_lanes == 1 && p.k_lanes == 1) || f.groups == GroupClass::Depthwise,
                       "col_lanes, k_lanes > 1: the depthwise family")).empty()) return e;
        if (!(e = need(p.tile_k * ts * p.tile_r <= 64, "tile_k * tile_s * tile_r <= 64 accumulators")).empty()) return e;
        if (!(e = need(p.tile_c * p.tile_k * ts <= 128 && 3 * p.tile_k * ts <= 128,
                       "tile_c * tile_k * tile_s <= 128 accumulators")).empty()) return e;
        if (!(e = need((p.threads_c * p.threads_k) % 64 == 0 && p.threads_c * p.threads_k <= 1024,
                       "threads_c * threads_k a multiple of 64 (an AMD wave), at most 1024")).empty()) return e;
        if (p.vec > 1) {
            if (!(e = need(p.stage == 1, "vec=4 needs stage=1 (x and dy staged channels innermost)")).empty()) return e;
            if (!(e = need(c.filter != FilterClass::Any,
                           "vec=4 needs a compile-time filter (k1, k3, k5): a column block's x in registers spans "
                           "the filter's width (with filter any Halide finds no constant bound)")).empty())
                return e;
            if (!(e = need(p.tile_c % p.vec == 0 && p.tile_k % p.vec == 0, "vec=4 needs tile_c and tile_k multiples of 4")).empty()) return e;
            if (!(e = need(c.device == Device::Cuda || p.unroll_q <= 4, "vec=4 with unroll_q=7 needs CUDA")).empty()) return e;
        }
        if (amd && !(e = need(p.tile_c * p.tile_k * ts <= 64 && 3 * p.tile_k * ts <= 64,
                              "AMD: tile_c * tile_k * tile_s <= 64 accumulators (VGPR budget)")).empty())
            return e;
    }
    if (f.kind == ScheduleKind::Gpu && f.groups == GroupClass::Narrow && f.dir == Direction::BwdWeight) {
        // The first-layer tile (3 channels x tile_k x tile_s a thread, threads along k and filter
        // rows) needs fuse_taps and no channel vectors.
        const auto p = to_params<BwdWeightGpuParams>(vals);
        if (!(e = need(p.fuse_taps == 1 && p.vec == 1, "narrow: fuse_taps=1, vec=1 (the first-layer tile)")).empty())
            return e;
    }
    if (f.kind == ScheduleKind::Gpu && f.groups == GroupClass::Depthwise) {
        if (f.dir == Direction::BwdData) {
            const auto p = to_params<BwdDataGpuParams>(vals);
            if (!(e = need(p.stage == 0 && p.vec == 1, "depthwise: stage=0, vec=1 (read in place)")).empty()) return e;
        } else {
            const auto p = to_params<BwdWeightGpuParams>(vals);
            if (!(e = need(p.fuse_taps == 1 && p.tile_c == 1 && p.vec == 1,
                           "depthwise: fuse_taps=1, tile_c=1, vec=1 (threads along k; cg has extent 1)")).empty())
                return e;
            if (!(e = need(p.col_lanes > 1 || p.k_lanes == 1, "k_lanes > 1 needs col_lanes > 1")).empty()) return e;
            if (p.col_lanes > 1) {
                if (!(e = need(c.filter != FilterClass::Any && p.stage == 0,
                               "col_lanes > 1: a compile-time filter (its taps are a lane's registers), stage=0 (read in "
                               "place)")).empty())
                    return e;
                if (!(e = need(c.layout == Layout::NCHW ? p.k_lanes == 1 : p.col_lanes * p.k_lanes == kDepthwiseWarpLanes,
                               "col_lanes > 1: NCHW k_lanes 1 (the warp's other lanes along rows), NHWC col_lanes * "
                               "k_lanes = 32 (a warp's loads runs of consecutive channels)")).empty())
                    return e;
                if (!(e = need(p.tile_k == 1 && p.tile_r == 1 && p.tile_s == 1 && p.unroll_q == 1 && p.split_threads == 1,
                               "col_lanes > 1: tile_k, tile_r, tile_s, unroll_q, split_threads 1 (a lane holds every "
                               "tap of one k)")).empty())
                    return e;
            }
            if (!(e = need((p.threads_c * p.threads_k) % (8 * p.split_threads) == 0,
                           "depthwise: threads_c * threads_k / split_threads a multiple of 8 (a thread group's loads "
                           "along k fill 32-byte sectors)")).empty())
                return e;
        }
    }
    // f16 as 16-bit storage (f16_as_bits, generators/conv_problem.h): built for the fragment
    // families, whose operands go to the matrix instruction as bits; the others would convert
    // every load.
    if (c.dtype == DType::F16 && f16_as_bits(c.device) && !calls_fragments(f))
        return "f16 on OpenCL: matrix-fragment families only (16-bit storage; the SIMT kernels are not built)";
    return {};
}

}  // namespace convbwd
