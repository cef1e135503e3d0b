// Host-CPU schedules (x86-64 AVX2/AVX-512, any Halide CPU target).
#include "schedules.h"

using namespace Halide;

namespace convbwd {

// Pixels x channels of work per parallel task in the depthwise schedules: a task of one channel of a
// 7x7 or 14x14 plane was ~100 ns of work against the thread pool's hand-off (the pool's mutex and
// the scheduler were half of a call on MobileNet's 960-channel 7x7 layers, both directions).
constexpr int kTaskPixels = 2048;
// Columns of a block transposed in registers (NCHW copied channels innermost): 8 x 16 lanes = 8 zmm.
constexpr int kTransposeColumns = 8;
// Tasks a split at most where a task copies its channels' planes (NCHW depthwise backward-weight):
// fewer, longer tasks of contiguous channels (the pool's hand-off and the task's buffers once each).
constexpr int kDwPlaneTasks = 8;
// Tasks a grouped layer's direct backward-weight kernel with group_tile has per channel tile, at most
// (blocks of whole groups; x staged per task).
constexpr int kDirectGroupTasks = 16;
// Tasks (blocks of k tiles) of the direct backward-weight kernel on an ungrouped layer of one channel
// tile, at most: with tasks of channel tiles alone such a layer ran on one thread (GoogLeNet's 5x5
// layers of 16-32 channels: 1.2-1.8x on 2 cores). Each block stages the tile's x itself; with two
// channel tiles, blocks of k measured 0.85-0.9x there (a 3x3 layer of 64 channels at 56 x 56, 8 tasks
// for 2 before; docs/PERFORMANCE.md).
constexpr int kDirectKBlocks = 8;
// Output pixels a register tile of the split kernels sums before it adds into the split's partial
// (whole rows, at least one): short rows (7x7, 14x14 layers) do not pay the tile's update every few
// FMAs. NHWC k_lanes tiles take more, their x's and dy's rows staged per block of them.
constexpr int kTilePixels = 64;
// Those NHWC k_lanes tiles' blocks. kTilePixels put a
// tile's update of partial and a block's copy of x (its rows plus the filter's: 4 rows for 2 on
// ResNeXt's 28 x 28 layers) beside every 56 pixels of FMAs: 256 measured 1.2-1.3x on ResNeXt's NHWC
// grouped layers, where NCHW's k_lanes tiles (x transposed per block) lost 0.9x.
constexpr int kNhwcKLanesTilePixels = 256;
// Bytes of dy a block of output rows holds in the narrow kernels along k (k_vectors): every filter
// row and k tile of the block reads them, from L2 (1 MiB a core here); at least kKVectorMinBlocks
// blocks a split, so both cores have tasks on small planes (DCGAN's 32 x 32 was one block).
constexpr int kKVectorBlockBytes = 256 * 1024;
constexpr int kKVectorMinBlocks = 4;
// Buffers computed inside a task (per row, tile or k tile) have their storage hoisted to the task
// (hoist_storage: one allocation of the largest iteration's size): of a dynamic size they are heap
// allocations, and a malloc and free per row put glibc's free (its arena lock) at 13% of a grouped
// 28x28 backward-data call.


// Depthwise backward-data, NHWC, stride 1: no reduction over channels, so the work per output is
// only the taps and the loads dominate. Register tiles of tile_c channel vectors x tile_x columns
// (acc computed per tile, fully unrolled: its accumulators stay in registers across the tap
// loops), w staged once with its channels innermost, and the rows of dy one output row reads
// staged per row with their zero border (no range test or clamp per load in the tap loops).
void schedule_bwd_data_dw_nhwc_s1_host(BwdDataGraph &g, const BwdDataHostParams &p, const ConvArgs &a, FilterClass fc) {
    const int V = p.vec, TC = p.vec * p.tile_c, TX = p.tile_x;
    Var co("co"), ci("ci"), xo("xo"), xi("xi"), yn("yn"), cvo("cvo"), cvi("cvi");
    Var &x = g.x, &y = g.y, &c = g.c, &n = g.n;
    g.out.compute_root();
    for_each_branch(
        g.out, a.C >= TC && a.W >= TX, g.beta,
        [&](Stage s, bool tiled) {
            s.split(c, co, ci, tiled ? TC : 1, TailStrategy::ShiftInwards)
                .split(x, xo, xi, tiled ? TX : 1, TailStrategy::ShiftInwards)
                .reorder(ci, xi, xo, co, y, n)
                .fuse(y, n, yn)
                .parallel(yn);
            if (tiled) s.vectorize(ci, V).unroll(xi);
        },
        a.C % TC == 0 && a.W % TX == 0);
    std::vector<Var> wv = g.w_f.args();  // (s, r, cg, k): the channel is k
    g.w_f.compute_root()
        .reorder_storage(wv[3], wv[0], wv[1], wv[2])
        .reorder(wv[3], wv[0], wv[1], wv[2])
        .vectorize(wv[3], V, TailStrategy::GuardWithIf);
    std::vector<Var> dv = g.dy_f.args();  // (q, p, k, n)
    g.dy_f.compute_at(g.out, yn)
        .reorder_storage(dv[2], dv[0], dv[1], dv[3])
        .reorder(dv[2], dv[0], dv[1], dv[3])
        .vectorize(dv[2], V, TailStrategy::GuardWithIf);
    g.acc.compute_at(g.out, xo).hoist_storage(g.out, yn).reorder_storage(c, g.mx, g.phx, g.my, g.phy, n);
    g.acc.vectorize(c, V, TailStrategy::GuardWithIf).unroll(g.mx);
    g.acc.update()
        .split(c, cvo, cvi, V, TailStrategy::GuardWithIf)
        .reorder(cvi, cvo, g.mx, g.phx, g.r.x, g.r.y, g.r.z, g.my, g.phy, n)
        .vectorize(cvi)
        .unroll(cvo)
        .unroll(g.mx);
    if (fc != FilterClass::Any) g.acc.update().unroll(g.r.y).unroll(g.r.z);  // a class filter's taps
}

namespace {
// NCHW depthwise backward-data's tasks (stride 1 and 2): out's rows in blocks of task_rows and
// columns in vectors of `cols` (xo: the vector loop), tasks (t) of channels with about kTaskPixels
// outputs a row block each (each also allocates its dy planes: per channel, malloc and free were
// part of that half of a call), the row blocks inside, images outside. dy's planes the task reads
// staged per task with their zero border written apart (ConvArgs::data_copy_dy_columns: updates
// only; the copy covers whole planes), columns innermost as dy's, each update's rows in vectors; w
// at the root.
void schedule_dw_nchw_tasks(BwdDataGraph &g, const BwdDataHostParams &p, const ConvArgs &a, int cols, Var xo, Var yi,
                            Var t) {
    const int V = p.vec;
    Var xi("xi"), yo("yo"), co("co"), ci("ci");
    Var &x = g.x, &y = g.y, &c = g.c, &n = g.n;
    Expr channels_per_task = max(1, kTaskPixels / max(1, a.W * min(a.H, p.task_rows)));
    g.out.compute_root();
    for_each_branch(g.out, Halide::Internal::const_true(), g.beta, [&](Stage s, bool) {
        s.split(y, yo, yi, p.task_rows, TailStrategy::GuardWithIf)
            .split(x, xo, xi, cols, TailStrategy::GuardWithIf)
            .split(c, co, ci, channels_per_task, TailStrategy::GuardWithIf)
            .reorder(xi, xo, yi, ci, yo, co, n)
            .vectorize(xi, V)
            .rename(co, t)
            .parallel(t);
    });
    g.dy_f.compute_at(g.out, t);
    for (int i = 0; i < g.dy_f.num_update_definitions(); i++) {
        Stage st = g.dy_f.update(i);
        st.vectorize(RVar(st.get_schedule().rvars()[0].var), V, TailStrategy::GuardWithIf);
    }
    g.w_f.compute_root();
}
}  // namespace

// Depthwise backward-data, NCHW, stride 1: each channel is its own plane, so the vectors run along
// the columns (dense in dy, dx and NCHW's rows) instead of a transposing copy to channels-innermost
// (MobileNet's 144-channel 56x56 layer at batch 1: 0.08 of oneDNN that way). Tasks of (channels,
// row block), images outside them; dy's rows a task reads are staged with their zero border, so the tap loops
// load with no range test; a register tile is tile_x column vectors of one row, the filter's taps
// broadcast.
void schedule_bwd_data_dw_nchw_s1_host(BwdDataGraph &g, const BwdDataHostParams &p, const ConvArgs &a, FilterClass fc) {
    const int V = p.vec, TX = p.vec * p.tile_x;
    Var xo("xo"), yi("yi"), t("t"), mvo("mvo"), mvi("mvi");
    Var &n = g.n;
    schedule_dw_nchw_tasks(g, p, a, TX, xo, yi, t);
    // acc per register tile (constant extent, unrolled: registers), every tap streamed through it;
    // the last tile of a row computes past it (dy_f is zero there), never stored.
    g.acc.compute_at(g.out, xo).hoist_storage(g.out, t).bound_extent(g.mx, TX);
    g.acc.split(g.mx, mvo, mvi, V).vectorize(mvi).unroll(mvo);
    Stage u = g.acc.update();
    u.split(g.mx, mvo, mvi, V).reorder(mvi, mvo, g.r.x, g.r.y, g.r.z, g.phx, g.my, g.phy, n).vectorize(mvi).unroll(mvo);
    if (fc != FilterClass::Any) u.unroll(g.r.y).unroll(g.r.z);  // a class filter's taps
}

// Depthwise backward-data, NCHW, stride 2: vectors along the columns as at stride 1 (tasks of
// channels x row blocks, dy's planes staged per task with their zero border), no transposing
// copies. Per output row, dx is computed in tiles of 2 x tile_x vectors of columns, aligned so
// that x + pad_left is a multiple of the tile at each tile's start: a tile's columns then come
// from tile_x vectors of each of the two column phases (acc, in registers: every tap of the phase
// streamed past them, a class filter's taps unrolled), and each pair of columns takes one value of
// each phase (x = 2 x2 + xp: the unrolled pair's two stride-2 stores become one interleaved dense
// store, which Halide makes only of unguarded stores, so dx is the row rounded up to whole tiles in
// a buffer); out copies the row. The general schedule transposed dy and dx around a
// channels-innermost tile: 2-8 GFLOP/s, 0.10-0.27 of oneDNN on MobileNet-v2's and
// EfficientNet-b0's stride-2 depthwise layers.
void schedule_bwd_data_dw_nchw_s2_host(BwdDataGraph &g, const BwdDataHostParams &p, const ConvArgs &a, FilterClass fc) {
    const int V = p.vec, TX = p.vec * p.tile_x;  // TX: columns of each phase in a tile (2 TX of dx)
    Var xo("xo"), xi("xi"), x2("x2"), xp("xp"), xt("xt"), xv("xv"), yi("yi"), t("t"), mvo("mvo"), mvi("mvi");
    Var &x = g.x, &y = g.y, &c = g.c, &n = g.n;
    schedule_dw_nchw_tasks(g, p, a, V, xo, yi, t);  // out copies dx's row a vector at a time
    // The tile of dx: the generator's (ConvArgs::data_copy_dy_columns, 2 TX), whose dy border it copies.
    const int tile = a.data_copy_dy_columns;
    const Expr pad = a.pad_left;
    g.dx.compute_at(g.out, yi)
        .hoist_storage(g.out, t)
        .align_bounds(x, tile, (tile - pad % tile) % tile)
        .split(x, xo, xi, tile, TailStrategy::RoundUp)
        .split(xi, x2, xp, 2)
        .split(x2, xt, xv, V)
        .reorder(xv, xp, xt, xo, y, c, n)
        .vectorize(xv)
        .unroll(xp)
        .unroll(xt);
    // The tile's both phases: TX columns each, tile_x vectors (constant extent, unrolled: registers).
    g.acc.compute_at(g.dx, xo).bound_extent(g.mx, TX).bound_extent(g.phx, 2);
    g.acc.split(g.mx, mvo, mvi, V).vectorize(mvi).unroll(mvo).unroll(g.phx);
    Stage u = g.acc.update();
    u.split(g.mx, mvo, mvi, V)
        .reorder(mvi, mvo, g.r.x, g.r.y, g.r.z, g.phx, g.my, g.phy, c, n)
        .vectorize(mvi)
        .unroll(mvo)
        .unroll(g.phx);  // each phase's tap table folds to constants
    if (fc != FilterClass::Any) u.unroll(g.r.y).unroll(g.r.z);  // a class filter's taps
}

// Backward-data, host, pack = 1 (the general family). Tasks of (channel tile, row block, image):
// the tile's filter (w_p, packed once, consecutive k contiguous) stays in cache across the task's
// rows, where with tasks of rows (pack = 0) each row streamed the whole filter at a stride of
// C*R*S floats per k (VGG's 512-channel 14x14 layer, one thread: half the samples on those
// loads). dy is staged once with its zero border and k innermost, so the inner loop over k
// reads both operands densely with no range test. Per row, acc holds the tile's channels x the
// row's columns (every stride phase); its update keeps tile_c vectors x tile_x columns of
// accumulators in registers.
void schedule_bwd_data_packed_host(BwdDataGraph &g, const BwdDataHostParams &p, const ConvArgs &a, Layout layout,
                                   FilterClass fc) {
    // The channel tile is the packed filter's (the generator gave define_bwd_data vec * tile_c).
    const int V = p.vec, TC = g.w_tile;
    Var co("co"), ci("ci"), yo("yo"), yi("yi"), t("t"), tn("tn"), mxo("mxo"), mxi("mxi"), cvo("cvo"), cvi("cvi");
    Var &x = g.x, &y = g.y, &c = g.c, &n = g.n;
    // GuardWithIf: tile bases are multiples of TC (w_p's tiles), no element is computed twice
    // (beta != 0 reads dx in place), and C < TC works.
    g.out.compute_root();
    auto tiles = [&](Stage s) {
        s.split(c, co, ci, TC, TailStrategy::GuardWithIf).split(y, yo, yi, p.task_rows, TailStrategy::GuardWithIf);
        if (layout == Layout::NHWC)
            s.reorder(ci, x, yi, co, yo, n).vectorize(ci, V);
        else
            s.reorder(x, ci, yi, co, yo, n).vectorize(x, V, TailStrategy::GuardWithIf);
        s.fuse(co, yo, t).fuse(t, n, tn).parallel(tn);
    };
    tiles(g.out.specialize(g.beta == 0.0f));
    tiles(Stage(g.out));

    // The copy of the filter, two orders. By columns (the default): a task per channel tile, its
    // values k by k. By rows, for 1x1 filters of over kPackRowsMinFloats (past L2): tasks of
    // kPackRows k, every channel tile of a k's row in turn (a tile's values of one k are a run of
    // the row, read in order), so that the reads never stride a row apart (C floats: past a page
    // at C = 1024, where prefetchers stop; column by column, ResNet-50's 2048 x 512 filter took 0.38
    // of a 7x7 layer's call on one thread, by rows NCHW 1x1 layers of 0.9-4 MB filters ran 1.2-2.9x).
    // NCHW's filter (KCRS) has its channels R*S apart: with the stride known to be 1 (a dense 1x1
    // filter) they load as vectors, where each was a gather. (A 3x3 filter's taps unrolled around
    // the channel vector load as dense vectors and shuffles with the stride known, but neither
    // order of that copy held up over ResNet-50's, VGG-16's and Inception-v3's 3x3 layers: 7x7 and
    // 8x8 planes 1.3-1.8x in one A/B, 0.8 in the next, 16x16-32x32 planes 0.7-0.85 in one;
    // docs/PERFORMANCE.md.)
    constexpr int kPackRows = 16;
    constexpr int kPackRowsMinFloats = 1 << 18;
    std::vector<Var> wv = g.w_p.args();  // (ci, k, s, r, co)
    Var ko("ko"), ki("ki");
    auto by_columns = [&](Stage st) { st.vectorize(wv[0], V, TailStrategy::GuardWithIf).parallel(wv[4]); };
    auto by_rows = [&](Stage st) {
        st.split(wv[1], ko, ki, kPackRows, TailStrategy::GuardWithIf)
            .reorder(wv[0], wv[4], wv[2], wv[3], ki, ko)
            .vectorize(wv[0], V, TailStrategy::GuardWithIf)
            .parallel(ko);
    };
    g.w_p.compute_root();
    const int f = class_filter_size(fc);
    Expr big = a.C / a.groups * a.K >= kPackRowsMinFloats;
    if (f == 1 && layout == Layout::NCHW && a.w_channel_stride.defined()) {
        by_rows(g.w_p.specialize(big && a.w_channel_stride == 1));
        by_columns(g.w_p.specialize(a.w_channel_stride == 1));
    } else if (f == 1) {
        by_rows(g.w_p.specialize(big));
    }
    by_columns(Stage(g.w_p));

    // dy staged once for the call (not per task: NCHW's transposing copy, repeated for every
    // channel tile, and a runtime dilation's rows, which no sliding window reuses, cost DeepLab's
    // NCHW layers 0.27 -> 0.06 of oneDNN), channels innermost with its zero border. Read in place
    // (dy_g inline) where NHWC has it k-innermost already and no tap leaves it (dy_g_in_bounds: 1x1
    // at stride 1); the copy was a pass over the largest tensor of layers with few channels
    // (MobileNet-v2's 16 -> 96 112x112 layer: dy 4.8 MB, dx 0.8 MB).
    // Grouped: a group's channels of each pixel together, its pixels dense (dy_g); with group_lanes
    // per task (its channel tile's whole groups over its rows and their border).
    Var pn("pn");
    const int gl = a.data_group_lanes;
    if (gl) {
        // Whole groups side by side (gs, kin, q, p, gt, n): the tile's groups' k of a pixel as one
        // vector of its w_tile values, gs innermost (NHWC: a dense load of dy and a transposing
        // shuffle; the sizes are compile-time). Staged per task (its channel tile's groups, its rows
        // and their border), each row's columns stored along the buffer: staged once for the call
        // before the tasks, a pass over dy a pixel's 64 bytes at a time, it was 0.4 of ResNeXt's
        // 8-channel 28x28 layer; per task 1.0-1.9x over ResNeXt-50's 4- and 8-channel layers
        // (docs/PERFORMANCE.md, "Host: direct backward-weight by blocks of k; grouped backward-data ...").
        std::vector<Var> dv = g.dy_g.args();
        g.dy_g.compute_at(g.out, tn)
            .bound(dv[0], 0, g.w_tile / gl)
            .bound(dv[1], 0, gl)
            .reorder(dv[0], dv[1], dv[2], dv[4], dv[3], dv[5])
            .vectorize(dv[0])
            .vectorize(dv[1]);
    } else if (!(layout == Layout::NHWC && g.dy_g_in_bounds)) {
        std::vector<Var> dv = g.dy_g.args();  // (kin, q, p, grp, n)
        g.dy_g.compute_root()
            .reorder(dv[0], dv[3], dv[1], dv[2], dv[4])
            .vectorize(dv[0], V, TailStrategy::GuardWithIf)
            .fuse(dv[2], dv[4], pn)
            .parallel(pn);
    }

    // acc over whole channel tiles (aligned, constant extent): the last tile computes past C
    // (never stored) instead of guarding every vector of the inner loop.
    g.acc.compute_at(g.out, yi).reorder_storage(c, g.mx, g.phx, g.my, g.phy, n).align_bounds(c, TC).bound_extent(c, TC);
    g.acc.hoist_storage(g.out, tn);  // once per task (kTaskPixels)
    g.acc.split(c, cvo, cvi, V).vectorize(cvi);
    // The row's last column tile computed whole (RoundUp: acc's row grows to a multiple of
    // tile_x; its extra columns read dy's zero border and are never stored) where that adds at
    // most a seventh of the row: guarded, the tail's accumulators lived in memory, a load, an
    // FMA and a store per k (ResNeXt's 28-column rows, tile_x 8: the 4-column tail took a third
    // of the kernel's time; 7- and 14-column 1x1 layers 1.2-1.8x whole), but rounding Inception's
    // 17-column rows up to 24 cost 0.6-0.8x.
    auto tiles_of_row = [&](Stage u, TailStrategy tail) {
        u.split(g.mx, mxo, mxi, p.tile_x, tail).split(c, cvo, cvi, V);
        // Stride > 1: which taps reach a phase is a test per (phase, tap), so the phases go
        // outside the taps and k (the test leaves the k loop, which then updates one phase's
        // tile in registers; inside it, the accumulators lived in memory: DCGAN's 4x4 stride 2 at
        // 0.2 of oneDNN; a class filter's row phase is a runtime test too: ResNet-50's 3x3
        // stride-2 layers 1.2-2x with the phases outside).
        if (g.sx != 1)
            u.reorder(cvi, cvo, mxi, g.r.x, g.r.y, g.r.z, g.phx, mxo, g.my, g.phy, n);
        else
            u.reorder(cvi, cvo, mxi, g.phx, g.r.x, g.r.y, g.r.z, mxo, g.my, g.phy, n);
        // (Every directive for both branches goes before specialize: the specialisation copies the
        // schedule as it stands, so a directive after it reaches the groups > 1 branch alone.)
        if (!gl) u.vectorize(cvi);
        u.unroll(cvo).unroll(mxi);
        if (g.sx > 0) u.unroll(g.phx);
        if (!gl) u.specialize(a.groups == 1);  // one group: the group index math folds away
        // Groups, a class filter at stride 1: a group's k loop is short (ResNeXt: 4-32), and
        // the accumulators, kept in registers only inside the innermost loop, were loaded and
        // stored per tap (every 8 k). Here the taps run unrolled inside k (ResNeXt's 3x3 layers
        // with 8 channels a group: 1.3-2.1x); with one group, k innermost measured faster.
        if (fc != FilterClass::Any && g.sx == 1)
            u.reorder(cvi, cvo, mxi, g.phx, g.r.y, g.r.z, g.r.x, mxo, g.my, g.phy, n).unroll(g.r.y).unroll(g.r.z);
        // group_lanes: a vector of V / gl whole groups, gl lanes each (nested: a group's lanes
        // inner), so each run of gl lanes has one group index (define_bwd_data).
        if (gl) {
            Var h("h"), cl("cl");
            u.split(cvi, h, cl, gl).vectorize(cl).vectorize(h);
        }
    };
    // A phase's row: dx's columns over the stride (the runtime stride where it is one).
    Expr row = g.sx > 0 ? (a.W + g.sx - 1) / g.sx : (a.W + a.stride_w - 1) / a.stride_w;
    Expr added = (p.tile_x - row % p.tile_x) % p.tile_x;
    tiles_of_row(g.acc.update().specialize(added * 7 <= row), TailStrategy::RoundUp);
    tiles_of_row(g.acc.update(), TailStrategy::GuardWithIf);
}

// cols = 1 (NCHW, a 1x1 filter at stride 1): dx = w^T dy per image, a GEMM whose output rows are
// dx's planes. Register tiles of tile_c channels x tile_x vectors of columns sum every k: dy's
// columns loaded as vectors in place, w's tile_c values at each k broadcast (adjacent in KCRS),
// and the tile stored as dense vectors of dx, so neither dy nor dx is transposed (the
// channel-vector schedules copy both across: NCHW 1x1 layers of few k ran 0.16-0.25 of oneDNN).
// Tasks of (channel tile, row, image); flat = 1 (launch-time) gives a dense plane as one row of
// H*W columns, so 7- and 14-column rows fill whole vectors.
//
// Beyond 1x1 (class s1 k3, k5 or any): dy is staged once with its zero border (rows of Q plus the
// border, as the tiles read them), so each tap's columns load as plain vectors shifted by the tap,
// and the taps run inside k: per k, the tile reads R rows of dy and the R x S filter values of its
// channels (adjacent in KCRS). GoogLeNet's 5x5 layers of 16-48 channels, whose channel vectors
// were mostly empty.
void schedule_bwd_data_cols_host(BwdDataGraph &g, const BwdDataHostParams &p, const ConvArgs &a, FilterClass fc) {
    const int V = p.vec, TX = p.cols_tile(), TC = p.tile_c;
    Var co("co"), ci("ci"), xo("xo"), xi("xi"), xvo("xvo"), xvi("xvi"), t("t"), tn("tn");
    Var &x = g.x, &y = g.y, &c = g.c, &n = g.n;
    g.out.compute_root();
    // The channel tiles shift their last tile inwards where C >= TC (constant tiles: no guard per
    // channel inside the k loop; with beta != 0, dx read back in place, only where TC divides C).
    // So do a row's column tiles of a 1x1 filter where beta = 0 and the row holds a tile
    // (ConvArgs::data_whole_columns: dy's columns then read unclamped): computed whole past the
    // row instead, the last tile's clamped column indices were a gather per vector, a third of a
    // 14x14 layer's call for 4 of its 196 columns.
    auto tiles = [&](Stage s, bool shift_c, bool shift_x) {
        s.split(x, xo, xi, TX, shift_x ? TailStrategy::ShiftInwards : TailStrategy::GuardWithIf)
            .split(xi, xvo, xvi, V, TailStrategy::GuardWithIf)
            .split(c, co, ci, TC, shift_c ? TailStrategy::ShiftInwards : TailStrategy::GuardWithIf)
            .reorder(xvi, xvo, ci, xo, co, y, n)
            .vectorize(xvi)
            .unroll(xvo)
            .unroll(ci)
            .fuse(co, y, t)
            .fuse(t, n, tn)
            .parallel(tn);
    };
    if (fc == FilterClass::K1) {  // exactly where define_bwd_data leaves dy's column unclamped
        Expr shift = a.W >= TX && g.beta == 0.0f;
        tiles(g.out.specialize(a.C >= TC && shift), true, true);
        tiles(g.out.specialize(shift), false, true);
    }
    for_each_branch(g.out, a.C >= TC, g.beta, [&](Stage s, bool tiled) { tiles(s, tiled, false); }, a.C % TC == 0);
    // w read in place (inlined w_f): KCRS with a 1x1 filter has a k's channels adjacent already, and
    // a copy of K x C filter values outweighs the FMAs of a 7x7 plane.
    // The tile's sums at out's tile: a constant region, so registers. Where a row's last tile is
    // not shifted inwards it is computed whole (ConvArgs::data_whole_columns: its columns past the
    // row read the row's last; guarded, its accumulators lived in memory, a load and a store per
    // FMA: 7x7 layers, whose 49-column plane is one partial tile, ran 0.12 of oneDNN).
    g.acc.compute_at(g.out, xo).hoist_storage(g.out, tn);
    g.acc.bound_extent(g.mx, TX).bound_storage(c, TC);
    auto tile = [&](Stage st) -> Stage {
        return st.split(g.mx, xvo, xvi, V).vectorize(xvi).unroll(xvo).unroll(c);
    };
    tile(Stage(g.acc));
    if (fc == FilterClass::K1) {
        tile(g.acc.update()).reorder(xvi, xvo, c, g.r.x, g.r.y, g.r.z, g.phx, g.my, g.phy, n);
    } else {
        std::vector<Var> dv = g.dy_f.args();  // (q, p, k, n)
        Var kn("kn");
        g.dy_f.compute_root().vectorize(dv[0], V, TailStrategy::GuardWithIf).fuse(dv[2], dv[3], kn).parallel(kn);
        // A class filter's taps stay a loop too: unrolled (9 taps x the tile's unrolled vectors and
        // channels), one kernel took over 10 minutes to compile.
        tile(g.acc.update()).reorder(xvi, xvo, c, g.r.y, g.r.z, g.r.x, g.phx, g.my, g.phy, n);
    }
    g.acc.update().specialize(a.groups == 1);  // one group: the group index math folds away
}

// Backward-data, host. One output row (n, y) per task; per tile of TC channels, acc computes
// the row of every stride phase; its update keeps tile_c vectors x tile_x columns x stride
// phases of accumulators in registers while k and the taps stream past.
//
// Depthwise (gc): the same tiles; channel c reads dy channel c and filter c, so w is staged with
// its k (= c) innermost, and NCHW's dy is staged channels-innermost too (one transposing copy,
// its zero border materialised), so every load of the inner loop is a dense channel vector.
void schedule_bwd_data_host(BwdDataGraph &g, const BwdDataHostParams &p, const ConvArgs &a, Layout layout,
                            StrideClass sc, FilterClass fc, GroupClass gc) {
    const bool dw = gc == GroupClass::Depthwise;
    if (dw && layout == Layout::NHWC && sc == StrideClass::S1) {
        schedule_bwd_data_dw_nhwc_s1_host(g, p, a, fc);
        return;
    }
    if (dw && layout == Layout::NCHW && sc == StrideClass::S1) {
        schedule_bwd_data_dw_nchw_s1_host(g, p, a, fc);
        return;
    }
    if (dw && layout == Layout::NCHW && sc == StrideClass::S2) {
        schedule_bwd_data_dw_nchw_s2_host(g, p, a, fc);
        return;
    }
    if (p.pack) {  // valid(): the general family's only
        schedule_bwd_data_packed_host(g, p, a, layout, fc);
        return;
    }
    if (p.cols) {  // valid(): the general family's, NCHW, stride class s1
        schedule_bwd_data_cols_host(g, p, a, fc);
        return;
    }
    const int V = p.vec, TC = p.vec * p.tile_c;
    Var co("co"), ci("ci"), yn("yn"), mxo("mxo"), mxi("mxi"), cvo("cvo"), cvi("cvi");
    Var &x = g.x, &y = g.y, &c = g.c, &n = g.n;

    g.out.compute_root();
    // The channel tiles shift their last tile inwards (ShiftInwards: constant-size vectors);
    // with beta != 0 (dx read back in place) only where TC divides C, else one channel at a time.
    for_each_branch(
        g.out, a.C >= TC, g.beta,
        [&](Stage s, bool tiled) {
            s.split(c, co, ci, tiled ? TC : 1, TailStrategy::ShiftInwards);
            if (layout == Layout::NHWC) {
                s.reorder(ci, x, co, y, n);
                if (tiled) s.vectorize(ci, V);
            } else {
                s.reorder(x, ci, co, y, n);
                s.vectorize(x, V, TailStrategy::GuardWithIf);
            }
            s.fuse(y, n, yn).parallel(yn);
        },
        a.C % TC == 0);

    // Filters once, as f32 with channels innermost: dense vector loads for either layout.
    g.w_f.compute_root();
    {
        std::vector<Var> wv = g.w_f.args();  // (s, r, cg, k)
        if (dw)  // the channel is k (cg has extent 1)
            g.w_f.reorder_storage(wv[3], wv[0], wv[1], wv[2]).reorder(wv[3], wv[0], wv[1], wv[2])
                .vectorize(wv[3], V, TailStrategy::GuardWithIf);
        else
            g.w_f.reorder_storage(wv[2], wv[0], wv[1], wv[3]).reorder(wv[2], wv[0], wv[1], wv[3]).parallel(wv[3]);
    }
    if (dw && layout == Layout::NCHW) {
        std::vector<Var> dv = g.dy_f.args();  // (q, p, k, n)
        g.dy_f.compute_root()
            .reorder_storage(dv[2], dv[0], dv[1], dv[3])
            .reorder(dv[2], dv[0], dv[1], dv[3])
            .vectorize(dv[2], V, TailStrategy::GuardWithIf)
            .parallel(dv[3]);
    }

    g.acc.compute_at(g.out, co).hoist_storage(g.out, yn).reorder_storage(c, g.mx, g.phx, g.my, g.phy, n);
    g.acc.split(c, cvo, cvi, V, TailStrategy::GuardWithIf).vectorize(cvi);
    Stage u = g.acc.update();
    u.split(g.mx, mxo, mxi, p.tile_x, TailStrategy::GuardWithIf)
        .split(c, cvo, cvi, V, TailStrategy::GuardWithIf)
        .reorder(cvi, cvo, mxi, g.phx, g.r.x, g.r.y, g.r.z, mxo, g.my, g.phy, n)
        .vectorize(cvi)
        .unroll(cvo)
        .unroll(mxi);
    if (g.sx > 0) u.unroll(g.phx);  // compile-time stride: each phase's tap table folds to constants
    u.specialize(a.groups == 1);    // one group: the group index math folds away
}

// Backward-weight, host. Stage 1 (ws): each split sums its rows of N*P into an f32 partial;
// per output row, every (tap, k tile, c tile) streams the row through tile_k x tile_c vectors
// of accumulators. Stage 2 (dw): the splits are summed in a fixed order (deterministic).
namespace {

// direct = 1 (ConvArgs::weight_direct: one split, dw read from partial, the workspace empty): dw in
// register tiles of tile_c channel vectors x tile_k k at each filter tap, each summing every pixel
// of the problem and blended into dw where it is computed; tasks of channel tiles (a block of several
// tiles a task, the k tiles outside them, put a guard in every tile's inner loop: 0.4x), of blocks of k
// tiles where an ungrouped layer has one channel tile (kDirectKBlocks). No workspace
// copy and no second pass over K x C x R x S: on 7x7 1x1 layers (49 pixels against ~150k filter
// elements) the split kernel's copy and sum were half of a call.
void schedule_weight_direct(BwdWeightGraph &g, const BwdWeightHostParams &p, const ConvArgs &a, Layout layout) {
    const int V = p.vec, TC = p.vec * p.tile_c, TK = p.tile_k;
    Var co("co"), ci("ci"), cvo("cvo"), cvi("cvi"), ko("ko"), ki("ki"), kt("kt"), kr("kr"), kb("kb");
    // Tasks of channel tiles, and with group_tile of blocks of whole groups' k tiles too: a grouped
    // layer's c / groups is one or two channel tiles, and tasks of channel tiles alone were one or
    // two tasks (ResNeXt's 16- and 32-channel groups: one thread, and x staged for every group at
    // once). Each task stages the x it reads (its channel tile of its groups). TK divides k / groups
    // (the dispatcher's condition for group_tile).
    Expr k_tiles = (a.K + TK - 1) / TK;
    Expr tiles_per_task = select(a.groups == 1, k_tiles, max(1, a.K / a.groups / TK) * max(1, a.groups / kDirectGroupTasks));
    // One group of one channel tile (specialised): tasks of blocks of k tiles (kDirectKBlocks).
    Expr k_block = TK * ((k_tiles + kDirectKBlocks - 1) / kDirectKBlocks);
    // NCHW: the taps inside the k tiles, so a tile's (k, c) filter rows (KCYX: a row of taps is one
    // cache line) stay in L1 across the taps' scattered stores, and dy's k tile serves every tap
    // (DCGAN's 4x4 stride-2 layer 1.22x; NHWC's channel vectors store densely: 0.98x there). The
    // register tile (dw, partial) is computed per tap: at the inner of the tap loops.
    const bool taps_inner = layout == Layout::NCHW;
    const Var tile_at = taps_inner ? g.s : kb;
    auto order = [&](Stage st, std::vector<VarOrRVar> outer) {
        std::vector<VarOrRVar> o = {cvi, cvo, ki};
        if (taps_inner) o.insert(o.end(), {g.s, g.r, kb});
        else o.insert(o.end(), {kb, g.s, g.r});
        o.insert(o.end(), outer.begin(), outer.end());
        st.reorder(o);
    };
    g.out.compute_root();
    for_each_branch(g.out, Halide::Internal::const_true(), g.beta, [&](Stage s, bool) {
        s.split(g.cg, co, ci, TC, TailStrategy::GuardWithIf).split(ci, cvo, cvi, V, TailStrategy::GuardWithIf);
        // The register tile's loop is tile_at in every branch (dw and partial are computed there).
        auto tile_loops = [&](Stage st) { st.vectorize(cvi).unroll(cvo).unroll(ki); };
        if (p.group_tile) {  // nested parallel loops (fused, co = t % tiles hid the tile's constant extent)
            s.split(g.k, ko, ki, TK, TailStrategy::GuardWithIf).split(ko, kt, kb, tiles_per_task, TailStrategy::GuardWithIf);
            order(s, {co, kt});
            s.parallel(kt).parallel(co);
            tile_loops(s);
            return;
        }
        Stage one = s.specialize(a.groups == 1 && a.C <= TC);
        one.split(g.k, kt, kr, k_block, TailStrategy::GuardWithIf).split(kr, kb, ki, TK, TailStrategy::GuardWithIf);
        order(one, {co, kt});
        one.parallel(kt);
        tile_loops(one);
        s.split(g.k, kb, ki, TK, TailStrategy::GuardWithIf);
        order(s, {co});
        s.parallel(co);
        tile_loops(s);
    });
    // The tile's sums (dw, and partial's one split) at out's tile: constant regions, so registers.
    auto tile = [&](Stage st) -> Stage {
        return st.split(g.cg, cvo, cvi, V, TailStrategy::GuardWithIf)
            .split(g.k, ko, ki, TK, TailStrategy::GuardWithIf)
            .vectorize(cvi)
            .unroll(cvo)
            .unroll(ki);
    };
    g.dw.compute_at(g.out, tile_at).bound_storage(g.cg, TC).bound_storage(g.k, TK);
    tile(Stage(g.dw));
    tile(g.dw.update());
    g.partial.compute_at(g.out, tile_at).bound_storage(g.cg, TC).bound_storage(g.k, TK);
    tile(Stage(g.partial));
    tile(g.partial.update()).reorder(cvi, cvo, ki, g.rr.x, g.rr.y, ko, g.s, g.r, g.sp);
    g.partial.update().specialize(a.groups == 1);  // one x vector load serves the tile's k
    // x: the task's channels of the rows a tap reads, staged once per task with their zero border,
    // channels innermost (NCHW: transposed here), so the tile loads dense channel vectors with no
    // range test. NHWC 1x1 too: read in place, a tile's pixels lie C * 4 bytes apart, a power of
    // two for most layers, so they fall in a few L1 sets and every k tile reloaded them from L2
    // (staged: 1.21x over 32 NHWC 1x1 layers, up to 2.2x where C >= 512; docs/PERFORMANCE.md).
    std::vector<Var> xv = g.x_row.args();  // (xx, tr, c, rw)
    g.x_row.compute_at(g.out, co).reorder_storage(xv[2], xv[0], xv[1], xv[3]);
    g.x_row.reorder(xv[2], xv[0], xv[1], xv[3]).vectorize(xv[2], V, TailStrategy::GuardWithIf);
}

}  // namespace

void schedule_bwd_weight_host(BwdWeightGraph &g, const BwdWeightHostParams &p, const ConvArgs &a,
                              Layout layout, StrideClass, FilterClass fc) {
    if (p.direct) return schedule_weight_direct(g, p, a, layout);
    // k_lanes > 1: vectors of V channels x KL adjacent k of the tile (nested: channels inner).
    const int KL = p.k_lanes, V = p.channel_lanes(), TC = V * p.tile_c, TK = p.tile_k;
    Var cgo("cgo"), cgi("cgi"), cvo("cvo"), cvi("cvi"), ko("ko"), ki("ki"), kio("kio"), kii("kii");

    // Stage 2: vectors along the channels, dw's innermost dimension in NHWC (KYXC); NCHW's
    // (KCYX) innermost is the filter column, so its vectors store with a stride.
    g.out.compute_root();
    for_each_branch(g.out, Halide::Internal::const_true(), g.beta, [&](Stage s, bool) {
        s.reorder(g.cg, g.s, g.r, g.k).vectorize(g.cg, V, TailStrategy::GuardWithIf).parallel(g.k);
    });
    g.dw.compute_at(g.out, g.k).reorder(g.cg, g.s, g.r, g.k).vectorize(g.cg, V, TailStrategy::GuardWithIf);
    g.dw.update().reorder(g.cg, g.s, g.r, g.rsp, g.k).vectorize(g.cg, V, TailStrategy::GuardWithIf);

    // A pipeline output: stage 1, tasks of k tiles within each split, run in parallel
    // (splits too). partial covers one task's k range, so its zeroing, its update and its copy to
    // the workspace stay in cache; each task stages x's rows itself.
    // At most 4 tasks per split (each stages all of x's rows it reads: more tasks, more copies).
    Var kto("kto"), kti("kti");
    Expr tiles_per_task = max(p.k_tasks, (a.K + 4 * TK - 1) / (4 * TK));
    g.ws.split(g.k, kto, kti, TK * tiles_per_task, TailStrategy::GuardWithIf)
        .reorder(g.s, g.cg, kti, g.r, kto, g.sp)
        .parallel(kto)
        .parallel(g.sp);
    // The copy into the workspace (s innermost there, then cg): with a class filter its taps are
    // constant (constrain_workspace_taps_to_filter), so the copy runs in vectors of cg, the taps
    // unrolled (Halide interleaves a row's S strided stores into dense ones). Copied a scalar at a
    // time it was 35% of a 7x7 1x1 layer's call (K x C partials against 49 pixels each).
    const int class_filter = class_filter_size(fc);
    if (class_filter > 0)
        g.ws.bound(g.s, 0, class_filter).unroll(g.s).vectorize(g.cg, V, TailStrategy::GuardWithIf);
    g.partial.compute_at(g.ws, kto).reorder_storage(g.cg, g.k, g.s, g.r, g.sp);
    g.partial.split(g.cg, cvo, cvi, V, TailStrategy::GuardWithIf).vectorize(cvi);
    // One row's sum over its columns (rowsum, an rfactor of partial's update over the rows) is
    // computed per register tile, so its tile_k x tile_c vectors of accumulators stay in
    // registers while the row's columns stream past; partial then gains each tile once per row.
    // (Accumulating into partial directly kept them in memory: a load and a store per FMA.)
    // Rows summed per tile: enough for kTilePixels columns (kNhwcKLanesTilePixels).
    Var row("row");
    RVar rbo("rbo"), rbi("rbi");
    // c_outer: every row of the split in one pass (x is staged for them all anyway).
    Expr rows_per_tile = p.c_outer ? g.rows : max(1, min(g.rows, (KL > 1 && layout == Layout::NHWC ? kNhwcKLanesTilePixels : kTilePixels) / max(1, a.Q)));
    g.partial.update().split(g.rr.y, rbo, rbi, rows_per_tile, TailStrategy::GuardWithIf);
    Func rowsum = g.partial.update().rfactor(rbo, row);
    // k tiles of TK; TK = 1 is k itself (a split by 1 made Halide 21 infer dy's k extent as
    // min + max of a task's range: reads past K, found by convbwd-tune).
    auto split_k = [&](Stage st) -> Stage {
        return TK > 1 ? st.split(g.k, ko, ki, TK, TailStrategy::GuardWithIf).unroll(ki) : st.rename(g.k, ko);
    };
    // The register tile's vectors: cvi (channels) innermost; with k_lanes, the tile's k in vectors of
    // KL right outside it (kii, vectorised: lane = k * V + channel), the rest (kio) unrolled.
    auto k_lane_vectors = [&](Stage st) {
        if (KL > 1) st.split(ki, kio, kii, KL).reorder(cvi, kii, cvo, kio).vectorize(kii).unroll(kio);
    };
    Stage u = g.partial.update();
    split_k(u.split(g.cg, cgo, cgi, TC, TailStrategy::GuardWithIf).split(cgi, cvo, cvi, V, TailStrategy::GuardWithIf));
    // c_outer: the row blocks inside each c tile, so a row block's update of partial touches only
    // that tile's slice (in L2), x staged once per c tile for the split's rows.
    const VarOrRVar inner_block = p.c_outer ? VarOrRVar(rbo) : VarOrRVar(cgo), outer_block = p.c_outer ? VarOrRVar(cgo) : VarOrRVar(rbo);
    std::vector<VarOrRVar> order = {cvi, cvo};
    if (TK > 1) order.push_back(ki);
    for (const VarOrRVar &v : {VarOrRVar(g.s), VarOrRVar(g.r), VarOrRVar(ko), inner_block, outer_block, VarOrRVar(g.sp)})
        order.push_back(v);
    u.reorder(order);
    u.vectorize(cvi).unroll(cvo);
    k_lane_vectors(u);
    // k_lanes > 1 with a class filter: a row's S taps in the tile too (rowsum per filter row r, the
    // taps unrolled inside the columns), so each shuffled vector of dy's k serves S FMAs.
    // full_taps: every filter row's too (rowsum per k tile, R x S taps unrolled inside the columns).
    const bool taps_in_tile = KL > 1 && class_filter > 0, all_taps = taps_in_tile && p.full_taps;
    if (all_taps)
        rowsum.compute_at(g.partial, ko)
            .reorder_storage(g.cg, g.k, g.s, g.r)
            .bound_storage(g.cg, TC)
            .bound_storage(g.k, TK)
            .bound_storage(g.s, class_filter)
            .bound_storage(g.r, class_filter);
    else if (taps_in_tile)
        rowsum.compute_at(g.partial, g.r)
            .reorder_storage(g.cg, g.k, g.s)
            .bound_storage(g.cg, TC)
            .bound_storage(g.k, TK)
            .bound_storage(g.s, class_filter);
    else
        rowsum.compute_at(g.partial, g.s).bound_storage(g.cg, TC).bound_storage(g.k, TK);  // constant: registers
    for (Stage st : {Stage(rowsum), rowsum.update()}) {  // a region of at most TC x TK: unrolled
        split_k(st.split(g.cg, cgo, cgi, TC, TailStrategy::GuardWithIf).split(cgi, cvo, cvi, V, TailStrategy::GuardWithIf))
            .vectorize(cvi)
            .unroll(cvo);
    }
    Stage ru = rowsum.update();
    if (all_taps) ru.reorder(cvi, cvo, ki, g.s, g.r, g.rr.x, rbi, cgo, ko, g.sp, row).unroll(g.s).unroll(g.r);
    else if (taps_in_tile) ru.reorder(cvi, cvo, ki, g.s, g.rr.x, rbi, cgo, ko, g.r, g.sp, row).unroll(g.s);
    else if (TK > 1) ru.reorder(cvi, cvo, ki, g.rr.x, rbi, cgo, ko, g.s, g.r, g.sp, row);
    else ru.reorder(cvi, cvo, g.rr.x, rbi, cgo, ko, g.s, g.r, g.sp, row);
    if (taps_in_tile) Stage(rowsum).unroll(g.s);
    if (all_taps) Stage(rowsum).unroll(g.r);
    k_lane_vectors(Stage(rowsum));
    k_lane_vectors(ru);
    // The filter rows of x one output row reads, staged per row with their zero border and
    // channels innermost (NCHW: transposed here), so the inner loop loads dense channel vectors
    // with no range test or clamp. (Staging x_f per split instead covered whole images: at batch
    // 1 every split transposed the whole input.)
    std::vector<Var> xv = g.x_row.args();  // (xx, tr, c, rw)
    g.x_row.compute_at(LoopLevel(g.partial, outer_block)).hoist_storage(g.ws, kto).reorder_storage(xv[2], xv[0], xv[1], xv[3]);
    if (KL > 1) {
        // k_lanes: a vector's KL adjacent k of dy are one load and a shuffle where k is innermost;
        // NCHW's are planes apart, so dy's rows are staged beside x's, k innermost. NHWC's too: read
        // in place, a tile's pixels lie K * 4 bytes apart (1 KiB for ResNeXt's 256 channels), a few
        // L1 sets for a row block's pixels, which every k tile and filter row reloaded.
        std::vector<Var> dv = g.dy_row.args();  // (q, k, rw)
        g.dy_row.compute_at(LoopLevel(g.partial, outer_block))
            .hoist_storage(g.ws, kto)
            .reorder_storage(dv[1], dv[0], dv[2])
            .reorder(dv[1], dv[0], dv[2])
            .vectorize(dv[1], V, TailStrategy::GuardWithIf);
    }
    auto channel_vectors = [&](Stage st) {
        st.reorder(xv[2], xv[0], xv[1], xv[3]).vectorize(xv[2], V, TailStrategy::GuardWithIf);
    };
    if (layout == Layout::NCHW) {
        // NCHW planes of a multiple of 4 KiB: a gather of V channels hits one cache set V times
        // (DeepLab's and DCGAN's 32x32 planes: the gathers were most of the time). There the
        // copy runs in tiles of V channels x V columns, both vectorised (dense row loads and
        // shuffles); elsewhere the gathers measured faster (small planes stay in cache).
        Var xci("xci"), xco("xco"), xxi("xxi"), xxo("xxo");
        g.x_row.specialize((a.H * a.W) % 1024 == 0)
            .split(xv[2], xco, xci, V, TailStrategy::GuardWithIf)
            .split(xv[0], xxo, xxi, V, TailStrategy::RoundUp)  // past the row: x_f's zero border
            .reorder(xci, xxi, xco, xxo, xv[1], xv[3])
            .vectorize(xci)
            .vectorize(xxi);
    }
    channel_vectors(Stage(g.x_row));
    ru.specialize(a.groups == 1);
}

namespace {

// Stage 1 of a backward-weight kernel with vectors along the columns (dy's q): the reduction's
// columns split into vectors of V lanes (an rfactor), one register tile of TK k x TCG cg vectors
// of lanes (x S taps when taps > 0: a class filter's row of taps in the tile) summed over a
// split's whole images in registers, then across its lanes into partial once. Tasks are (filter
// row, k tile), or with depthwise_tasks blocks of k tiles with every filter row (below). Needs the
// image-split algorithm (GroupClass Narrow or Depthwise).
void schedule_weight_column_lanes(BwdWeightGraph &g, const ConvArgs &a, int V, int TK, int TCG, int taps,
                                  bool depthwise_tasks) {
    Var cgo("cgo"), cgi("cgi"), ko("ko"), ki("ki"), rk("rk"), lane("lane");
    RVar qo("qo"), qi("qi");
    g.partial.update().split(g.rr.x, qo, qi, V, TailStrategy::GuardWithIf);
    Func lanes = g.partial.update().rfactor(qi, lane);  // lanes(s, r, cg, k, sp, lane)
    Stage u = g.partial.update();
    u.split(g.k, ko, ki, TK, TailStrategy::GuardWithIf).split(g.cg, cgo, cgi, TCG, TailStrategy::GuardWithIf);
    if (depthwise_tasks) {
        // Depthwise: tasks of several k tiles (about kTaskPixels pixels x channels each) with every
        // filter row inside, x staged per task (x_f at kbo). Tasks of one k tile and one filter row,
        // x staged per channel, were ~50 ns of FMAs each against the pool's hand-off (MobileNet's
        // 960-channel 7x7 layer: 0.02 of oneDNN, mutex and scheduler most of the samples).
        Var kbo("kbo"), kbi("kbi");
        Expr tiles_per_task = max(1, kTaskPixels / max(1, a.P * a.Q * TK));
        u.split(ko, kbo, kbi, tiles_per_task, TailStrategy::GuardWithIf)
            .reorder(qi, cgi, ki, g.s, cgo, g.r, kbi, kbo, g.sp)
            .parallel(kbo);
        g.x_f.compute_at(g.partial, kbo);
        // dy too where the rows are rounded up to whole vectors (ConvArgs::weight_round_columns): its
        // zeros past Q are written once by the copy, not tested per FMA.
        if (a.weight_round_columns > 1) {
            std::vector<Var> dv = g.dy_f.args();  // (q, p, k, n)
            g.dy_f.compute_at(g.partial, kbo).vectorize(dv[0], V, TailStrategy::GuardWithIf);
        }
    } else {
        u.reorder(qi, cgi, ki, g.s, cgo, ko, g.r, g.sp).fuse(ko, g.r, rk).parallel(rk);
    }
    if (taps > 0) {
        g.ws.bound(g.s, 0, taps);  // the workspace's tap dim (its extent is checked on entry)
        lanes.compute_at(g.partial, cgo).bound_storage(g.s, taps);
    } else {
        lanes.compute_at(g.partial, g.s);
    }
    lanes.bound_storage(lane, V).bound_storage(g.cg, TCG).bound_storage(g.k, TK);
    lanes.reorder_storage(lane, g.cg, g.k, g.s, g.r, g.sp);
    for (Stage st : {Stage(lanes), lanes.update()}) {  // a constant region: registers
        st.split(g.k, ko, ki, TK, TailStrategy::GuardWithIf)
            .split(g.cg, cgo, cgi, TCG, TailStrategy::GuardWithIf)
            .vectorize(lane)
            .unroll(cgi)
            .unroll(ki);
        if (taps > 0) st.unroll(g.s);
    }
    if (taps > 0)
        lanes.update().reorder(lane, cgi, ki, g.s, qo, g.rr.y, g.rr.z, cgo, ko, g.r, g.sp);
    else
        lanes.update().reorder(lane, cgi, ki, qo, g.rr.y, g.rr.z, cgo, ko, g.s, g.r, g.sp);
    // x's columns at a constant stride: dense (1) or two dense loads and a shuffle (2), not a
    // gather; one group: no group index per k.
    for (Expr cond : {a.groups == 1 && a.stride_w == 1, a.groups == 1 && a.stride_w == 2, a.stride_w == 1,
                      a.stride_w == 2})
        lanes.update().specialize(cond);
}

// Stage 2 of those kernels: the splits summed per k (the filter is small), tasks of k holding
// about 1024 filter elements (a task per k of a depthwise 3x3 filter was 9 sums against the pool's
// hand-off).
void schedule_weight_sum_splits_per_k(BwdWeightGraph &g, const ConvArgs &a) {
    Var kt("kt"), kk("kk");
    Expr k_per_task = max(1, 1024 / max(1, a.C / a.groups * a.R * a.S));
    g.out.compute_root();
    for_each_branch(g.out, Halide::Internal::const_true(), g.beta, [&](Stage s, bool) {
        s.split(g.k, kt, kk, k_per_task, TailStrategy::GuardWithIf).parallel(kt);
    });
    g.dw.compute_at(g.out, kk);
}

// Depthwise backward-weight along the channels, every tap in the register tile (full_taps = 1;
// valid(): a class filter of R x S taps). Tasks are (k tiles, split), one parallel loop: a register tile of tile_c
// channel vectors x every tap of the filter sums the split's whole planes, reading dy in place and
// x in place (x_in_place = 1: its zero border through the loops that x_f's likely bounds tests
// partition, so the steady state has no select and no clamp) or from the task's staged copy with
// the border (x_in_place = 0), tile_q output columns a step (unrolled: an x vector loaded serves up
// to S taps of the step). The splits are summed serially (the filter is small), or with direct = 1
// there is one and the tasks write dw. NCHW with channel_vectors = 1 is this tile too, over copies of
// the task's planes with their channels innermost.
void schedule_weight_dw_full_taps(BwdWeightGraph &g, const BwdWeightDwHostParams &p, const ConvArgs &a, int taps,
                                  Layout layout) {
    const int V = p.vec, TKV = V * p.tile_c;
    Var ko("ko"), ki("ki"), kbo("kbo"), kbi("kbi"), cvo("cvo"), cvi("cvi"), t("t");
    RVar qo("qo"), qi("qi");
    // Tasks of several register tiles on small planes (about 2 * kTaskPixels pixels x channels a
    // task): a 7x7 plane's tile is a few hundred FMAs, less than the pool's hand-off (MobileNet-v2's
    // and EfficientNet-b0's 7x7 layers 1.2x; with 4 * kTaskPixels, 14x14 planes took 2 tiles a
    // task too and stride-2 layers of 14x14 outputs lost up to 0.84x).
    Expr tiles_per_task = max(1, 2 * kTaskPixels / max(1, a.P * a.Q * TKV));
    // The stage whose parallel loop runs the register tiles (at its kbi): ws, or with direct = 1 out.
    Func tiles = p.direct ? g.out : g.ws;
    // A register tile's loops in the stages computed at kbi (partial; dw with direct = 1): tile_c channel
    // vectors x the taps, unrolled.
    auto register_tile = [&](Stage st) {
        st.split(g.k, ko, ki, TKV, TailStrategy::GuardWithIf)
            .split(ki, cvo, cvi, V, TailStrategy::GuardWithIf)
            .vectorize(cvi)
            .unroll(cvo)
            .unroll(g.s)
            .unroll(g.r);
    };
    // The tiling stage's loops: a register tile's, its tiles (ko) in tasks (kbo) of tiles_per_task (kbi).
    auto task_tiles = [&](Stage st) -> Stage {
        register_tile(st);
        return st.split(ko, kbo, kbi, tiles_per_task, TailStrategy::GuardWithIf);
    };
    g.out.compute_root();
    if (p.direct) {
        // direct = 1 (ConvArgs::weight_direct: one split of every image, no workspace): out written from
        // the register tile where it is summed, in the tasks (a tile's 16 k of one tap are 9 floats
        // apart in the filter: scattered lanes, a few hundred stores against the tile's R x S x P x Q
        // x N vector FMAs). No serial pass over the splits and no workspace round trip.
        g.out.bound(g.s, 0, taps).bound(g.r, 0, taps);
        for_each_branch(g.out, Halide::Internal::const_true(), g.beta, [&](Stage s, bool) {
            task_tiles(s).reorder(cvi, cvo, g.s, g.r, g.cg, kbi, kbo).parallel(kbo);
        });
        g.dw.compute_at(g.out, kbi).bound_storage(g.k, TKV).bound_storage(g.s, taps).bound_storage(g.r, taps);
        for (Stage st : {Stage(g.dw), g.dw.update()}) register_tile(st);
    } else {
        // The output stage per channel, its taps innermost (the filter's dense order; stores along k
        // were 16 scattered lanes a vector), on one thread (in parallel tasks of 64 or 128 channels it
        // lost 0.82-0.95x on layers of 192-576 channels: the pool's hand-off).
        for_each_branch(g.out, Halide::Internal::const_true(), g.beta, [&](Stage s, bool) {
            s.reorder(g.s, g.r, g.cg, g.k);
        });
        g.dw.compute_at(g.out, g.k);
        g.ws.bound(g.s, 0, taps).bound(g.r, 0, taps);  // the workspace's tap dims (checked on entry)
        task_tiles(g.ws).reorder(cvi, cvo, g.s, g.r, kbi, kbo, g.sp, g.cg).fuse(kbo, g.sp, t).parallel(t);
    }
    // partial at the tile: constant storage, every index constant once unrolled: registers.
    g.partial.compute_at(tiles, kbi)
        .bound_storage(g.k, TKV)
        .bound_storage(g.s, taps)
        .bound_storage(g.r, taps)
        .reorder_storage(g.k, g.s, g.r, g.cg, g.sp);
    for (Stage st : {Stage(g.partial), g.partial.update()}) register_tile(st);
    g.partial.update()
        .split(g.rr.x, qo, qi, p.tile_q, TailStrategy::GuardWithIf)
        .reorder(cvi, cvo, g.s, g.r, qi, qo, g.rr.y, g.rr.z, ko, g.cg, g.sp)
        .unroll(qi);
    if (layout == Layout::NCHW) {
        // channel_vectors = 1: the task's channels of x's and dy's planes copied channels innermost (x's
        // border then as NHWC's: read in the tile, or staged from this copy). Each copy goes through
        // blocks of a few columns x TKV channels loaded along the columns into a constant-size buffer
        // and stored along the channels, which LLVM turns into register permutes (vpermt2ps; a copy
        // vectorized along one dim gathers or scatters an element a lane). The last block of a row is
        // shifted inwards (it overlaps the one before), so every load lies inside the plane: blocks of
        // 8 columns where a row has 8 or more, of 4 where it has 4 to 7 (7x7 planes), else of 1 (a
        // gather a column).
        // src's values for consumer: t (the task's copy) and b (a block of it) wrap src in turn.
        auto transpose_copy = [&](Func src, Func consumer, Expr columns) {
            Func t = src.in(consumer), b = src.in(t);
            std::vector<Var> v = t.args();  // (columns, rows, channels, image)
            Var xo("xo"), xi("xi"), co("co"), ci("ci");
            t.compute_at(tiles, kbi).bound_storage(v[2], TKV).reorder_storage(v[2], v[0], v[1], v[3]);
            b.compute_at(t, xo).bound_storage(v[2], TKV).reorder_storage(v[0], v[2], v[1], v[3]);
            for (int cols : {kTransposeColumns, kTransposeColumns / 2, 1}) {
                Stage ts = cols > 1 ? t.specialize(columns >= cols) : Stage(t);
                ts.split(v[0], xo, xi, cols, TailStrategy::ShiftInwards)
                    .split(v[2], co, ci, V, TailStrategy::GuardWithIf)
                    .reorder(ci, xi, co, xo, v[1], v[3])
                    .vectorize(ci);
                if (cols > 1) ts.vectorize(xi);
                Stage bs = cols > 1 ? b.specialize(columns >= cols) : Stage(b);
                bs.reorder(v[0], v[2], v[1], v[3]);
                if (cols > 1) bs.vectorize(v[0], cols, TailStrategy::RoundUp);
            }
            b.bound_storage(v[0], kTransposeColumns);
        };
        transpose_copy(g.x_in, g.x_f, a.W);       // x's raw planes (x_f's border read from them)
        transpose_copy(g.dy_f, g.partial, a.Q);
    }
    if (!p.x_in_place) {
        // The task's channels of x with their zero border, channels innermost (the copy's own
        // border loops are partitioned the same way: its interior copies without tests).
        std::vector<Var> xv = g.x_f.args();  // (xx, yy, c, n)
        g.x_f.compute_at(tiles, kbi)
            .bound_storage(xv[2], TKV)
            .reorder_storage(xv[2], xv[0], xv[1], xv[3])
            .reorder(xv[2], xv[0], xv[1], xv[3])
            .vectorize(xv[2], V, TailStrategy::GuardWithIf);
    }
}

// NCHW backward-weight along the columns, every tap in the register tile: the depthwise family's
// full_taps = 1 and the grouped columns family (valid(): a class filter of R x S taps). Vectors along a
// plane's columns (rows rounded up to whole vectors, ConvArgs::weight_round_columns), a register
// tile of TK channels x every tap summing a task's whole planes in one pass (the row-tap tiles pass
// over them once per filter row), tile_q output rows a step (unrolled: an x row loaded serves up to
// R taps of the step). x (with its border) and dy (zeros past Q) are copied per task
// (ConvArgs::weight_copy_planes). Depthwise: tasks of several k tiles, both copied per k tile (a k
// tile reads its own planes). Grouped (whole_groups): tasks of one group's k tiles, x's planes of the
// group copied once per task (per k tile they were 1.3x slower: 8-channel groups on 28x28), dy per k
// tile; the tile's k lie in one group (TK divides k / groups: the group is the tile's first k's, so
// the TK k's x loads are one).
void schedule_weight_column_full_taps(BwdWeightGraph &g, const ConvArgs &a, int V, int TK, int tile_q, int taps,
                                      bool whole_groups) {
    schedule_weight_sum_splits_per_k(g, a);
    g.ws.reorder(g.s, g.cg, g.k, g.r, g.sp);
    g.ws.bound(g.s, 0, taps).bound(g.r, 0, taps);  // the workspace's tap dims (checked on entry)
    g.partial.compute_at(g.ws, g.sp);
    Var ko("ko"), ki("ki"), kbo("kbo"), kbi("kbi"), lane("lane");
    RVar qo("qo"), qi("qi"), yo("yo"), yi("yi");
    g.partial.update().split(g.rr.x, qo, qi, V, TailStrategy::GuardWithIf);
    Func lanes = g.partial.update().rfactor(qi, lane);  // lanes(s, r, cg, k, sp, lane)
    // Depthwise: tasks of contiguous channels, at most kDwPlaneTasks a split and 4 * kTaskPixels at
    // least: each k tile copies its own planes, so a task's size sets the pool's hand-offs and the
    // task's buffers' allocations (2048 pixels: 144 tasks on a 56 x 56 layer, the pool's mutex and
    // malloc 15% of the call; 72 tasks of two channels still 1.1x slower than 8 tasks of 18).
    Expr tiles = (a.K + TK - 1) / TK;
    Expr tiles_per_task =
        whole_groups ? max(1, a.K / a.groups / TK)
                     : max(max(1, 4 * kTaskPixels / max(1, a.P * a.Q * TK)), (tiles + kDwPlaneTasks - 1) / kDwPlaneTasks);
    g.partial.update()
        .split(g.k, ko, ki, TK, TailStrategy::GuardWithIf)
        .split(ko, kbo, kbi, tiles_per_task, TailStrategy::GuardWithIf)
        .reorder(qi, ki, g.s, g.r, g.cg, kbi, kbo, g.sp)
        .parallel(kbo);
    // The lanes' sums: every tap's chain unrolled side by side (a loop of one tap's 16 dependent adds
    // at a time was a tenth of the call).
    g.partial.update().unroll(qi).unroll(g.s).unroll(g.r);
    // x and dy copied per k tile (x per group: whole_groups) with their zero borders
    // (ConvArgs::weight_copy_planes: updates only), each update's rows in vectors; x's columns from a
    // multiple of V, so that its copied rows are aligned stores.
    g.x_f.align_bounds(g.x_f.args()[0], V);
    for (auto [f, per_task] : {std::pair{g.x_f, whole_groups}, std::pair{g.dy_f, false}}) {
        if (f.name() == g.dy_f.name() && a.weight_dy_in_place) continue;  // read in place
        if (per_task) f.compute_at(g.partial, kbo);
        else f.compute_at(g.partial, kbi).hoist_storage(g.partial, kbo);
        for (int i = 0; i < f.num_update_definitions(); i++) {
            Stage st = f.update(i);
            st.vectorize(RVar(st.get_schedule().rvars()[0].var), V, TailStrategy::GuardWithIf);
        }
    }
    lanes.compute_at(g.partial, kbi)
        .bound_storage(lane, V)
        .bound_storage(g.k, TK)
        .bound_storage(g.s, taps)
        .bound_storage(g.r, taps)
        .reorder_storage(lane, g.k, g.s, g.r, g.cg, g.sp);
    for (Stage st : {Stage(lanes), lanes.update()})  // a constant region: registers
        st.split(g.k, ko, ki, TK, TailStrategy::GuardWithIf).vectorize(lane).unroll(ki).unroll(g.s).unroll(g.r);
    lanes.update()
        .split(g.rr.y, yo, yi, tile_q, TailStrategy::GuardWithIf)
        .reorder(lane, ki, g.s, g.r, yi, qo, yo, g.rr.z, ko, g.cg, g.sp)
        .unroll(yi);
}

}  // namespace

namespace {

// Narrow backward-weight along k (k_vectors = 1; first layers: c = 3 against k = 32-64). dw is a
// GEMM of K x (C * R * S) over the pixels; dy's k are contiguous in NHWC (NCHW: a block's dy copied so),
// so a register tile is tile_k vectors of k x tile_cg channels x T taps of one filter row (T = a class
// filter's size, else tile_s; full_taps: x R rows), and each pixel costs tile_k dense loads of dy and
// tile_cg * T broadcasts of x (adjacent floats of x's staged row: channels innermost) against tile_k *
// tile_cg * T FMAs. x is staged once per split with its zero border. The register tile's guards (k past
// K, channels past C, taps past S) vanish where K is whole tiles, C = tile_cg and S = T (specialised: the
// first layers' c = 3 and their filters).
void schedule_weight_k_vectors(BwdWeightGraph &g, const BwdWeightNarrowHostParams &p, const ConvArgs &a,
                               Layout layout, FilterClass fc) {
    const int V = p.vec, TK = p.group_k_tile(), TCG = p.tile_cg;  // TK: vec * tile_k k
    const KVectorTaps taps = k_vector_taps(p, fc);
    const int class_filter = class_filter_size(fc), T = taps.row;
    const bool full = taps.rows > 1;  // every filter row in the tile
    Var ko("ko"), ki("ki"), kvo("kvo"), kvi("kvi"), cgo("cgo"), cgi("cgi"), so("so"), si("si"), img("img");
    std::vector<Var> xv = g.x_f.args();  // (xx, yy, c, n)
    g.x_f.compute_at(g.ws, g.sp)
        .reorder_storage(xv[2], xv[0], xv[1], xv[3])
        .reorder(xv[2], xv[0], xv[1], xv[3])
        .parallel(xv[1]);
    // Blocks of output rows (dy's rows of a block stay in L2 while every filter row and k tile
    // reads them; tasks of (k tile, filter row) each streamed the whole of dy from memory): a
    // block's sum per image (bsum, an rfactor over the images and the blocks) is a parallel task,
    // and within it each register tile sums one row at a time (rowsum, computed per row: registers),
    // added into the block's sum. The split's partial sums the blocks in order.
    RVar ybo("ybo"), ybi("ybi");
    Var yb("yb"), row("row");
    Expr block_rows = max(1, min((a.P + kKVectorMinBlocks - 1) / kKVectorMinBlocks, kKVectorBlockBytes / max(1, a.Q * a.K * 4)));
    g.partial.update().split(g.rr.y, ybo, ybi, block_rows, TailStrategy::GuardWithIf);
    Func bsum = g.partial.update().rfactor({{g.rr.z, img}, {ybo, yb}});  // bsum(s, r, cg, k, sp, img, yb)
    Func rowsum = bsum.update().rfactor(ybi, row);                         // rowsum(..., img, yb, row)
    // k innermost, so a row's tile adds into it as dense vectors; tasks of blocks (every filter row
    // and k tile of a block in one task: tasks of (block, filter row) read a block's dy from memory
    // once a row, 0.6-0.7x on 224 x 224 layers).
    bsum.compute_at(g.ws, g.sp).reorder_storage(g.k, g.cg, g.s, g.r, g.sp, img, yb);
    bsum.reorder(g.k, g.cg, g.s, g.r, g.sp, yb, img).vectorize(g.k, V, TailStrategy::GuardWithIf).parallel(yb);
    // k in whole tiles where K is a multiple of them (RoundUp: the tile's region constant, no guard in
    // its loops); else the last tile guarded. C = tile_cg and (any filter) S = T: no guard either.
    const Expr fits = (class_filter > 0 ? a.C == TCG : a.C == TCG && a.S == T) && a.K % TK == 0;
    // The register tile's dims, in the block's loops (bsum) and the row's (rowsum): TK k in vectors,
    // TCG channels, T taps.
    auto split_tile = [&](Stage st, TailStrategy k_tail) -> Stage {
        return st.split(g.k, ko, ki, TK, k_tail)
            .split(ki, kvo, kvi, V, TailStrategy::GuardWithIf)
            .split(g.cg, cgo, cgi, TCG, TailStrategy::GuardWithIf)
            .split(g.s, so, si, T, TailStrategy::GuardWithIf)
            .vectorize(kvi)
            .unroll(kvo);
    };
    auto tiles = [&](Stage st, TailStrategy k_tail) {
        split_tile(st, k_tail).reorder(kvi, kvo, cgi, si, g.r, ybi, so, cgo, ko, g.sp, yb, img).parallel(yb);
        if (full) st.unroll(g.r);
        else st.reorder(ybi, so, cgo, ko, g.r);
    };
    tiles(bsum.update().specialize(fits), TailStrategy::RoundUp);
    tiles(bsum.update(), TailStrategy::GuardWithIf);
    if (layout == Layout::NCHW) {
        // NCHW: the block's dy copied with k innermost (tiles of V k x V columns, both vectorised: dense
        // row loads and shuffles), so the tiles load dense vectors of k as in NHWC.
        std::vector<Var> dv = g.dy_f.args();  // (q, p, k, n)
        Var dko("dko"), dki("dki"), dqo("dqo"), dqi("dqi");
        g.dy_f.compute_at(bsum, yb)
            .reorder_storage(dv[2], dv[0], dv[1], dv[3])
            .split(dv[2], dko, dki, V, TailStrategy::GuardWithIf)
            .split(dv[0], dqo, dqi, V, TailStrategy::GuardWithIf)
            .reorder(dki, dqi, dko, dqo, dv[1], dv[3])
            .vectorize(dki)
            .vectorize(dqi);
    }
    rowsum.compute_at(bsum, ybi)
        .bound_storage(g.k, TK)
        .bound_storage(g.cg, TCG)
        .bound_storage(g.s, T)
        .reorder_storage(g.k, g.cg, g.s, g.r, g.sp, img, yb, row);
    if (full) rowsum.bound_storage(g.r, taps.rows);
    for (Stage st : {Stage(rowsum), rowsum.update()})  // a constant region where it fits: registers
        split_tile(st, TailStrategy::GuardWithIf).unroll(cgi).unroll(si);
    if (full) {
        Stage(rowsum).unroll(g.r);
        rowsum.update().unroll(g.r).reorder(kvi, kvo, cgi, si, g.r, g.rr.x, ko, cgo, so, g.sp, img, yb, row);
    } else {
        rowsum.update().reorder(kvi, kvo, cgi, si, g.rr.x, ko, cgo, so, g.r, g.sp, img, yb, row);
    }
    g.partial.update().vectorize(g.k, V, TailStrategy::GuardWithIf);
}

}  // namespace

// Backward-weight, host, narrow (c / groups < 8: first layers, small groups). Channel vectors
// would run mostly empty, so the vectors run along the columns (schedule_weight_column_lanes), or
// with k_vectors along k (schedule_weight_k_vectors). The dispatcher makes each split whole images,
// so x (with its zero border) and, for the column lanes in NHWC, dy are staged once per split.
void schedule_bwd_weight_narrow_host(BwdWeightGraph &g, const BwdWeightNarrowHostParams &p, const ConvArgs &a,
                                     Layout layout, StrideClass, FilterClass fc) {
    const int V = p.vec;
    schedule_weight_sum_splits_per_k(g, a);
    g.ws.reorder(g.s, g.cg, g.k, g.r, g.sp);
    g.partial.compute_at(g.ws, g.sp);
    if (p.k_vectors) {
        schedule_weight_k_vectors(g, p, a, layout, fc);
        return;
    }
    std::vector<Var> xv = g.x_f.args();  // (xx, yy, c, n): columns innermost, the zero border materialised
    g.x_f.compute_at(g.ws, g.sp).vectorize(xv[0], V, TailStrategy::GuardWithIf).parallel(xv[2]);
    if (layout == Layout::NHWC) {
        std::vector<Var> dv = g.dy_f.args();  // (q, p, k, n): transposed to columns innermost
        g.dy_f.compute_at(g.ws, g.sp).vectorize(dv[0], V, TailStrategy::GuardWithIf).parallel(dv[2]);
    }
    schedule_weight_column_lanes(g, a, V, p.tile_k, p.tile_cg, 0, false);
}

// Backward-weight, host, NCHW grouped layers along the columns (conv_bwd_weight_grouped_host):
// schedule_weight_column_full_taps with tasks of whole groups.
void schedule_bwd_weight_grouped_host(BwdWeightGraph &g, const BwdWeightGroupedHostParams &p, const ConvArgs &a,
                                      FilterClass fc) {
    schedule_weight_column_full_taps(g, a, p.vec, p.tile_k, p.tile_q, class_filter_size(fc), true);
}

// Backward-weight, host, depthwise (c = k = groups; splits of whole images). NCHW: vectors along
// the columns (schedule_weight_column_lanes; tile_k channels x a class filter's row of taps), x
// staged per split with its border, dy read in place. NHWC: vectors along k (= c), dense in x and
// dy: one image's sum (an rfactor over the split's images) per register tile of tile_c vectors x
// a class filter's row of taps, x staged per split with its border and channels innermost; tasks
// are tiles of k.
void schedule_bwd_weight_dw_host(BwdWeightGraph &g, const BwdWeightDwHostParams &p, const ConvArgs &a,
                                 Layout layout, StrideClass, FilterClass fc) {
    const int V = p.vec;
    const int taps = class_filter_size(fc);  // a class filter's row
    std::vector<Var> xv = g.x_f.args();  // (xx, yy, c, n)
    if (!p.along_channels(layout) && p.full_taps) {
        schedule_weight_column_full_taps(g, a, p.vec, p.tile_k, p.tile_q, taps, false);
        return;
    }
    if (!p.along_channels(layout)) {
        schedule_weight_sum_splits_per_k(g, a);
        g.ws.reorder(g.s, g.cg, g.k, g.r, g.sp);
        g.partial.compute_at(g.ws, g.sp);
        g.x_f.vectorize(xv[0], V, TailStrategy::GuardWithIf);  // computed per task (column lanes)
        schedule_weight_column_lanes(g, a, V, p.tile_k, 1, taps, true);
        return;
    }
    if (p.full_taps) {
        schedule_weight_dw_full_taps(g, p, a, taps, layout);
        return;
    }
    Var cvo("cvo"), cvi("cvi"), ko("ko"), ki("ki"), img("img");
    const int TKV = V * p.tile_c;  // k per register tile: tile_c vectors
    g.out.compute_root();
    for_each_branch(g.out, Halide::Internal::const_true(), g.beta, [&](Stage s, bool) {
        s.reorder(g.k, g.cg, g.s, g.r).vectorize(g.k, V, TailStrategy::GuardWithIf).parallel(g.r);
    });
    g.dw.compute_at(g.out, g.r).reorder(g.k, g.cg, g.s, g.r).vectorize(g.k, V, TailStrategy::GuardWithIf);
    g.dw.update().reorder(g.k, g.cg, g.s, g.rsp, g.r).vectorize(g.k, V, TailStrategy::GuardWithIf);
    g.ws.reorder(g.k, g.s, g.cg, g.r, g.sp).vectorize(g.k, V, TailStrategy::GuardWithIf);
    g.partial.compute_at(g.ws, g.sp).reorder_storage(g.k, g.s, g.cg, g.r, g.sp);
    g.partial.vectorize(g.k, V, TailStrategy::GuardWithIf);
    g.x_f.compute_at(g.ws, g.sp)
        .reorder_storage(xv[2], xv[0], xv[1], xv[3])
        .reorder(xv[2], xv[0], xv[1], xv[3])
        .vectorize(xv[2], V, TailStrategy::GuardWithIf)
        .parallel(xv[1]);
    // One image's sum (an rfactor over the split's images); with a class filter, over a block of
    // output rows, so that the x rows a block reads (its rows plus the filter's reach, one k
    // tile's channels) stay in L1 across the filter rows: each filter row's pass over a whole
    // image streamed it from L2 (MobileNet's 144-channel 56x56 layer: 0.2 of oneDNN).
    RVar ybo("ybo"), ybi("ybi");
    Var yb("yb");
    Expr block_rows = max(1, min(a.P, 24 * 1024 / (a.W * TKV * 4) - (a.R - 1) * a.dilation_h));
    if (taps > 0) g.partial.update().split(g.rr.y, ybo, ybi, block_rows, TailStrategy::GuardWithIf);
    Func isum = taps > 0 ? g.partial.update().rfactor({{g.rr.z, img}, {ybo, yb}}) : g.partial.update().rfactor(g.rr.z, img);
    Stage u = g.partial.update();
    u.split(g.k, ko, ki, TKV, TailStrategy::GuardWithIf)
        .split(ki, cvo, cvi, V, TailStrategy::GuardWithIf)
        .vectorize(cvi)
        .unroll(cvo);
    if (taps > 0) {
        g.ws.bound(g.s, 0, taps);
        u.reorder(cvi, cvo, g.s, g.r, g.rr.z, ybo, ko, g.cg, g.sp).unroll(g.s).parallel(ko);
        isum.compute_at(g.partial, g.r).bound_storage(g.s, taps);
    } else {
        u.reorder(cvi, cvo, g.rr.z, g.s, g.r, ko, g.cg, g.sp).parallel(ko);
        isum.compute_at(g.partial, g.s);
    }
    isum.bound_storage(g.k, TKV);
    if (taps > 0) isum.reorder_storage(g.k, g.s, g.cg, g.r, g.sp, img, yb);
    else isum.reorder_storage(g.k, g.s, g.cg, g.r, g.sp, img);
    for (Stage st : {Stage(isum), isum.update()}) {
        st.split(g.k, ko, ki, TKV, TailStrategy::GuardWithIf)
            .split(ki, cvo, cvi, V, TailStrategy::GuardWithIf)
            .vectorize(cvi)
            .unroll(cvo);
        if (taps > 0) st.unroll(g.s);
    }
    if (taps > 0)
        isum.update().reorder(cvi, cvo, g.s, g.rr.x, ybi, ko, g.cg, g.r, g.sp, img, yb);
    else
        isum.update().reorder(cvi, cvo, g.rr.x, g.rr.y, ko, g.cg, g.s, g.r, g.sp, img);
}

}  // namespace convbwd
