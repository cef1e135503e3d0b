// The two backward algorithms, written once as Halide Funcs. Each returns a named graph:
// everything a schedule may touch, by name (schedules/ never re-derive the algorithm).
#pragma once

#include "Halide.h"
#include "conv_problem.h"

namespace convbwd {

// Storage type of a dtype inside the kernels. bf16 is carried as 16-bit storage and converted
// with integer shifts, so the same Funcs compile for backends without a bf16 type (OpenCL C).
// f16 likewise where set_half_as_bits(true) (the opencl kernels: OpenCL C without cl_khr_fp16,
// PoCL's and NVIDIA's; integer conversion, round to nearest even); else Halide's float16.
// The runtime passes such a kernel's f16 tensors as uint16 (runtime/src/api.cpp).
void set_half_as_bits(bool on);
Halide::Type storage_type(DType t);
Halide::Expr decode(Halide::Expr v, DType t);  // storage -> f32
Halide::Expr encode(Halide::Expr f, DType t);  // f32 -> storage (round to nearest even)

// Extents of the tensors (logical order) and the runtime scalars of every kernel, in the order
// of the kernel signature. Class constants replace some of them (see ClassConsts).
struct ConvArgs {
    Halide::Expr N, C, H, W, K, P, Q, R, S;
    Halide::Expr stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left, groups;
    Halide::Expr alpha, beta;
    // Set for the autoscheduler baselines: indices that only the hand schedules' bounds keep in
    // range are clamped on both sides (an autoscheduler's tiles make bounds inference see more).
    bool clamp_all = false;
    // Set for the GPU autoscheduler baselines: backward-weight's sum over the splits reads the
    // partials from partial, not from the workspace output (the same values): Anderson2021 failed
    // an internal check (LoopNest.cpp, producer_store_instances > 0) on a pipeline output that
    // another stage consumes. (Adams2019 on the host keeps the workspace: reading partial made its
    // search of a 5x5 layer run past 10 minutes.)
    bool sum_from_partial = false;
    // Backward-weight: x's bounds tests marked likely (as Halide's BoundaryConditions do), so that
    // a loop reading x in place is partitioned into its border iterations and a steady state with
    // neither the select nor the clamps. Set by schedules that read x in place over whole planes
    // (the host depthwise family's full_taps = 1, which reads x in place or stages it per task);
    // others keep plain tests, and their code.
    bool likely_bounds = false;
    // Backward-weight in one split whose sums dw reads directly (conv_bwd_weight_host's direct = 1):
    // the workspace output is left empty (the runtime passes it with no splits) and never read.
    bool weight_direct = false;
    // Backward-weight over rows (no image splits): the reduction runs only over the terms whose x
    // lies inside the image (a where on the pure taps: a row's column loop trimmed per tap, a row of
    // padding skipped), not over x's zero border (conv_bwd_weight_host's skip_pad = 1).
    bool weight_skip_pad = false;
    // Backward-data, a 1x1 filter at stride 1, column tiles of this many columns computed whole
    // (conv_bwd_data_host's cols = 1; 0: off): dy's column clamped to the row, min(likely(q), Q - 1),
    // so a row's last tile reads valid columns past the row's end (never stored) and its
    // accumulators keep constant indices; the clamp marked likely is partitioned out of the other
    // tiles. Not where beta = 0 and a row holds a tile (W >= this): there the schedule shifts a
    // row's last tile inwards, every column it reads lies in the row, and the clamp (a select on
    // that condition, which the schedule's branch for it folds) is left out.
    int data_whole_columns = 0;
    // Backward-data: dx's row phase written tY - (tY / sh) * sh instead of tY % sh (the same value),
    // so that bounds inference gives one output row's acc one phase row: of a Mod by a constant it
    // gives [0, sh) even for a single row, and a schedule computing acc per output row computed
    // every phase's row (at stride 2 twice the work: host stride-2 layers 1.4-1.7x without). GPU
    // schedules unroll the phases over the [0, sh) that % gives, so only the host sets it.
    bool data_row_phase = false;
    // Backward-weight with image splits (column lanes): the reduction's columns run to a multiple of
    // this (0: exactly Q), dy zero past Q (a select, which a schedule stages), x zero past W (its
    // border select; not for a 1x1 class filter, whose x is read plainly), so vectors of lanes along
    // a row never need a masked tail.
    int weight_round_columns = 0;
    // Backward-weight with image splits: x_f (with its zero border) and dy_f (with its zeros past Q)
    // defined as copies with the border written apart (algorithms.cpp, define_copy_with_border), not
    // through a border select whose clamped index gathers. A schedule setting this computes both
    // (with weight_dy_in_place, x only).
    bool weight_copy_planes = false;
    // With weight_copy_planes: dy_f reads dy in place (no copy, rows not rounded up; the depthwise
    // host family's dy_in_place knob, whose kernels the dispatcher takes only for whole-vector rows).
    bool weight_dy_in_place = false;
    // Backward-data with a packed filter (w_tile > 0), groups of exactly this many channels and k
    // (conv_bwd_data_host's group_lanes; the dispatcher's condition: c / groups = k / groups = it,
    // groups a multiple of w_tile / it): a tile's lanes hold w_tile / data_group_lanes whole groups
    // in channel order, each lane reading its own group's dy value. dy_g then keeps the tile's groups
    // side by side, dy_g(gs, kin, q, p, gt, n) (group gt * w_tile / data_group_lanes + gs), so a
    // vector's values at one k are one dense load and a shuffle. 0: a tile lies inside one group.
    int data_group_lanes = 0;
    // Backward-data, stride 1 and 2 (the host's NCHW depthwise tiles): dy_f defined as a copy with
    // its zero border written apart (define_copy_with_border) over the region acc reads when dx's
    // columns run to a multiple of this (at stride 2 also from up to this many columns left of x = 0:
    // tiles aligned to x + pad_left). 0: dy_f's border select. A schedule setting it computes dy_f.
    int data_copy_dy_columns = 0;
    // Backward-data: the filter buffer's channel stride (w's dim 2), for a schedule to specialise on
    // (the NCHW packed filter copy: 1 for a dense 1x1 filter, whose channels it then loads as dense
    // vectors instead of one element a lane). Undefined where a generator does not set it.
    Halide::Expr w_channel_stride;
};

// What a (stride class, filter class) pair fixes at compile time; 0 / -1 = runtime.
struct ClassConsts {
    int stride = 0;    // both dims
    int filter = 0;    // R = S
    int dilation = 0;  // both dims
    int pad = -1;      // all sides
};
ClassConsts class_consts(StrideClass sc, FilterClass fc);

// Buffers are indexed in logical order with x (width) innermost: activations (x, y, c, n),
// filters (s, r, cg, k). The layout only changes which dim has stride 1 (see generator_base.h).
struct BwdDataGraph {
    Halide::Func dy_f, w_f;  // f32 views of the inputs; dy_f is zero outside P x Q
    // w_p(ci, k, s, r, co) = w_f(s, r, co * w_tile + ci, k): the filter as acc reads it when
    // define_bwd_data is given a w_tile (GEMM's packed operand): within a tile of w_tile channels,
    // consecutive k are w_tile floats apart, so the inner loop over k streams it. Undefined when
    // w_tile = 0 (acc reads w_f).
    Halide::Func w_p;
    int w_tile = 0;
    // dy_g(kin, q, p, grp, n) = dy_f(q, p, grp * K / groups + kin, n) (with ConvArgs::data_group_lanes,
    // dy_g(gs, kin, q, p, gt, n): the tile's groups side by side): dy as acc reads it when
    // w_tile > 0 (not depthwise), so that a stage of it keeps each group's channels of a pixel
    // together and a group's pixels dense (channels innermost across all groups put a group's
    // pixels K floats apart: ResNeXt's 256-channel layer, 1 KiB, 4 of L1's 64 sets). With one
    // group it is dy_f with channels innermost. Undefined when w_tile = 0 (acc reads dy_f).
    Halide::Func dy_g;
    // dy_g reads dy inside its bounds only (a 1x1 class filter at stride 1: no tap reaches the
    // padding; a row's last tile past Q reads column Q - 1), so a schedule needs no zero border.
    bool dy_g_in_bounds = false;
    // acc(mx, phx, my, phy, c, n): dx at x = sx*mx + phx - pad_left (likewise y), one dense
    // stride-1 correlation per stride phase. Update loops: r.x = k within the group,
    // r.y = tap index along x within the phase, r.z = along y.
    Halide::Func acc;
    Halide::Func dx;   // dx(x, y, c, n), f32, gathered from the phases; empty phases give 0
    Halide::Func out;  // alpha * dx + beta * prev, encoded: the pipeline's output
    Halide::Var x{"x"}, y{"y"}, c{"c"}, n{"n"}, mx{"mx"}, my{"my"}, phx{"phx"}, phy{"phy"};
    Halide::RDom r;
    int sx = 0, sy = 0;  // compile-time strides (0 = runtime)
    Halide::Expr beta;   // schedules specialise on beta == 0 so that prev is never read
};

// `out` is the (undefined) pipeline output Func that the algorithm defines.
// gc == Depthwise: C / G = K / G = 1 known at compile time (channel c reads dy channel c and
// filter k = c), so the channel index math folds away and channels vectorise densely.
BwdDataGraph define_bwd_data(Halide::Func dy, Halide::Func w, Halide::Func prev, Halide::Func out, const ConvArgs &a,
                             DType t, StrideClass sc, FilterClass fc, GroupClass gc = GroupClass::Any,
                             int w_tile = 0);

// Backward-data as the implicit GEMM dx[pixel, c] = sum_{tap, k} dy[(pixel + pad - tap) / stride, k]
// w[tap, k, c] on matrix fragments of kind frag_kind (generators/fragments.h), at a compile-time
// stride (class s1 or s2): the same arithmetic as define_bwd_data's acc, with the k reduction in
// the blocks a fragment operation takes at once and the filter's taps around it (one tap for the
// pointwise class). Pixels are a row's columns of one stride phase (x = stride * mx + ph); rows,
// phases and images stay separate dims, so which taps reach a pixel is the same for every lane
// of a block. Operands past the tensors (padding, k and channel tails) read as zero: no guard
// around a fragment call.
struct BwdDataMmaGraph {
    // acc(i, l, mt, ct, ph, y, n): element i of lane l's part of the fragment (mt, ct) of phase ph
    // of row y of image n (fragments of M phase columns mx x N channels, generators/fragments.h).
    // Update (all elements at once, frag::mma): kb.x = the k-block, kb.y / kb.z = the filter tap
    // along x / y.
    Halide::Func acc;
    Halide::Func res;  // res = acc: the stage a schedule stores per block (acc lives per lane)
    Halide::Func out;  // alpha * dx + beta * prev, encoded, read from res
    // The operands (storage type), zero past the tensors: a_op(k, q, p, n) = dy at column q, row p;
    // b_op(c, k, s, r) = w at tap (s, r). Inline in every schedule so far (a warp staging them per
    // k-block in shared memory measured slower: docs/PERFORMANCE.md, "Matrix fragments on CUDA").
    Halide::Func a_op, b_op;
    // vec=4 (channel groups, generators/fragments.h): the lane's operand groups, a_lane(e, h, mt, kx,
    // s, r, l, ph, y, n) = element e of lane l's channel group of k-block kx in row half h of
    // fragment row mt at tap (s, r), b_lane(e, ct, kx, s, r, l) the same of w, read from wt(k, c, s,
    // r), w copied with k innermost and zero past the tensor. A schedule computes a_lane and b_lane
    // per k-block in registers (vectors along e) and wt at the root.
    Halide::Func a_lane, b_lane, wt;
    // dy_copy (NCHW, vec > 1): dyt(k, q, p, n) = dy with its channels innermost, zero from K to the
    // k-blocks' end, which a_lane reads instead of dy (a plane apart in NCHW, a group's channels
    // would be vec loads). Undefined otherwise. A schedule computes it at the root.
    Halide::Func dyt;
    Halide::Var e{"e"}, h{"h"}, kx{"kx"}, ts{"ts"}, tr{"tr"};
    int vec = 1;
    // stage > 0 (NHWC, stride 1, vec=4): a block of warps_m x warps_n warps holds block_pixels (the
    // caller's: schedules/spaces.h's data_block_columns(), fs.M * tile_m * warps_m) columns of one
    // row (its slots) x fs.N * tile_n * warps_n channels, and the reduction runs in chunks of `stage`
    // k-blocks of one tap: kb = (k-block in the chunk, warp along the pixels, warp along the
    // channels, chunk, tap s, tap r). as(kk, q, kx, s, r, blk, n) = dy's channel kk of k-block kx
    // (kk < fs.K; zero outside dy and past K) for slot q of pixel block blk (x_blocks a row) at tap
    // (s, r); bs(kk, c, kx, s, r) = wt's the same for input channel c: what a schedule stages per
    // chunk. acc(i, l, mt, ct, cb, blk, n) then holds one
    // warp's tile_m x tile_n fragments of channel block cb (zeroed per warp by the update over
    // `zero`), and res(i, l, mt, ct, 0, blk, n) (mt counting the block's slot fragments from 0, ct
    // the channel fragment) puts each warp's at their place.
    Halide::Func as, bs;
    Halide::RDom zero;
    int stage = 0, block_pixels = 0;
    bool ahead = false;  // stage > 0: chunk w + 1 copied before chunk w runs (the staged Funcs slide)
    Halide::Expr x_blocks;
    Halide::Var i{"i"}, l{"l"}, mt{"mt"}, ct{"ct"}, ph{"ph"}, x{"x"}, y{"y"}, c{"c"}, n{"n"}, cb{"cb"};
    Halide::RDom kb;
    Halide::Expr beta;
    int sx = 1;  // the stride (both dims)
};
BwdDataMmaGraph define_bwd_data_mma(Halide::Func dy, Halide::Func w, Halide::Func prev, Halide::Func out,
                                    const ConvArgs &a, DType t, StrideClass sc, FilterClass fc, int frag_kind,
                                    int vec = 1, bool dy_copy = false, int stage = 0, int tile_m = 1,
                                    int tile_n = 1, int warps_m = 1, int warps_n = 1, int block_pixels = 0,
                                    bool ahead = false, int unroll = 1);

// Backward-data at stride 1 as an implicit GEMM staged per block (conv_bwd_data_staged_gpu):
// dx[pixel, c] = sum over taps (s, r) and k of dy[pixel shifted by the tap, k] w[s, r, c, k], with
// a plane's pixels flattened (pixel = y * W + x, so rows of 17 or 35 columns fill whole tiles).
// At stride 2 the same per stride phase: a phase's pixels (every other column and row of dx) form
// a plane whose taps are a stride-1 filter over dy; the phases' tiles follow one another along pb.
// Taps that read only dy's padding for a whole tile are skipped (rc's predicate). fold_images: the
// images' planes follow one another along the tiles (n then has extent 1 and a pixel's image comes
// from tab(2, ...)), so that planes smaller than a tile fill it.
// A block owns bp = tile_x * threads_x pixels (pb: the pixel tile) x bc = tile_c * threads_c channels
// (cb) of image n; thread (xt, ct) owns pixels xt * tile_x + xr and channels ct * tile_c + cr
// (xr < tile_x, cr < tile_c: a thread's pixels and channels are consecutive, so that it can read
// them as vectors, and a warp's lanes consecutive vectors). Per tap and
// chunk of block_k k values (the reduction rc: rc.x = chunk, rc.y = s, rc.z = r):
//   tab(f, j, pb) = block pixel j's column (f = 0) and row (f = 1) in the (phase's) plane;
//   as(kk, j, pb, cb, kcv, sv, rv, n) = dy at block pixel j, tap (sv, rv), k = chunk kcv's kk-th
//     of the block's group (zero outside dy, past the plane and past k);
//   bs(j, kk, pb, cb, kcv, sv, rv, n) = w at block channel j (zero past C and k; pb and n unused),
//     read from wt(c, k, s, r), w copied with the channels innermost;
//   cp(xr, cr, xt, ct, pb, cb, n, kcv, sv, rv) = that chunk's sums (update over kb = kk);
//   partial(xr, cr, xt, ct, pb, cb, n) += cp over rc (in order).
// dxf(pixel, c, n) = partial (a flat copy of dx, by phase at stride 2), then out(x, y, c, n) from
// dxf(y * W + x, c, n) (at stride 2 from its phase's pixel).
// A grouped problem's block lies inside one group (c / groups a multiple of bc, the dispatcher's
// condition: group_channel_tile()), which its first channel names.
struct BwdDataStagedGraph {
    Halide::Func tab, as, bs, wt, cp, partial, dxf, out;
    Halide::Var kk{"kk"}, j{"j"}, pb{"pb"}, cb{"cb"}, kcv{"kcv"}, sv{"sv"}, rv{"rv"};
    Halide::Var xr{"xr"}, cr{"cr"}, xt{"xt"}, ct{"ct"}, pix{"pix"};
    Halide::Var x{"x"}, y{"y"}, c{"c"}, n{"n"};
    Halide::RDom kb, rc;
    Halide::Expr beta;
    // Winograd (define_bwd_data_winograd; wino_m = 0: the direct GEMM above). The GEMM's Funcs keep
    // their names and dims with pixel = tile, n = the transform point e, one tap (sv = rv = 0), wt =
    // the transformed filter; and:
    //   dt(u, v, k, tile) = dy's alpha x alpha input tile of tile (zero outside dy);
    //   vt(k, tile, e) = B^T dt B at point e = ex + alpha * ey (what as reads);
    //   mt(e, c, tile) = dxf(tile, c, e) (a schedule loads a tile's alpha^2 products once);
    //   out(x, y, c, n) = A^T mt A at (x % m, y % m) of x's and y's tile.
    Halide::Func dt, vt, mt;
    Halide::Var u{"u"}, v{"v"}, e{"e"}, tl{"tl"};
    int wino_m = 0, alpha = 0;
};
BwdDataStagedGraph define_bwd_data_staged(Halide::Func dy, Halide::Func w, Halide::Func prev, Halide::Func out,
                                          const ConvArgs &a, DType t, StrideClass sc, FilterClass fc, int tile_x,
                                          int tile_c, int threads_x, int threads_c, int block_k, bool fold_images,
                                          bool skip_pad);

// Backward-data at stride 1 with an r x r filter (r = 3 or 5: the class's) by Winograd F(m x m, r x r)
// (generators/winograd.h), non-fused, as cuDNN's WINOGRAD_NONFUSED: dx is the correlation of dy
// (shifted by r - 1 - pad) with the filter rotated by 180 degrees, per pair of channels. dx's tiles of
// m x m pixels (all images', in order: tile = (n * TH + ty) * TW + tx) read alpha x alpha tiles of dy
// (alpha = m + r - 1); per transform
// point e the products are one GEMM over k, M[e](tile, c) = sum_k V[e](tile, k) U[e](k, c), with V =
// B^T d B and U = G g G^T; dx = A^T M A per tile. The GEMM is the staged one of define_bwd_data_staged
// (same Funcs and dims, BwdDataStagedGraph's notes), so the same schedule runs it.
BwdDataStagedGraph define_bwd_data_winograd(Halide::Func dy, Halide::Func w, Halide::Func prev, Halide::Func out,
                                            const ConvArgs &a, DType t, int m, int r, int tile_x, int tile_c,
                                            int threads_x, int threads_c, int block_k);

struct BwdWeightGraph {
    Halide::Func x_f, dy_f;  // f32 views; x_f is zero outside H x W
    Halide::Func x_in;  // the input x_f reads (for a schedule's wrappers of it, Func::in)
    // x_row(xx, r, c, row) = x_f at row p * stride - pad + r * dilation of image n (r: filter row),
    // dy_row(q, k, row) = dy_f at (p, n), where row = n * P + p: what partial reads (inlined by
    // default).
    Halide::Func x_row, dy_row;
    // partial(s, r, cg, k, sp): the reduction over rows [sp*rows, (sp+1)*rows) of the flattened
    // (n, p) space and every q. rr.x = q, rr.y = row within the split. image_splits (the
    // host's narrow and depthwise families): splits of whole images (the dispatcher makes the
    // split count a divisor of N), rr.x = q, rr.y = p, rr.z = image within the split (x_row,
    // dy_row unused).
    Halide::Func partial;
    Halide::Func ws;   // ws(s, r, cg, k, sp) = partial: the f32 partial sums, a pipeline output
                       // living in the caller's workspace (stage 1 of 2)
    Halide::Func dw;   // dw(s, r, cg, k) = sum of ws over sp in a fixed order (deterministic)
    Halide::Func out;  // alpha * dw + beta * prev, encoded
    Halide::Var s{"s"}, r{"r"}, cg{"cg"}, k{"k"}, sp{"sp"};
    Halide::RDom rr, rsp;
    Halide::Expr rows, splits;  // rows per split, number of splits
    int sx = 0, sy = 0;
    Halide::Expr beta;
};

// k_tile > 1: every tile of k_tile filters starting at a multiple of it lies in one group (the
// dispatcher's condition: k / groups a multiple of k_tile, group_k_tile() in schedules/spaces.h),
// so a filter's group is its tile's, read from the tile's first k: uniform over a register tile
// of k, whose reads of x then load one channel vector for the whole tile.
// max_splits: upper bound on the number of partial sums, a runtime input chosen per problem by
// the dispatcher (runtime/src/registry.cpp, weight_splits). `ws` is the
// (undefined) workspace output Func, `out` the dw output Func; the algorithm defines both.
BwdWeightGraph define_bwd_weight(Halide::Func x, Halide::Func dy, Halide::Func prev, Halide::Func ws, Halide::Func out, const ConvArgs &a,
                                 DType t, StrideClass sc, FilterClass fc, Halide::Expr max_splits,
                                 GroupClass gc = GroupClass::Any, bool image_splits = false, int k_tile = 0);

// Backward-weight as one implicit GEMM per filter tap staged per block (conv_bwd_weight_staged_gpu),
// f32, groups 1, any stride, filter and dilation. Splits as define_bwd_weight's (rows of the N*P
// (n, p) rows per split; the same ws, dw and out). Block (kb, cb) of tap (s, r) and split sp owns
// bk = tile_k * threads_k k and bc = tile_c * threads_c channels; thread (kt, ct) owns k
// kt * tile_k + kr and channels ct * tile_c + cr (kr < tile_k, cr < tile_c: a thread's k and
// channels are consecutive, so that it can read them as vectors). The split's
// pixels are its rows' columns in order, in chunks of block_p (the reduction rc.x = chunk):
//   tab(f, j, sp, kcv) = chunk kcv's pixel j: f = 0 its column q (-1 past the split and N*P), 1 its
//     row p, 2 its image n (clamped into the tensor);
//   as(i, j, kb, cb, s, r, sp, kcv) = dy at chunk kcv's pixel j, k = kb * bk + i (zero past the
//     split, N*P and K; cb, s and r unused);
//   bs(i, j, kb, cb, s, r, sp, kcv) = x at that pixel's tap (s, r), channel cb * bc + i (zero
//     outside x and past C; kb unused). (Both with the same dims: a schedule can copy both in one
//     loop nest.)
//   cp(kr, cr, kt, ct, kb, cb, s, r, sp, kcv) = that chunk's sums (update over pb = j);
//   partial(kr, cr, kt, ct, kb, cb, s, r, sp) += cp over the chunks (in order).
// ws(s, r, c, k, sp) = partial at (c, k)'s block, thread and register.
struct BwdWeightStagedGraph {
    Halide::Func tab, as, bs, cp, partial, ws, dw, out;
    Halide::Var i{"i"}, j{"j"}, kb{"kb"}, cb{"cb"}, kcv{"kcv"};
    Halide::Var kr{"kr"}, cr{"cr"}, kt{"kt"}, ct{"ct"};
    Halide::Var s{"s"}, r{"r"}, cg{"cg"}, k{"k"}, sp{"sp"};
    Halide::RDom pb, rc, rsp;
    Halide::Expr splits, beta;
    int tab_fields = 3;  // tab's fields (Winograd: 1)
    // Winograd (define_bwd_weight_winograd; wino_m = 0: the direct GEMM above). The GEMM's Funcs keep
    // their names and dims with pixel = tile, the tap (s, r) = the transform point (ex, ey), and:
    //   dt(u, v, kx, tl) = dy's m x m tile tl (zero past P x Q), xw(u, v, kx, tl) = x's alpha x alpha
    //   window of it (zero outside x); ut(kx, tl, e) = G dt G^T and vt(kx, tl, e) = B^T xw B at point
    //   e = ex + alpha * ey (what as and bs read); ws and dw hold the points, out = A^T dw A.
    Halide::Func dt, xw, ut, vt;
    Halide::Var u{"u"}, v{"v"}, e{"e"}, tl{"tl"}, kx{"kx"};
    int wino_m = 0, alpha = 0;
};
BwdWeightStagedGraph define_bwd_weight_staged(Halide::Func x, Halide::Func dy, Halide::Func prev, Halide::Func ws,
                                              Halide::Func out, const ConvArgs &a, DType t, StrideClass sc,
                                              FilterClass fc, Halide::Expr max_splits, int tile_c, int tile_k,
                                              int threads_c, int threads_k, int block_p, bool skip_pad);

// Backward-weight at stride 1 with an r x r filter (r = 3 or 5: the class's) by Winograd F(r x r, m x m),
// non-fused: for each pair (k, c), dw is the correlation of x (shifted by -pad) with dy as the filter;
// dy's m x m tiles (all images', tile = (n * TP + tp) * TQ + tq) each read an alpha x alpha window of x
// (alpha = m + r - 1), and
// per transform point e the products are one GEMM over the tiles, M[e](k, c) = sum_tile U[e](tile,
// k) V[e](tile, c), U = G dy_tile G^T, V = B^T x_window B, split over rows of tiles into the workspace
// (ws(ex, ey, c, k, split): alpha x alpha points, weight_partial_taps()); dw = A^T M A. The GEMM is
// define_bwd_weight_staged's (same Funcs and dims), so the same schedule runs it. The splits are
// counted over the N * P rows as the runtime counts them; each covers its share of the tile rows.
BwdWeightStagedGraph define_bwd_weight_winograd(Halide::Func x, Halide::Func dy, Halide::Func prev, Halide::Func ws,
                                                Halide::Func out, const ConvArgs &a, DType t, Halide::Expr max_splits,
                                                int m, int r, int tile_c, int tile_k, int threads_c, int threads_k,
                                                int block_p);

// Backward-weight as one implicit GEMM per filter tap, dw[k, c] = sum over pixels (n, p, q) of
// dy[n, p, q, k] x[n, p * sh - pt + r * dh, q * sw - pl + s * dw, c], on matrix fragments of kind
// frag_kind: A = dy (rows k, the fragment's K = pixels), B = x (K = pixels, columns c). The pixels
// are k-blocks of fragment-K columns of one row (n, p) (mma_weight_kblocks in schedules/spaces.h),
// split into contiguous runs of k-blocks; operands past the tensors (padding, column, channel and
// split tails) read as zero: no guard around a fragment call.
struct BwdWeightMmaGraph {
    // partial(i, l, mt, ct, s, r, sp): element i of lane l's part of fragment (mt, ct) (M = k,
    // N = c) of tap (s, r) over split sp. Update (all elements at once, frag::mma): kb.x = the
    // k-block within the split.
    Halide::Func partial;
    Halide::Func res;  // res = partial: the stage a schedule stores per block
    Halide::Func ws;   // ws(s, r, cg, k, sp) from res: the f32 partial sums (workspace, stage 1 of 2)
    Halide::Func dw;   // dw(s, r, cg, k) = sum of ws over sp in a fixed order
    Halide::Func out;  // alpha * dw + beta * prev, encoded
    // vec=4 (pixel groups, generators/fragments.h's channel-group mapping applied to the pixels, the
    // reduction here): a lane's operand elements of one row (A) / column (B) are 4 consecutive
    // columns of one row (n, p), loaded as one 8-byte vector from copies with the columns innermost:
    // dyt(q, k, p, n) = dy, and xs = x at tap column s (xs(q, c, s, y, n); a 1x1 filter's xs(q, c,
    // p, n) takes output row p's x row), both zero past Q, rows padded to whole k-blocks. a_lane(e,
    // h, mt, kx, l, sp) is element e of lane l's group of k-block kx in row half h of fragment row
    // mt (zero past the split's last k-block), b_lane(e, ct, kx, l, s, r, sp) the same of x. A
    // schedule computes a_lane and b_lane per k-block in registers (vectors along e), the copies at
    // the root.
    // kinfo(kx, sp) = {column block, row, image} of k-block kx of split sp (the schedule: a table).
    Halide::Func a_lane, b_lane, dyt, xs, kinfo;
    // copy_groups: the copies through dyg(v, q, g, p, n) = dyt(q, 8 g + v, p, n) and xg(v, q, g, s, y,
    // n) = xs(q, 8 g + v, s, y, n) (xs's dims after q; 1x1: (v, q, g, p, n)), channel groups the
    // schedule loads in place as vectors (along v) and writes as columns; gv is their v.
    Halide::Func dyg, xg;
    Halide::Var gv{"gv"};
    Halide::Expr k_channels, c_channels;  // K and C: the copies' channel extents (multiples of 8 with copy_groups)
    // stage > 0 (with vec=4): the reduction in chunks of `stage` k-blocks: cp(i, l, mt, ct, s, r,
    // sp, kcv) = chunk kcv's sums (update over kb, the k-block in the chunk: kcv * stage + kb.x),
    // and partial += cp over kc (the chunks, in order). as(j, v, g, kx, sp) and bs(j, v, g, kx, s,
    // r, sp) hold column j of k-block kx's row of dy and of x at the tap, channel 8 g + v (zero
    // past Q, the split, the image, the channels), what a schedule stages per chunk (pixels
    // innermost); a_lane and b_lane read them (no dyt, xs, kinfo).
    Halide::Func as, bs, cp;
    Halide::RDom kc;
    Halide::Var kcv{"kcv"};
    Halide::Var e{"e"}, h{"h"}, kx{"kx"};
    int vec = 1, stage = 0;
    Halide::Var i{"i"}, l{"l"}, mt{"mt"}, ct{"ct"}, s{"s"}, r{"r"}, cg{"cg"}, k{"k"}, sp{"sp"};
    Halide::RDom kb, rsp;
    Halide::Expr splits;
    Halide::Expr beta;
};
BwdWeightMmaGraph define_bwd_weight_mma(Halide::Func x, Halide::Func dy, Halide::Func prev, Halide::Func ws,
                                        Halide::Func out, const ConvArgs &a, DType t, StrideClass sc, FilterClass fc,
                                        Halide::Expr max_splits, int frag_kind, int vec = 1, int stage = 0,
                                        int unroll = 1, bool copy_groups = false);

}  // namespace convbwd
