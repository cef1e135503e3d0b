// GPU schedules (CUDA PTX, OpenCL C; the AMDGPU code objects are this OpenCL C compiled by
// clang). Register tiles per thread, inputs optionally staged channels-innermost in global
// memory (stage; stage=2 copies through a shared-memory tile, the only use of shared memory so
// far): measured against cuDNN in docs/PERFORMANCE.md.
#include "schedules.h"

#include "../generators/fragments.h"

using namespace Halide;

namespace convbwd {

namespace {
// The `stage` parameter: f (an input view, dims (w, h, channels, n)) computed once into device
// memory with channels innermost, so the main kernel's channel-contiguous register tiles read it
// contiguously in either layout; its zero border (padding) is part of the computed region. One
// memory-bound pass, threads along channels so the copy's stores are contiguous. vec > 1: its
// channel rows start and have a length at multiples of vec, so that channel tiles starting at
// multiples of vec load as aligned vectors.
void stage_channels_innermost(Func f, int vec = 1) {
    std::vector<Var> v = f.args();
    Var co("co"), ci("ci"), wo("wo"), wi("wi"), hn("hn");
    if (vec > 1) f.align_bounds(v[2], vec).align_storage(v[2], vec);
    f.compute_root()
        .reorder_storage(v[2], v[0], v[1], v[3])
        .reorder(v[2], v[0], v[1], v[3])
        .gpu_tile(v[2], v[0], co, wo, ci, wi, 32, 4, TailStrategy::GuardWithIf)
        .fuse(v[1], v[3], hn)
        .gpu_blocks(hn);
}

// stage=2: the same copy through a shared-memory tile of 32 channels x 32 columns per block. The
// tile is read along the columns (threads along w: a warp reads whole 32-byte sectors of an NCHW
// input) and written along the channels; the direct copy above reads along the channels, 4 bytes
// of each sector per thread (ncu: 148 us for a 103 MB dy, 97% L1 busy, where 206 MB at the
// measured 2.97 TB/s take 70 us). On the H100 the whole layer came out 2-15% slower with it
// (docs/PERFORMANCE.md, 2026-11-23): a named candidate for other devices and for autotuning.
void stage_channels_innermost_shared(Func f) {
    std::vector<Var> v = f.args();
    Func t = f.in();
    std::vector<Var> tv = t.args();
    Var co("co"), ci("ci"), wo("wo"), wi("wi"), wt("wt"), wu("wu"), hn("hn"), ct("ct"), cu("cu");
    t.compute_root()
        .reorder_storage(tv[2], tv[0], tv[1], tv[3])
        .tile(tv[2], tv[0], co, wo, ci, wi, 32, 32, TailStrategy::GuardWithIf)
        .split(wi, wt, wu, 4, TailStrategy::GuardWithIf)
        .reorder(wu, ci, wt, co, wo, tv[1], tv[3])
        .fuse(tv[1], tv[3], hn)
        .gpu_blocks(co, wo, hn)
        .gpu_threads(ci, wt)
        .unroll(wu);
    // Rows of 33 floats: t reads a column of the tile (one channel per thread), which with rows of
    // 32 would put all 32 threads of a warp on one shared-memory bank.
    f.compute_at(t, co)
        .store_in(MemoryType::GPUShared)
        .align_storage(v[0], 33)
        .split(v[2], ct, cu, 4, TailStrategy::GuardWithIf)
        .reorder(cu, v[0], ct, v[1], v[3])
        .gpu_threads(v[0], ct)
        .unroll(cu);
}
// stage=3: f copied once in its own layout with its zero border (padding) materialised: the main
// kernel then reads it in place (threads along the columns) with no range test per load.
// Rows, channels and images share the first grid dim (up to 2^31 - 1 blocks): as the third grid
// dim (at most 65535) 2048 channels x 32 images failed to launch on the H100.
void stage_padded(Func f) {
    std::vector<Var> v = f.args();
    Var xo("xo"), xi("xi"), yo("yo"), yi("yi"), cn("cn"), ycn("ycn");
    f.compute_root()
        .tile(v[0], v[1], xo, yo, xi, yi, 32, 4, TailStrategy::GuardWithIf)
        .fuse(v[2], v[3], cn)
        .fuse(yo, cn, ycn)
        .reorder(xi, yi, ycn, xo)  // block loops: the innermost is the grid's x
        .gpu_blocks(ycn, xo)
        .gpu_threads(xi, yi);
}

// Backward-weight's last two stages, every GPU family: out = alpha * dw + beta * prev, with dw (the
// splits summed in a fixed order) computed per thread; 16 x 8 threads along (cg, k), a block per
// tap.
//
// With a (the register-tile families): a small filter summed over many splits (a first layer's
// 3 x 3 x 3 x 64 filter over 1000-2000 splits) goes in two passes. One thread an element ran a
// chain of as many dependent loads, on a grid of a few blocks (ncu: 15-40% of a first layer's
// time, docs/PERFORMANCE.md); first chunks of kSplitsPerChunk splits (an rfactor: part(.., j) sums
// chunk j's splits in order) with threads along the workspace's packed (s, cg, k), so a warp reads
// 128 contiguous bytes, a block per (thread block, r, chunk); then out's threads sum each element's
// chunks in order. A fixed order still: bit-identical from run to run. (A fixed count of 32 chunks
// instead: 14x14 1x1 layers of ~50k elements over ~100 splits lost 0.64-0.85x, the chunks' partials
// outweighing their few splits.)
constexpr int kSplitsPerChunk = 32;
constexpr int kTwoPassSplits = 128;      // splits at least
constexpr int kTwoPassElements = 65536;  // filter elements (R x S x C / groups x K) at most
template <class Graph>
void schedule_weight_output_gpu(Graph &g, const ConvArgs *a = nullptr) {
    Var cbo("cbo"), cbi("cbi"), kbo("kbo"), kbi("kbi"), tap("tap");
    g.out.compute_root();
    for_each_branch(g.out, Halide::Internal::const_true(), g.beta, [&](Stage st, bool) {
        st.reorder(g.cg, g.k, g.s, g.r)
            .gpu_tile(g.cg, g.k, cbo, kbo, cbi, kbi, 16, 8, TailStrategy::GuardWithIf)
            .fuse(g.s, g.r, tap)
            .gpu_blocks(tap);
    });
    g.dw.compute_at(g.out, cbi);
    if (!a) return;
    const Expr elements = a->R * a->S * (a->C / a->groups) * a->K;
    Stage many = g.dw.update().specialize(g.splits >= kTwoPassSplits && elements <= kTwoPassElements);
    RVar so("so"), si("si");
    Var j("j"), sc("sc"), e("e"), eo("eo"), ei("ei");
    many.split(g.rsp.x, so, si, kSplitsPerChunk, TailStrategy::GuardWithIf);
    Func part = many.rfactor(so, j);  // part(s, r, cg, k, j)
    part.compute_root().reorder_storage(g.s, g.cg, g.k, g.r, j);
    for (Stage st : {Stage(part), part.update()}) {
        std::vector<VarOrRVar> order = {g.s, g.cg, g.k, g.r, j};
        if (st.name() != part.name()) order.insert(order.begin(), si);
        st.reorder(order)
            .fuse(g.s, g.cg, sc)
            .fuse(sc, g.k, e)
            .split(e, eo, ei, 64, TailStrategy::GuardWithIf)
            .gpu_blocks(eo, g.r, j)
            .gpu_threads(ei);
    }
}
}  // namespace

// Register tiles must have a constant size, so the per-thread split shifts its last tile inwards
// (ShiftInwards): legal where the extent covers one tile (for_each_branch's shape conditions).
// Elsewhere (tiny problems) a 1x1 tile runs.

// Backward-data. Each thread owns tile_c channels x tile_x columns of one stride phase and keeps
// them in registers while k and the taps stream past. Stride 1: the phase array is the output,
// computed in place. Stride > 1: the phase array is stored once (acc.in()), one stride phase per
// block (no divergence over the phase's tap table), then gathered into dx.
// Depthwise (gc): the same tiles read in place (valid() keeps stage 0: w's staged copy is
// channels-innermost over cg, which a depthwise filter does not have): NHWC threads along the
// channels (dy loads dense across a warp), NCHW along the columns.
void schedule_bwd_data_gpu(BwdDataGraph &g, const BwdDataGpuParams &p, const ConvArgs &a, Layout layout,
                           StrideClass, FilterClass fc, GroupClass) {
    Var &x = g.x, &y = g.y, &c = g.c, &n = g.n;
    Var cb("cb"), cr("cr"), xb("xb"), xr("xr"), cbo("cbo"), cbi("cbi"), xbo("xbo"), xbi("xbi"), yn("yn");
    // Threads along the layout's dense dim, so a warp's loads and stores are contiguous; with
    // staged (channels-innermost) inputs that is the channel dim in either layout.
    const bool nhwc = p.channels_dense(layout);
    // vec: w's channels as vectors (its staged copy aligned; the generator requires C % vec == 0,
    // so the channel tiles, ShiftInwards included, start at multiples of vec).
    const bool vec = p.channel_vector() > 1;
    if (p.stage == 3) {
        stage_padded(g.dy_f);
    } else if (p.stage) {
        if (p.stage == 2 && layout == Layout::NCHW) stage_channels_innermost_shared(g.dy_f);
        else stage_channels_innermost(g.dy_f);
        stage_channels_innermost(g.w_f, p.channel_vector());
    }
    const int t_x = p.column_threads(layout), t_c = p.threads_c * p.threads_x / t_x;
    // colv: NCHW read in place, a thread's columns as vectors (loads of dy, stores of dx); the
    // generator requires rows and strides multiples of colv, and every tile shape below then has a
    // multiple of colv columns (the fallback too).
    const int colv = p.column_vector();

    // Tile shapes, first match wins (the conditions are built below, one per shape):
    //   first_layer: 3 or 4 channels (a network's first layer): 3 channels x tile_x columns per
    //     thread, a quarter block of threads (one NVIDIA warp) along the columns;
    //   few channels (<= 4): one channel per thread, 4 channel threads and the rest along the
    //     columns, instead of a block of mostly idle channel threads;
    //   narrow (rows of <= 2, 4 (or 8, where a block has 16 column threads) column tiles, where
    //     most column threads would idle): the register tile with that many column threads and
    //     the rest along channels;
    //   the params' register tile; with tile_x > 4, the same with 4 columns for narrower rows;
    //   fallback (-1): 1x1 for tiny problems.
    struct Shape { int tc, tx, thc, thx; };
    std::vector<Shape> shape_list;
    const int nthreads = t_c * t_x;
    std::vector<int> narrow_threads;  // column threads of the narrow shapes
    if (p.narrow)
        for (int thx : {2, 4, 8})
            if (thx < t_x) narrow_threads.push_back(thx);
    if (p.first_layer) shape_list.push_back({3, p.tile_x, 1, nthreads / 4});
    shape_list.push_back({1, p.tile_x, 4, nthreads / 4});
    for (int thx : narrow_threads) shape_list.push_back({p.tile_c, p.tile_x, nthreads / thx, thx});
    shape_list.push_back({p.tile_c, p.tile_x, t_c, t_x});
    const bool half_tile = p.tile_x > 4;  // rows narrower than a wide tile get a 4-column one
    if (half_tile) shape_list.push_back({p.tile_c, 4, t_c, t_x});
    auto shape_of = [&](int branch) { return branch >= 0 ? shape_list[branch] : Shape{1, colv, t_c, t_x}; };
    // The conditions for shape_list, given the columns a tile runs along.
    auto shape_conditions = [&](Expr columns) {
        std::vector<Expr> c;
        if (p.first_layer) c.push_back(a.C >= 3 && a.C <= 4 && columns >= p.tile_x);
        c.push_back(a.C <= 4 && columns >= p.tile_x);
        for (int thx : narrow_threads)
            c.push_back(a.C >= p.tile_c && columns >= p.tile_x && columns <= thx * p.tile_x);
        c.push_back(a.C >= p.tile_c && columns >= p.tile_x);
        if (half_tile) c.push_back(a.C >= p.tile_c && columns >= 4);
        return c;
    };
    // Splits cv into per-thread registers (cr) x threads x blocks, likewise xv; `rest` lists the
    // remaining pure vars of s, innermost first, so the loop order is explicit; rest[0] is the
    // row, rest[1] the image. Blocks: rows x images fused on one grid dim. fuse_rows: the column
    // tiles and the rows are one index (xb), which the column threads split, so a row's last
    // block does not idle (35 columns in tiles of 4: 9 tiles a row, 16 column threads took 2
    // blocks); the images are then a grid dim of their own.
    auto tile_thread = [&](Stage s, int branch, Var cv, Var xv, std::vector<VarOrRVar> rest) {
        Shape sh = shape_of(branch);
        s.split(cv, cb, cr, sh.tc, TailStrategy::ShiftInwards).split(xv, xb, xr, sh.tx, TailStrategy::ShiftInwards);
        std::vector<VarOrRVar> order = {cr, xr};
        if (nhwc) order.insert(order.end(), {cb, xb});
        else order.insert(order.end(), {xb, cb});
        order.insert(order.end(), rest.begin(), rest.end());
        s.reorder(order);
        Var xcol = xb;
        if (p.fuse_rows) {
            xcol = Var("xby");
            s.fuse(xb, rest[0].var, xcol);
        }
        if (nhwc)
            s.gpu_tile(cb, xcol, cbo, xbo, cbi, xbi, sh.thc, sh.thx, TailStrategy::GuardWithIf);
        else
            s.gpu_tile(xcol, cb, xbo, cbo, xbi, cbi, sh.thx, sh.thc, TailStrategy::GuardWithIf);
        if (p.fuse_rows) s.gpu_blocks(rest[1].var);
        else s.fuse(rest[0].var, rest[1].var, yn).gpu_blocks(yn);
        s.unroll(cr);
        if (colv > 1) {
            Var xro("xro"), xri("xri");
            s.split(xr, xro, xri, colv).reorder(xri, cr, xro).vectorize(xri).unroll(xro);
        } else {
            s.unroll(xr);
        }
    };

    const Var thread_inner = nhwc ? cbi : xbi;
    if (g.sx == 1 && g.sy == 1) {
        // dx is computed in place; with beta != 0 each element reads prev (dx) before its store,
        // so a shape is taken only where its tiles divide C and W (no tile shifted inwards over a
        // neighbour's stored elements); elsewhere the 1x1 fallback runs.
        std::vector<Expr> whole;
        for (const Shape &sh : shape_list) whole.push_back(a.C % sh.tc == 0 && a.W % sh.tx == 0);
        g.out.compute_root();
        for_each_branch(
            g.out, shape_conditions(a.W), g.beta,
            [&](Stage s, int branch) { tile_thread(s, branch, c, x, {y, n}); },
            whole);
        g.acc.compute_at(g.out, thread_inner);
    } else {
        Func stored = g.acc.in(g.dx);  // the phase array, computed once
        stored.compute_root();
        // Channels innermost in NHWC, so that both the phase kernel's stores and the gather's
        // loads run along a warp's channel threads (coalesced).
        if (nhwc) stored.reorder_storage(c, g.mx, g.phx, g.my, g.phy, n);
        Expr columns = (a.W + a.pad_left) / a.stride_w;  // a lower bound on the phase array's width
        for_each_branch(stored, shape_conditions(columns), Expr(), [&](Stage s, int branch) {
            // One launch per stride phase (the phase loops stay on the host): each kernel runs
            // one sub-filter, and a thread's tile lies in one phase.
            tile_thread(s, branch, c, g.mx, {g.my, n, g.phx, g.phy});
            // Compile-time stride: one launch per phase with its tap table folded to constants;
            // an empty phase's launch only writes zeros (its reduction folds away).
            if (g.sx > 0 && g.sy > 0) s.unroll(g.phx).unroll(g.phy);
        });
        g.acc.compute_at(stored, thread_inner);
        g.out.compute_root();
        for_each_branch(g.out, Halide::Internal::const_true(), g.beta, [&](Stage s, bool) {
            if (nhwc)
                s.gpu_tile(c, x, cb, xb, cr, xr, 64, 4, TailStrategy::GuardWithIf);
            else
                s.gpu_tile(x, c, xb, cb, xr, cr, 64, 4, TailStrategy::GuardWithIf);
            s.fuse(y, n, yn).gpu_blocks(yn);
        });
    }
    // Per thread: the accumulators in registers, the reduction loops outside them.
    // A thread's tile spans one row, one phase and one image; say so, since Halide cannot see
    // through the fused block index that these extents are 1.
    g.acc.bound_extent(g.my, 1).bound_extent(n, 1);
    g.acc.store_in(MemoryType::Register);
    // A thread's register tile, in both of acc's definitions: its columns unrolled (colv: the
    // columns innermost as vectors, then the channels, so one vector load of dy per k serves
    // tile_c vector FMAs), its channels unrolled or (vec) a vector.
    // vec with tiles of several vectors (tile_c 8, 16): the channels innermost in acc's storage, so
    // a tile's channel vector is dense (strided over the columns, c8x4's became one 32-lane value
    // that the PTX back end kept in local memory: a 384-byte stack frame, 0.02 of cuDNN).
    Var mxo("mxo"), mxi("mxi");
    if (vec && p.tile_c > p.channel_vector()) g.acc.reorder_storage(c, g.mx);
    auto register_tile = [&](Stage s) {
        if (colv > 1) s.split(g.mx, mxo, mxi, colv).reorder(mxi, c, mxo).vectorize(mxi).unroll(mxo);
        else s.unroll(g.mx);
        if (vec) s.vectorize(c);
        else s.unroll(c);
    };
    register_tile(g.acc);
    if (p.unroll_taps && fc != FilterClass::Any) {
        // A compile-time filter's taps along x unrolled inside the k loop: the columns of a tile
        // and its taps read overlapping dy (column m, tap j reads m - j), loaded once.
        g.acc.update()
            .reorder(c, g.mx, g.phx, g.r.y, g.r.x, g.r.z, g.my, g.phy, n)
            .unroll(g.r.y);
    } else if (p.tap_chunk > 0) {
        // A runtime filter's taps along x in chunks, unrolled inside the k loop: with dilation 1
        // (a specialisation) a tile's columns and a chunk's taps read overlapping dy, loaded once;
        // the last, partial chunk is guarded (the loop partition leaves the full ones unguarded).
        RVar jo("jo"), ji("ji");
        g.acc.update()
            .split(g.r.y, jo, ji, p.tap_chunk, TailStrategy::GuardWithIf)
            .reorder(c, g.mx, g.phx, ji, g.r.x, jo, g.r.z, g.my, g.phy, n)
            .unroll(ji);
    } else {
        g.acc.update().reorder(c, g.mx, g.phx, g.r.x, g.r.y, g.r.z, g.my, g.phy, n);
    }
    register_tile(g.acc.update());
    g.acc.update().unroll(g.phx);
    if (p.tap_chunk > 0) g.acc.update().specialize(a.groups == 1 && a.dilation_w == 1);
    g.acc.update().specialize(a.groups == 1);
}

namespace {
// Depthwise backward-weight's stage 2 (both thread mappings of stage 1): out and dw.
void schedule_depthwise_split_sums(BwdWeightGraph &g) {
    Var kbo("kbo"), kbi("kbi");
    // out: 32 (k, tap) outputs a block, the taps fused into the blocks (one launch; a launch per
    // filter row took 23 us each on MobileNet-v2's 144-channel layer, H100). A depthwise layer
    // has few outputs (K x taps: 1296 there) and many splits (600-1800), so each output's splits
    // are summed by kSplitLanes threads of the block (32 x 8 = 256 threads, the work-group size
    // every OpenCL device takes), lane u every kSplitLanes-th split from u,
    // in order, 4 loads in flight (rfactor), then the output's thread adds the lanes' sums in
    // order from shared memory: a fixed order, bit-identical from run to run. (A thread per
    // output summing every split took 160 us of that layer's 330 under Nsight Compute, 27 blocks
    // of 64 threads on the grid; with the lanes 5.9 us.)
    constexpr int kSplitLanes = 8;
    Var tap("tap"), u("u");
    RVar rso("rso"), rsi("rsi"), lo("lo"), li("li");
    g.out.compute_root();
    for_each_branch(g.out, Halide::Internal::const_true(), g.beta, [&](Stage s, bool) {
        s.reorder(g.k, g.cg, g.s, g.r)
            .split(g.k, kbo, kbi, 32, TailStrategy::GuardWithIf)
            .fuse(g.s, g.r, tap)
            .gpu_blocks(kbo, tap)
            .gpu_threads(kbi);
    });
    Func lanes = g.dw.update().split(g.rsp.x, rso, rsi, kSplitLanes, TailStrategy::GuardWithIf).rfactor(rsi, u);
    lanes.compute_at(g.out, kbo).reorder(g.k, u, g.cg, g.s, g.r).gpu_threads(g.k, u);
    lanes.update()
        .reorder(g.k, u, rso, g.cg, g.s, g.r)
        .split(rso, lo, li, 4, TailStrategy::GuardWithIf)
        .reorder(li, lo, g.k, u)
        .unroll(li)
        .gpu_threads(g.k, u);
    g.dw.compute_at(g.out, kbi);
}
}  // namespace

// Backward-weight. Stage 1 (ws, in the caller's workspace): one split per block column, one
// launch per filter tap (or, fuse_taps, each thread looping over the taps in one launch); each
// thread keeps tile_c x tile_k (x tile_s taps) partial sums in registers over its split's rows.
// Stage 2 (out): each thread sums its element's splits in a fixed order and applies alpha/beta.
void schedule_bwd_weight_gpu(BwdWeightGraph &g, const BwdWeightGpuParams &p, const ConvArgs &a, Layout layout,
                             StrideClass sc, FilterClass fc, GroupClass gc) {
    if (gc == GroupClass::Depthwise && p.col_lanes > 1) {
        // Depthwise, col_lanes: read in place, a warp's 32 lanes along the output columns (col_lanes)
        // x rows (NCHW: a warp per k, its dy loads consecutive columns of one plane) or x k (NHWC:
        // k_lanes consecutive channels, its loads col_lanes runs of them); x's loads are the same
        // shifted by the taps (which L1 serves). partial's reduction is rfactored over those lanes
        // (cols): each lane sums every tap of its k over its columns and rows of the split in
        // registers (R x S, a compile-time filter: valid()), the lanes write their sums to shared
        // memory (colw), and a thread per (tap, k) (NCHW) or per k (NHWC) adds a k's lanes in order
        // into ws: a fixed order, bit-identical from run to run. Blocks along k tiles of
        // depthwise_k_threads() and splits (gpu_weight_blocks_per_split()).
        const bool nchw = layout == Layout::NCHW;
        const int cl = p.col_lanes, kl = p.k_lanes, rl = depthwise_row_lanes(p), kw = depthwise_k_threads(p);
        const int taps = class_consts(sc, fc).filter;
        Var kbo("kbo"), kbi("kbi"), u("u"), v("v"), lane("lane"), tap("tap"), kwo("kwo"), kwi("kwi");
        RVar qo("qo"), qi("qi"), yo("yo"), yi("yi");
        Func cols = nchw ? g.partial.update()
                               .split(g.rr.x, qo, qi, cl, TailStrategy::GuardWithIf)
                               .split(g.rr.y, yo, yi, rl, TailStrategy::GuardWithIf)
                               .rfactor({{qi, u}, {yi, v}})
                         : g.partial.update().split(g.rr.x, qo, qi, cl, TailStrategy::GuardWithIf).rfactor(qi, u);
        g.ws.bound(g.s, 0, taps).bound(g.r, 0, taps).bound(g.cg, 0, 1);
        g.ws.split(g.k, kbo, kbi, kw, TailStrategy::GuardWithIf);
        Func colw = cols.in(g.partial);
        colw.compute_at(g.ws, kbo).store_in(MemoryType::GPUShared);
        if (nchw) {  // a warp's lanes (u, v) one k's
            g.ws.fuse(g.s, g.r, tap).reorder(tap, g.cg, kbi, kbo, g.sp).gpu_blocks(kbo, g.sp).gpu_threads(tap, kbi);
            g.partial.compute_at(g.ws, tap).store_in(MemoryType::Register);
            colw.reorder(g.s, g.r, g.cg, u, v, g.k, g.sp).fuse(u, v, lane).gpu_threads(lane, g.k);
        } else {  // a warp's lanes (k_lanes k, u), k innermost; ws a thread per k (the block's lanes x warps)
            g.ws.reorder(g.s, g.r, g.cg, kbi, kbo, g.sp).gpu_blocks(kbo, g.sp).gpu_threads(kbi).unroll(g.s).unroll(g.r);
            g.partial.compute_at(g.ws, kbi).store_in(MemoryType::Register).unroll(g.s).unroll(g.r);
            g.partial.update().unroll(g.s).unroll(g.r);
            colw.split(g.k, kwo, kwi, kl, TailStrategy::GuardWithIf)
                .reorder(g.s, g.r, g.cg, kwi, u, kwo, g.sp)
                .fuse(kwi, u, lane)
                .gpu_threads(lane, kwo);
        }
        colw.unroll(g.s).unroll(g.r).unroll(g.cg);
        cols.compute_at(colw, lane).store_in(MemoryType::Register).unroll(g.s).unroll(g.r).unroll(g.cg);
        if (nchw) cols.update().reorder(g.s, g.r, g.cg, qo, yo);
        else cols.update().reorder(g.s, g.r, g.cg, qo, g.rr.y);
        cols.update().unroll(g.s).unroll(g.r).unroll(g.cg);
        schedule_depthwise_split_sums(g);
        return;
    }
    if (gc == GroupClass::Depthwise) {
        // Depthwise (c = k = groups, cg has extent 1): a block of threads_c x threads_k threads
        // along k (x's channel is k; split_threads: some of them along the splits, below), tile_k
        // channels x tile_s taps of a filter row per thread,
        // every tap in one launch (valid() requires fuse_taps); blocks along k tiles and splits
        // (gpu_weight_blocks_per_split() counts them for the split). NCHW either stages x and dy
        // channels-innermost (stage=1: a warp's loads contiguous, at the cost of the copies) or
        // reads them in place (stage=0: a thread walks its own plane's rows, a warp's loads 32
        // planes apart, which L1 serves on small planes; col_lanes above puts the lanes along a plane).
        // tile_r: that many filter rows per thread too, so one pass over the split's columns
        // serves tile_r x tile_s taps (a column's dy is loaded once for all of them).
        // split_threads: the block's threads along k (depthwise_k_threads) x that many splits, so
        // that fewer k fill a block (16 k x 4 splits: a warp's loads are two runs of 16 channels).
        const int nthreads = depthwise_k_threads(p), ts = taps_per_thread(p);
        Var kb("kb"), kr("kr"), kbo("kbo"), kbi("kbi"), sb("sb"), si("si"), rb("rb"), ri("ri"), spo("spo"), spi("spi");
        if (p.stage) {
            stage_channels_innermost(g.x_f);
            stage_channels_innermost(g.dy_f);
        }
        std::vector<Expr> shapes = {a.K >= p.tile_k && a.S >= ts && a.R >= p.tile_r};
        for_each_branch(g.ws, shapes, Expr(), [&](Stage s, int branch) {
            const int tk = branch >= 0 ? p.tile_k : 1, tss = branch >= 0 ? ts : 1, trr = branch >= 0 ? p.tile_r : 1;
            s.split(g.k, kb, kr, tk, TailStrategy::ShiftInwards)
                .split(g.s, sb, si, tss, TailStrategy::ShiftInwards)
                .split(g.r, rb, ri, trr, TailStrategy::ShiftInwards)
                .split(kb, kbo, kbi, nthreads, TailStrategy::GuardWithIf);
            if (p.split_threads > 1)
                s.split(g.sp, spo, spi, p.split_threads, TailStrategy::GuardWithIf)
                    .reorder(si, ri, kr, g.cg, sb, rb, kbi, spi, kbo, spo)
                    .gpu_blocks(kbo, spo)
                    .gpu_threads(kbi, spi);
            else
                s.reorder(si, ri, kr, g.cg, sb, rb, kbi, kbo, g.sp).gpu_blocks(kbo, g.sp).gpu_threads(kbi);
            s.unroll(si).unroll(ri).unroll(kr);
        });
        g.partial.compute_at(g.ws, sb);
        g.partial.store_in(MemoryType::Register).unroll(g.s).unroll(g.r).unroll(g.cg).unroll(g.k);
        Stage upd = g.partial.update();
        RVar qo("qo"), qi("qi");
        if (p.unroll_q > 1)
            upd.split(g.rr.x, qo, qi, p.unroll_q, TailStrategy::GuardWithIf)
                .reorder(g.s, g.r, g.cg, g.k, qi, qo, g.rr.y)
                .unroll(qi);
        else
            upd.reorder(g.s, g.r, g.cg, g.k, g.rr.x, g.rr.y);
        upd.unroll(g.s).unroll(g.r).unroll(g.cg).unroll(g.k);
        schedule_depthwise_split_sums(g);
        return;
    }
    // Taps inside the thread (a loop around the reduction, not a fused grid index: through a
    // fused block index Halide could not bound a thread's tap to one point, and the kernels
    // faulted on the H100).
    const bool fuse_taps = p.fuse_taps;
    const int ts = taps_per_thread(p);
    Var cb("cb"), cr("cr"), kb("kb"), kr("kr"), cbo("cbo"), cbi("cbi"), kbo("kbo"), kbi("kbi"), tap("tap");
    Var sb("sb"), si("si"), ro("ro"), ri("ri");
    Expr Cg = a.C / a.groups;

    // cv: x's and dy's channels loaded as vectors (vec, on staged copies aligned to it; the
    // generator requires C and K multiples of it, so every channel tile starts at one).
    const int cv = p.channel_vector();
    if (p.stage) {  // x (its padding materialised: no bounds test in the main loop); dy too in NCHW
        stage_channels_innermost(g.x_f, cv);
        if (layout == Layout::NCHW || cv > 1) stage_channels_innermost(g.dy_f, cv);
    }

    // Tile shapes, first match wins.
    //   kFirstLayer (fuse_taps, not vec): 3 or 4 input channels (a network's first layer). A thread owns
    //     3 channels x tile_k x tile_s taps, so one x load serves tile_k * tile_s FMAs; threads
    //     run along k tiles and filter rows, blocks along k, rows and splits.
    //   kFewChannels (no fuse_taps, not vec): <= 4 input channels: one channel per thread, 4 channel
    //     threads and the rest along k.
    //   kTile: the params' register tile (with tile_s taps where S >= tile_s, if that stays
    //     within 48 accumulators); kTileNoTaps: the same without the tap tile, for S < tile_s.
    //     Fallback (-1): 1x1 (vec: one vector each way), tiny problems.
    enum Kind { kFirstLayer, kFewChannels, kTile, kTileNoTaps };
    struct Shape { Kind kind; int tc, tk, ts, thc, thk; };
    std::vector<Shape> kinds;
    std::vector<Expr> shapes;
    const int nthreads = p.threads_c * p.threads_k;
    if (fuse_taps) {
        if (cv == 1) {
            kinds.push_back({kFirstLayer, 3, p.tile_k, ts, 1, p.threads_k});
            shapes.push_back(takes_first_layer_tile(p, Cg, a.K, a.S));
        }
    } else if (cv == 1) {
        kinds.push_back({kFewChannels, 1, p.tile_k, 1, kFewChannelThreads, nthreads / kFewChannelThreads});
        shapes.push_back(takes_few_channels_tile(p, Cg, a.K));
    }
    // The register tile takes the taps too while it stays within 48 accumulators.
    const int ts_tile = p.tile_c * p.tile_k * ts <= 48 ? ts : 1;
    kinds.push_back({kTile, p.tile_c, p.tile_k, ts_tile, p.threads_c, p.threads_k});
    shapes.push_back(Cg >= p.tile_c && a.K >= p.tile_k && a.S >= ts_tile);
    if (ts_tile > 1) {
        kinds.push_back({kTileNoTaps, p.tile_c, p.tile_k, 1, p.threads_c, p.threads_k});
        shapes.push_back(Cg >= p.tile_c && a.K >= p.tile_k);
    }
    for_each_branch(g.ws, shapes, Expr(), [&](Stage s, int branch) {
        // The fallback's tile: 1x1, or one vector each way (C and K are multiples of it).
        Shape sh = branch >= 0 ? kinds[branch] : Shape{kTile, cv, cv, 1, p.threads_c, p.threads_k};
        s.split(g.cg, cb, cr, sh.tc, TailStrategy::ShiftInwards)
            .split(g.k, kb, kr, sh.tk, TailStrategy::ShiftInwards)
            .split(g.s, sb, si, sh.ts, TailStrategy::ShiftInwards);
        if (sh.kind == kFirstLayer) {
            // Threads: k tiles x filter rows (nthreads / threads_k of them, e.g. 8 for 7 rows).
            s.reorder(si, cr, kr, sb, kb, g.r, cb, g.sp)
                .gpu_tile(kb, g.r, kbo, ro, kbi, ri, sh.thk, nthreads / sh.thk, TailStrategy::GuardWithIf)
                .reorder(si, cr, kr, sb, kbi, ri, kbo, ro, g.sp, cb)
                .gpu_blocks(g.sp);
        } else {
            s.reorder(si, cr, kr, sb, cb, kb, g.r, g.sp)
                .gpu_tile(cb, kb, cbo, kbo, cbi, kbi, sh.thc, sh.thk, TailStrategy::GuardWithIf);
            if (fuse_taps)  // each thread loops over the taps: one launch
                s.reorder(si, cr, kr, sb, g.r, cbi, kbi, cbo, kbo, g.sp).gpu_blocks(g.sp);
            else  // the taps (s, r) stay host loops: one launch per tap
                s.reorder(si, cr, kr, cbi, kbi, cbo, kbo, g.sp, sb, g.r).gpu_blocks(g.sp);
        }
        s.unroll(si).unroll(cr).unroll(kr);
    });
    g.partial.compute_at(g.ws, fuse_taps ? sb : cbi);
    g.partial.store_in(MemoryType::Register).unroll(g.s).unroll(g.cg).unroll(g.k);
    Stage upd = g.partial.update();
    RVar qo("qo"), qi("qi");
    if (p.unroll_q > 1) {
        upd.split(g.rr.x, qo, qi, p.unroll_q, TailStrategy::GuardWithIf)
            .reorder(g.s, g.cg, g.k, qi, qo, g.rr.y)
            .unroll(qi);
    } else {
        upd.reorder(g.s, g.cg, g.k, g.rr.x, g.rr.y);
    }
    upd.unroll(g.s).unroll(g.cg).unroll(g.k);
    g.partial.update().specialize(a.groups == 1);
    if (cv > 1) {
        // One column block's x (its columns and taps) and dy, each thread's channels as vectors,
        // loaded once into registers: 16-byte loads, none inside the FMAs. Their extents are the
        // tile's only where a k tile stays in one group, so these kernels take groups == 1 (the
        // dispatcher checks first).
        g.partial.update().specialize_fail("vec kernels take groups == 1");
        // x_row (xx, r, c, row), dy_row (q, k, row): the block's columns (unrolled) x one row
        // (and filter row), its channels as vectors.
        Var co("co"), ci("ci");
        const LoopLevel at(g.partial, p.unroll_q > 1 ? VarOrRVar(qo) : VarOrRVar(g.rr.x));
        auto in_registers = [&](Func f, int chan) {
            Var cols = f.args()[0], c = f.args()[chan];
            f.compute_at(at)
                .store_in(MemoryType::Register)
                .split(c, co, ci, cv)
                .reorder(ci, co)
                .vectorize(ci)
                .unroll(co)
                .unroll(cols);
        };
        in_registers(g.x_row.in(g.partial), 2);
        in_registers(g.dy_row.in(g.partial), 1);
    }

    schedule_weight_output_gpu(g, &a);
}

}  // namespace convbwd

namespace convbwd {

namespace {
// The block of a matrix-fragment kernel: res(i, l, mt, ct, ...), its tile_m x tile_n fragments in
// shared memory with a fixed extent (no guard reaches acc), computed at `at` with the lanes l as
// threads; acc (the same dims) per lane in registers, computed inside the lane at the innermost of
// `in_lane` (loops of res inside the lane, innermost first) or at the lane, its update's reduction
// loops `reduction` (innermost first) inside that. `outer`: res's other dims, innermost first.
// Every element, fragment and lane call is unrolled. wm x wn > 1: the block is
// wm x wn warps along mt and ct, each with its tm x tn fragments (acc in its registers), a thread
// lane l of warp (mw, cw), the lanes innermost (a warp is 32 consecutive threads).
void schedule_fragment_block(Func res, Func acc, const frag::Shape &fs, int tm, int tn, LoopLevel at,
                             const std::vector<VarOrRVar> &in_lane, const std::vector<VarOrRVar> &outer,
                             const std::vector<VarOrRVar> &reduction, int wm = 1, int wn = 1) {
    const std::vector<Var> d = res.args();
    const Var i = d[0], l = d[1], mt = d[2], ct = d[3];
    res.bound(i, 0, fs.elems).bound(l, 0, fs.lanes);
    res.compute_at(at).store_in(MemoryType::GPUShared).bound_extent(mt, tm * wm).bound_extent(ct, tn * wn);
    // The block's order, innermost first: a thread's elements and fragments, the loops inside the
    // lane, the lane (and the warp along mt and ct: wm x wn > 1), then the rest.
    const bool warps = wm * wn > 1;
    Var mw("mw"), mi("mi"), cw("cw"), cx("cx"), th("th"), wth("wth");
    if (warps) res.split(mt, mw, mi, tm).split(ct, cw, cx, tn);
    const VarOrRVar m_in = warps ? VarOrRVar(mi) : VarOrRVar(mt), c_in = warps ? VarOrRVar(cx) : VarOrRVar(ct);
    std::vector<VarOrRVar> order = {i, m_in, c_in};
    order.insert(order.end(), in_lane.begin(), in_lane.end());
    order.push_back(l);
    if (warps) order.insert(order.end(), {mw, cw});
    order.insert(order.end(), outer.begin(), outer.end());
    res.reorder(order);
    if (warps) res.fuse(l, mw, th).fuse(th, cw, wth);
    const VarOrRVar thread = warps ? VarOrRVar(wth) : VarOrRVar(l);
    res.gpu_threads(thread).unroll(i).unroll(m_in).unroll(c_in);
    std::vector<VarOrRVar> lane_and_out = in_lane;
    lane_and_out.push_back(l);
    lane_and_out.insert(lane_and_out.end(), outer.begin(), outer.end());
    acc.compute_at(LoopLevel(res, in_lane.empty() ? thread : in_lane.back())).store_in(MemoryType::Register);
    acc.unroll(i).unroll(mt).unroll(ct);
    std::vector<VarOrRVar> upd = {mt, ct};  // the update stores every element i at once (frag::mma)
    upd.insert(upd.end(), reduction.begin(), reduction.end());
    upd.insert(upd.end(), lane_and_out.begin(), lane_and_out.end());
    acc.update().reorder(upd).unroll(mt).unroll(ct);
}

// vec > 1: a lane's operand groups of a k-block (g.a_lane, g.b_lane: vectors along e) loaded into
// registers before the k-block's calls. unroll > 1: acc's k-block loop g.kb.x runs `unroll`
// k-blocks a step (the algorithm rounds the k-blocks up to a multiple: no tail), every operand of
// the step loaded before its first fragment. One schedule for both fragment families' graphs.
template <class Graph>
void fragment_lanes_per_step(Graph &g, Func acc, int unroll) {
    LoopLevel at(acc, g.kb.x);
    if (unroll > 1) {
        RVar kxo("kxo"), kxi("kxi");
        acc.update().split(g.kb.x, kxo, kxi, unroll).unroll(kxi);
        at = LoopLevel(acc, kxo);
    }
    g.a_lane.compute_at(at).store_in(MemoryType::Register).bound(g.e, 0, g.vec).vectorize(g.e)
        .unroll(g.h).unroll(g.mt).unroll(g.kx);
    g.b_lane.compute_at(at).store_in(MemoryType::Register).bound(g.e, 0, g.vec).vectorize(g.e)
        .unroll(g.ct).unroll(g.kx);
}

// A copy's grid as one flat dim: its block index blk (of its first two dims) fused with every
// further dim of f, as gpu_blocks (no 65535 limit on a dim). Returns f for the thread dims.
Func flat_grid(Func f, Var blk) {
    const std::vector<Var> v = f.args();
    for (size_t d = 2; d < v.size(); d++) {
        Var wider("blk" + std::to_string(d));
        f.fuse(blk, v[d], wider);
        blk = wider;
    }
    return f.gpu_blocks(blk);
}
// A copy f(q, c, rest...) with the columns q innermost (rows aligned to the vector `vec`) from a
// tensor with the channels c innermost: a thread per channel (coalesced reads along c), each
// writing `vec` columns as one vector; one flat grid of blocks (no 65535 limit on a dim). (16
// columns a thread, or the grid's dims unfused, measured 5-15% slower on the H100; a thread
// looping over 16 vectors of a row 1.4-1.6x slower: these copies wait on memory, and the most
// threads in flight serve them best. Staged through shared memory, 32 columns x 64 channels a
// block: dy's copy 28 us against 34, x's the same, but the call 0.46 ms against 0.29 with 0.26 ms
// of kernels; docs/PERFORMANCE.md, "pixel-group copies".)
// From an NCHW tensor (columns innermost already): 4 threads along the vectors of a row x 32 along
// the channels, so a warp reads one 32-byte sector of each of 8 rows (16-bit data) and a row of 1-4
// columns (U-Net's 4x4 valid layer: q = 1) leaves 3 of 4 threads idle, not 15 of 16 (H200, bf16: a
// first version of 16 x 8 threads ran that layer 0.135 ms, the register tiles 0.093).
void schedule_column_copy(Func f, int vec, Layout layout) {
    const std::vector<Var> v = f.args();
    Var qo("qo"), qi("qi"), co("co"), ci("ci"), blk("blk"), qoo("qoo"), qoi("qoi"), th("th");
    f.compute_root()
        .align_storage(v[0], vec)
        .align_bounds(v[0], vec)
        .split(v[0], qo, qi, vec);
    std::vector<VarOrRVar> order;
    Var thread = ci;  // NHWC: a thread per channel; NCHW: th = (vector of the row, channel)
    if (layout == Layout::NCHW) {
        f.split(qo, qoo, qoi, 4, TailStrategy::GuardWithIf).split(v[1], co, ci, 32, TailStrategy::GuardWithIf);
        order = {qi, qoi, ci, qoo, co};
    } else {
        f.split(v[1], co, ci, 64, TailStrategy::GuardWithIf);
        order = {qi, ci, qo, co};
    }
    order.insert(order.end(), v.begin() + 2, v.end());
    f.reorder(order).vectorize(qi);
    if (layout == Layout::NCHW) {
        f.fuse(qoi, ci, th).fuse(qoo, co, blk);
        thread = th;
    } else {
        f.fuse(qo, co, blk);
    }
    flat_grid(f, blk).gpu_threads(thread);
}
// The same copy from an NHWC tensor through grouped(v, q, g, rest...) = f(q, 8 g + v, rest...) (the
// algorithm's copy_groups): a thread per 4-column vector of a row (vec) and group of 8 channels loads
// the group at each of its columns as one 16-byte vector (grouped, in registers: vectors along v)
// and writes each channel's columns as one vector; a warp is 8 column vectors x 4 groups, so its
// loads read 4 whole groups (64 contiguous bytes) of a pixel and its stores 8 vectors (64 contiguous
// bytes) of a channel's row: whole 32-byte sectors both ways, where schedule_column_copy's thread
// per channel stores 8 bytes into a sector of each row. 8 x 8 threads a block; one flat grid, but
// for xs's tap column on the grid's y (below).
void schedule_grouped_column_copy(Func f, Func grouped, Var gv, int vec, Expr channels) {
    const int G = kStagedChannelGroup;
    const std::vector<Var> v = f.args(), w = grouped.args();
    Var qo("qo"), qi("qi"), co("co"), ci("ci"), qoo("qoo"), qoi("qoi"), coo("coo"), coi("coi"), blk("blk");
    f.compute_root()
        .align_storage(v[0], vec)
        .align_bounds(v[0], vec)
        .bound(v[1], 0, channels)  // whole groups from 0 (channels a multiple of G): each store's place in its group a constant
        .split(v[0], qo, qi, vec)
        .split(v[1], co, ci, G)
        .split(qo, qoo, qoi, 8, TailStrategy::GuardWithIf)
        .split(co, coo, coi, 8, TailStrategy::GuardWithIf);
    std::vector<VarOrRVar> order = {qi, ci, qoi, coi, qoo, coo};
    order.insert(order.end(), v.begin() + 2, v.end());
    f.reorder(order).vectorize(qi).unroll(ci).fuse(qoo, coo, blk);
    if (v.size() == 5) {
        // xs (q, c, s, y, n): the tap column s on the grid's y (fused into x as well, its realized
        // place in `grouped` became a run-time index and the registers a stack array), y and n fused
        // into x.
        Var wide("blk3"), wider("blk4");
        f.fuse(blk, v[3], wide).fuse(wide, v[4], wider).gpu_blocks(wider, v[2]);
    } else {
        flat_grid(f, blk);
    }
    f.gpu_threads(qoi, coi);
    grouped.compute_at(f, qoi).store_in(MemoryType::Register).bound(gv, 0, G).bound_extent(w[1], vec).vectorize(gv).unroll(w[1]);
    // The thread's group and its row (image, tap column): one each.
    for (size_t d = 2; d < w.size(); d++) grouped.bound_extent(w[d], 1);
}
// The reverse: a copy f(k, q, rest...) with the channels k innermost (rows aligned to `vec`) from an
// NCHW tensor (columns innermost): a thread per column and group of `vec` channels, a warp along 32
// columns of each of its channels (coalesced reads), each thread writing its group as one vector;
// 32 columns x 8 groups a block, one flat grid.
void schedule_channel_copy(Func f, int vec) {
    const std::vector<Var> v = f.args();
    Var ko("ko"), ki("ki"), qo("qo"), qi("qi"), koo("koo"), koi("koi"), blk("blk");
    f.compute_root()
        .align_storage(v[0], vec)
        .align_bounds(v[0], vec)
        .split(v[0], ko, ki, vec)
        .split(v[1], qo, qi, 32, TailStrategy::GuardWithIf)
        .split(ko, koo, koi, 8, TailStrategy::GuardWithIf);
    std::vector<VarOrRVar> order = {ki, qi, koi, qo, koo};
    order.insert(order.end(), v.begin() + 2, v.end());
    f.reorder(order).vectorize(ki).fuse(qo, koo, blk);
    flat_grid(f, blk).gpu_threads(qi, koi);
}
}  // namespace

namespace {
// The staged families' blocks (conv_bwd_data_staged_gpu, conv_bwd_weight_staged_gpu): every stage of
// a block on the same two thread dims, x of extent tx (innermost) and y of ty (Halide sizes the block
// by each dim's widest loop). spread_over_block: a stage's element loop e over them, consecutive
// threads taking consecutive elements, the thread loops outermost (serial loops outside them would
// be a thread loop, and a barrier, each). Returns the y thread loop (what compute_with fuses at).
Var spread_over_block(Stage st, Var e, int tx, int ty) {
    Var eo("eo"), ei("ei"), el("el"), eh("eh");
    st.split(e, eo, ei, tx * ty, TailStrategy::GuardWithIf)
        .split(ei, eh, el, tx)
        .reorder(eo, el, eh)
        .gpu_threads(el, eh)
        .unroll(eo);
    return eh;
}
// The block's accumulators acc(ry, rx, y, x, outer...) in shared memory at `block`: thread (x, y)
// (x of extent tx, y of ty) owns ny x nx of them (unrolled); the update's reduction loops `red`
// (innermost first) run outside the thread loops, so each step is a pass of the block's threads.
void schedule_block_accumulators(Func acc, LoopLevel block, int ny, int nx, int ty, int tx,
                                 const std::vector<VarOrRVar> &outer, const std::vector<VarOrRVar> &red) {
    const std::vector<Var> d = acc.args();
    const Var ry = d[0], rx = d[1], y = d[2], x = d[3];
    acc.compute_at(block)
        .store_in(MemoryType::GPUShared)
        .bound_extent(ry, ny)
        .bound_extent(rx, nx)
        .bound_extent(y, ty)
        .bound_extent(x, tx);
    for (Stage st : {Stage(acc), acc.update()}) {
        std::vector<VarOrRVar> order = {ry, rx, x, y};
        order.insert(order.end(), outer.begin(), outer.end());
        if (st.name() != acc.name()) order.insert(order.end(), red.begin(), red.end());
        st.reorder(order).gpu_threads(x, y).unroll(ry).unroll(rx);
    }
}
// A thread's `width` consecutive elements along `dim` of the staged chunk `staged`, read as one
// vector into registers at `consumer`'s loop `at` (a scalar read per element made the sums wait on
// shared memory).
void read_tile_as_vector(Func staged, Func consumer, VarOrRVar at, Var dim, int width) {
    staged.in(consumer).compute_at(LoopLevel(consumer, at)).store_in(MemoryType::Register).bound_extent(dim, width).vectorize(dim);
}
// A per-chunk pixel table tab(f, j, ...) (f < fields, j < pixels) in shared memory at `chunk`, a
// pixel per thread (its element loop renamed to `e` and spread over the block by `spread`).
template <class Spread>
void schedule_pixel_table(Func tab, LoopLevel chunk, int fields, int pixels, Var e, Spread spread) {
    const std::vector<Var> t = tab.args();
    tab.compute_at(chunk).store_in(MemoryType::GPUShared).bound(t[0], 0, fields).bound_extent(t[1], pixels)
        .reorder(t[0], t[1]).unroll(t[0]).rename(t[1], e);
    spread(tab);
}
}  // namespace

namespace {
// A Winograd transform f(kx, tl, e) (a channel kx of tile tl at point e) at the root, from its input
// tile in(u, v, kx, tl) in registers: a thread per channel and tile, the points unrolled (the
// matrices' zeros and ones fold away), threads along the layout's dense dim, stored as the staged
// copies read it (NHWC: the channels innermost; NCHW: the tiles).
void schedule_transform_root(Func f, Func in, int points, bool nhwc) {
    const std::vector<Var> a = f.args(), b = in.args();
    const Var &kx = a[0], &tl = a[1], &e = a[2];
    Var to("to"), ti("ti"), kxo("kxo"), kxi("kxi");
    f.compute_root().bound(e, 0, points);
    if (nhwc) {
        f.split(kx, kxo, kxi, 32, TailStrategy::GuardWithIf).split(tl, to, ti, 4, TailStrategy::GuardWithIf)
            .reorder(e, kxi, ti, to, kxo).gpu_threads(kxi, ti).gpu_blocks(to, kxo);
    } else {
        f.reorder_storage(tl, kx, e).split(tl, to, ti, 128, TailStrategy::GuardWithIf)
            .reorder(e, ti, to, kx).gpu_threads(ti).gpu_blocks(to, kx);
    }
    f.unroll(e);
    in.compute_at(f, nhwc ? kxi : ti).store_in(MemoryType::Register).unroll(b[0]).unroll(b[1]);
}

// Winograd's transforms around the staged GEMM (define_bwd_data_winograd), a thread per element
// pair, its alpha^2 points unrolled (the transform matrices' zeros and ones fold away), threads
// along the layout's dense dim: dy's tile (dt, registers) -> vt at the root (stored as the GEMM's
// copy reads it: the tiles innermost for NCHW, k for NHWC); dx from a tile's alpha^2 products (mt,
// registers), m x m pixels a thread. The transformed filter (wt) is the staged family's w copy.
void schedule_winograd_transforms(BwdDataStagedGraph &g, Layout layout) {
    const bool nhwc = layout == Layout::NHWC;
    const int points = g.alpha * g.alpha;
    schedule_transform_root(g.vt, g.dt, points, nhwc);

    Var xo("xo"), xi("xi"), yo("yo"), yi("yi"), xoo("xoo"), xoi("xoi"), co("co"), ci("ci"), yn("yn");
    const int m = g.wino_m;
    for_each_branch(g.out, Halide::Internal::const_true(), g.beta, [&](Stage s, bool) {
        s.split(g.x, xo, xi, m, TailStrategy::GuardWithIf).split(g.y, yo, yi, m, TailStrategy::GuardWithIf);
        if (nhwc) {
            s.split(g.c, co, ci, 32, TailStrategy::GuardWithIf).split(xo, xoo, xoi, 4, TailStrategy::GuardWithIf)
                .reorder(xi, yi, ci, xoi, co, xoo, yo, g.n);
        } else {
            s.split(xo, xoo, xoi, 16, TailStrategy::GuardWithIf).split(g.c, co, ci, 8, TailStrategy::GuardWithIf)
                .reorder(xi, yi, xoi, ci, xoo, co, yo, g.n);
        }
        s.fuse(yo, g.n, yn).gpu_threads(nhwc ? ci : xoi, nhwc ? xoi : ci).gpu_blocks(nhwc ? co : xoo, nhwc ? xoo : co, yn)
            .unroll(xi).unroll(yi);
    });
    // One tile and channel a thread (bounds inference cannot see it through the guarded tails).
    g.mt.compute_at(g.out, nhwc ? ci : xoi).store_in(MemoryType::Register).bound_extent(g.e, points)
        .bound_extent(g.mt.args()[1], 1).bound_extent(g.tl, 1).unroll(g.e);
}
}  // namespace

// Backward-data staged per block (conv_bwd_data_staged_gpu; define_bwd_data_staged): a block
// of threads_c x threads_x threads per (pixel tile, image, channel tile). Per tap and chunk of k
// (the block's serial loop), the block copies the chunk's dy pixels and w channels into shared
// memory (a thread loop outermost, each thread taking every threads-th element: consecutive
// threads read consecutive addresses, along k for NHWC dy, along the pixels for NCHW), then each
// thread sums its tile_x x tile_c tile over the chunk in registers (cp) and adds it into the
// block's accumulators in shared memory (partial). Halide keeps a thread's registers only inside
// the thread loops, so the accumulators cross the chunk loop in shared memory.
void schedule_bwd_data_staged_gpu(BwdDataStagedGraph &g, const BwdDataStagedGpuParams &p, Layout layout) {
    const int tx = p.threads_x, tc = p.threads_c;
    const int bp = data_block_pixels(p), bc = data_block_channels(p);
    const bool nhwc = layout == Layout::NHWC;
    Var po("po"), pi("pi"), co("co"), ci("ci"), pn("pn"), e("e");
    // Threads tc (x) by tx (y).
    auto spread = [&](Stage st) { return spread_over_block(st, e, tc, tx); };
    // w with the channels innermost, once per call (a flat grid).
    {
        const std::vector<Var> v = g.wt.args();  // (c, k, s, r)
        Var wco("wco"), wci("wci"), blk("blk"), blk2("blk2");
        g.wt.compute_root()
            .split(v[0], wco, wci, 64, TailStrategy::GuardWithIf)
            .reorder(wci, wco, v[1], v[2], v[3])
            .fuse(wco, v[1], blk)
            .fuse(blk, v[2], blk2)
            .fuse(blk2, v[3], blk)
            .gpu_blocks(blk)
            .gpu_threads(wci);
    }
    // dxf: a block per (pixel tile, image) x channel tile, its tile stored from partial with the
    // threads along the layout's dense dim (out then copies it into dx the same way).
    // (Its bounds start at whole tiles, so that a block's tile is one pb and one cb.)
    if (nhwc) g.dxf.reorder_storage(g.c, g.pix, g.n);
    g.dxf.compute_root()
        .align_bounds(g.pix, bp)
        .align_bounds(g.c, bc)
        .split(g.pix, po, pi, bp, TailStrategy::GuardWithIf)
        .split(g.c, co, ci, bc, TailStrategy::GuardWithIf);
    if (nhwc) g.dxf.reorder(ci, pi, po, g.n, co).fuse(ci, pi, e);
    else g.dxf.reorder(pi, ci, po, g.n, co).fuse(pi, ci, e);
    g.dxf.fuse(po, g.n, pn).gpu_blocks(pn, co);
    spread(g.dxf);
    const LoopLevel block(g.dxf, pn);
    schedule_block_accumulators(g.partial, block, p.tile_x, p.tile_c, tx, tc, {g.pb, g.cb, g.n}, {g.rc.x, g.rc.y, g.rc.z});
    g.cp.compute_at(LoopLevel(g.partial, g.ct)).store_in(MemoryType::Register).unroll(g.xr).unroll(g.cr);
    g.cp.update()
        .reorder(g.xr, g.cr, g.kb.x, g.xt, g.ct, g.pb, g.cb, g.n, g.kcv, g.sv, g.rv)
        .unroll(g.xr)
        .unroll(g.cr)
        .unroll(g.kb.x);
    // A k's tile_x pixels and tile_c channels of the thread, each read from the chunk as one vector
    // into registers (as the staged backward-weight kernels do).
    read_tile_as_vector(g.as, g.cp, g.kb.x, g.j, p.tile_x);
    read_tile_as_vector(g.bs, g.cp, g.kb.x, g.j, p.tile_c);
    const LoopLevel chunk(g.partial, g.rc.x);
    // dy's chunk: pixels innermost in shared memory, rows of staged_dy_row_words().
    g.as.compute_at(chunk).store_in(MemoryType::GPUShared).bound_extent(g.kk, p.block_k).bound_extent(g.j, bp)
        .reorder_storage(g.j, g.kk).align_storage(g.j, staged_dy_row_words(p));
    // NHWC: consecutive threads along k (coalesced loads), each storing 4 consecutive pixels of its k
    // as one vector (a column store per element put 4 threads of a phase on one bank), the pixels'
    // columns and rows read from tab, computed once per chunk (per element, the divisions by W cost
    // as much as the copy). (Once per block, at dxf's block loop, it read wrong values on CUDA and
    // PoCL alike: the conformance run caught it.)
    if (nhwc) {
        Var jo("jo"), jv("jv");
        g.as.split(g.j, jo, jv, 4).reorder(jv, g.kk, jo).vectorize(jv).fuse(g.kk, jo, e);
        if (!g.wino_m) {
            schedule_pixel_table(g.tab, chunk, p.fold_images ? 3 : 2, bp, e, spread);  // (column, row[, image]) of each pixel
            // Three fields: each stored with the pixels innermost, so that a thread's 4 pixels load as one
            // 4-vector per field (interleaved, a 12-wide vector, which OpenCL C lacks).
            if (p.fold_images) g.tab.reorder_storage(g.tab.args()[1], g.tab.args()[0]);
        }
    } else {
        g.as.reorder(g.j, g.kk).fuse(g.j, g.kk, e);
    }
    const Var as_y = spread(g.as);
    g.bs.compute_at(chunk).store_in(MemoryType::GPUShared).bound_extent(g.j, bc).bound_extent(g.kk, p.block_k)
        .fuse(g.j, g.kk, e);
    spread(g.bs);
    // NCHW: both copies in one loop nest over the threads (one barrier before the sums, not two).
    // NHWC's dy copy runs along k and w's along the channels: compute_with needs one loop order.
    if (!nhwc) g.bs.compute_with(g.as, as_y);

    if (g.wino_m) {
        schedule_winograd_transforms(g, layout);
        return;
    }
    Var xo("xo"), xi("xi"), yn("yn");
    for_each_branch(g.out, Halide::Internal::const_true(), g.beta, [&](Stage s, bool) {
        if (nhwc) s.gpu_tile(g.c, g.x, co, xo, ci, xi, 32, 8, TailStrategy::GuardWithIf);
        else s.gpu_tile(g.x, g.c, xo, co, xi, ci, 32, 8, TailStrategy::GuardWithIf);
        s.fuse(g.y, g.n, yn).gpu_blocks(yn);
    });
}

// Backward-weight staged per block (conv_bwd_weight_staged_gpu; define_bwd_weight_staged): a block of
// threads_c x threads_k threads per (channel tile x k tile, tap, split), its grid
// (tiles, taps, splits). Per chunk of block_p pixels (the block's serial loop) the block copies dy's
// and x's pixels into shared memory (consecutive threads along the layout's dense dim: the channels
// in NHWC, the pixels in NCHW; rows of staged_channel_row_words() so that NCHW's column stores
// spread over the banks), then each thread sums its tile_k x tile_c tile over the chunk in
// registers (cp) and adds it into the block's accumulators in shared memory (partial), as the
// staged backward-data kernels do. ws (the split's partial sums) is written from them; dw sums the
// splits and out scales, as conv_bwd_weight_gpu's.
void schedule_bwd_weight_staged_gpu(BwdWeightStagedGraph &g, const BwdWeightStagedGpuParams &p, Layout layout) {
    const int tc = p.threads_c, tk = p.threads_k;
    const int bc = weight_block_channels(p), bk = weight_block_k(p);
    const bool nhwc = layout == Layout::NHWC;
    Var co("co"), ci("ci"), ko("ko"), ki("ki"), e("e"), tile("tile"), tap("tap"), io("io"), iv("iv");
    // Threads tc (x) by tk (y).
    auto spread = [&](Stage st) { return spread_over_block(st, e, tc, tk); };
    g.ws.compute_root()
        .split(g.cg, co, ci, bc, TailStrategy::GuardWithIf)
        .split(g.k, ko, ki, bk, TailStrategy::GuardWithIf)
        .reorder(ci, ki, g.s, g.r, co, ko, g.sp)
        .fuse(ci, ki, e)
        .fuse(co, ko, tile)
        .fuse(g.s, g.r, tap)
        .reorder(e, tile, tap, g.sp)
        .gpu_blocks(tile, tap, g.sp);
    spread(g.ws);
    const LoopLevel block(g.ws, tile);
    schedule_block_accumulators(g.partial, block, p.tile_k, p.tile_c, tk, tc, {g.kb, g.cb, g.s, g.r, g.sp}, {g.rc.x});
    g.cp.compute_at(LoopLevel(g.partial, g.ct)).store_in(MemoryType::Register).unroll(g.kr).unroll(g.cr);
    g.cp.update()
        .reorder(g.kr, g.cr, g.pb.x, g.kt, g.ct, g.kb, g.cb, g.s, g.r, g.sp, g.kcv)
        .unroll(g.kr)
        .unroll(g.cr)
        .unroll(g.pb.x);
    // A pixel's tile_k k and tile_c channels of the thread, each read from the chunk as one vector.
    read_tile_as_vector(g.as, g.cp, g.pb.x, g.i, p.tile_k);
    read_tile_as_vector(g.bs, g.cp, g.pb.x, g.i, p.tile_c);
    const LoopLevel chunk(g.partial, g.rc.x);
    Var copy_y;  // the copies' y thread loop
    for (auto [f, width] : {std::pair{g.as, bk}, std::pair{g.bs, bc}}) {
        f.compute_at(chunk).store_in(MemoryType::GPUShared).bound_extent(g.i, width).bound_extent(g.j, p.block_p)
            .align_storage(g.i, staged_channel_row_words(width)).split(g.i, io, iv, 4).vectorize(iv);
        // 4 channels a thread, stored as one vector. NHWC: consecutive threads along the channels
        // (coalesced loads), each pixel's column, row and image read from tab, computed once per
        // chunk (each element dividing by Q and P again cost more than the sums). NCHW: along the
        // pixels (coalesced; with threads a multiple of block_p each thread keeps one pixel, whose
        // row and column it computes once per chunk: tab inlined).
        if (nhwc) f.reorder(iv, io, g.j).fuse(io, g.j, e);
        else f.reorder(iv, g.j, io).fuse(g.j, io, e);
        copy_y = spread(f);
    }
    if (nhwc) schedule_pixel_table(g.tab, chunk, g.tab_fields, p.block_p, e, spread);  // (column, row, image)
    g.bs.compute_with(g.as, copy_y);  // both copies in one loop nest: one barrier before the sums

    if (!g.wino_m) {
        schedule_weight_output_gpu(g);
        return;
    }
    // Winograd: dy's tiles and x's windows transformed at the root.
    schedule_transform_root(g.ut, g.dt, g.alpha * g.alpha, nhwc);
    schedule_transform_root(g.vt, g.xw, g.alpha * g.alpha, nhwc);
    // out: a thread per (c, k) makes its r x r taps (unrolled: the matrices' zeros fold away) from the
    // alpha^2 points' sums over the splits, which it keeps in registers (dw): each point read once
    // (a block per tap re-read all of them for every tap: 9x the workspace's traffic, 0.3x the
    // register tiles' speed on 16x16 planes of 1024 channels).
    Var cbo("cbo"), cbi("cbi"), kbo("kbo"), kbi("kbi");
    g.out.compute_root();
    for_each_branch(g.out, Halide::Internal::const_true(), g.beta, [&](Stage st, bool) {
        st.reorder(g.s, g.r, g.cg, g.k)
            .gpu_tile(g.cg, g.k, cbo, kbo, cbi, kbi, 32, 4, TailStrategy::GuardWithIf)
            .unroll(g.s)
            .unroll(g.r);
    });
    g.dw.compute_at(g.out, cbi).store_in(MemoryType::Register).bound_extent(g.s, g.alpha).bound_extent(g.r, g.alpha)
        .bound_extent(g.cg, 1).bound_extent(g.k, 1).unroll(g.s).unroll(g.r);
    g.dw.update().reorder(g.s, g.r, g.rsp.x).unroll(g.s).unroll(g.r);
}

namespace {
// Matrix fragments, staged (conv_bwd_data_mma_gpu, stage > 0: BwdDataMmaGraph's staged chunks): a
// block of warps_m x warps_n warps, the threads (lane, warp along the pixels, warp along the
// channels) in every stage (the lanes' loops are 32 wide; a stage with fewer thread dimensions would
// run in the first warp only). Per chunk (the block's serial loops over the chunks, then the taps):
// the copies of dy's and wt's k-blocks (a thread loads 8 channels of one slot / input channel as one
// vector; stored channels innermost, 32 bytes a row of a k-block, so the 8 rows a fragment's lanes
// read are 256 contiguous bytes); then every warp's fragments of the chunk's k-blocks (unrolled) from
// shared memory onto its accumulators. Those are acc, in each thread's registers over the whole
// reduction: stored at the block in registers (Halide stripes them over the lanes) with the warps
// loops over threads, the update's races (every warp "updates the same" acc) allowed because each
// warp's copy is its own. res then puts each warp's fragments at their place in shared memory, and
// out reads them along the channels.
void schedule_bwd_data_mma_staged(BwdDataMmaGraph &g, const BwdDataMmaGpuParams &p) {
    const frag::Shape fs = frag::shape(p.frag);
    const int tm = p.tile_m, tn = p.tile_n, wm = p.warps_m, wn = p.warps_n, threads = fs.lanes * wm * wn;
    Var xo("xo"), xi("xi"), co("co"), ci("ci"), yn("yn"), t("t"), to("to"), ti("ti"), tx("tx"), ty("ty"), tz("tz");
    for_each_branch(g.out, Halide::Internal::const_true(), g.beta, [&](Stage s, bool) {
        s.split(g.x, xo, xi, g.block_pixels, TailStrategy::GuardWithIf)
            .split(g.c, co, ci, fs.N * tn * wn, TailStrategy::GuardWithIf)
            .reorder(ci, xi, co, xo, g.y, g.n)
            .fuse(g.y, g.n, yn)
            .fuse(ci, xi, t)
            .split(t, to, ti, threads)
            .split(ti, ty, tx, fs.lanes)
            .split(ty, tz, ty, wm)
            .gpu_blocks(co, xo, yn)
            .gpu_threads(tx, ty, tz);
    });
    const LoopLevel block(g.out, co);
    Var mw("mw"), mi("mi"), cw("cw"), cx("cx");
    g.res.compute_at(block)
        .store_in(MemoryType::GPUShared)
        .bound(g.i, 0, fs.elems)
        .bound(g.l, 0, fs.lanes)
        .bound(g.mt, 0, tm * wm)
        .bound_extent(g.ct, tn * wn)
        .bound(g.ph, 0, 1)
        .bound_extent(g.y, 1)
        .split(g.mt, mw, mi, tm)
        .split(g.ct, cw, cx, tn)
        .reorder(g.i, mi, cx, g.l, mw, cw, g.ph, g.y, g.n)
        .gpu_lanes(g.l)
        .gpu_threads(mw, cw)
        .unroll(g.i)
        .unroll(mi)
        .unroll(cx);
    g.acc.compute_at(block)
        .store_in(MemoryType::Register)
        .bound(g.i, 0, fs.elems)
        .bound(g.l, 0, fs.lanes)
        .bound(g.mt, 0, tm)
        .bound(g.ct, 0, tn)
        .reorder(g.i, g.mt, g.ct, g.l, g.cb, g.y, g.n)
        .gpu_lanes(g.l)
        .unroll(g.i)
        .unroll(g.mt)
        .unroll(g.ct);
    g.acc.update(0)
        .allow_race_conditions()
        .reorder(g.i, g.mt, g.ct, g.l, g.zero.x, g.zero.y, g.cb, g.y, g.n)
        .gpu_lanes(g.l)
        .gpu_threads(g.zero.x, g.zero.y)
        .unroll(g.i)
        .unroll(g.mt)
        .unroll(g.ct);
    std::vector<VarOrRVar> update_order = {g.mt, g.ct, g.kb.x, g.l, g.kb.y, g.kb.z, g.kb.w};
    if (!g.ahead) update_order.insert(update_order.end(), {g.kb[4], g.kb[5]});  // (ahead: taps in kb.w)
    update_order.insert(update_order.end(), {g.cb, g.y, g.n});
    g.acc.update(1)
        .allow_race_conditions()
        .reorder(update_order)
        .gpu_lanes(g.l)
        .gpu_threads(g.kb.y, g.kb.z)
        .unroll(g.mt)
        .unroll(g.ct)
        .unroll(g.kb.x);
    g.a_lane.compute_at(g.acc, g.kb.x).store_in(MemoryType::Register).bound(g.e, 0, g.vec).vectorize(g.e)
        .unroll(g.h).unroll(g.mt);
    g.b_lane.compute_at(g.acc, g.kb.x).store_in(MemoryType::Register).bound(g.e, 0, g.vec).vectorize(g.e)
        .unroll(g.ct);
    const LoopLevel chunk(g.acc, g.kb.w);
    for (Func f : {g.as, g.bs}) {
        const std::vector<Var> v = f.args();  // (kk, slot or channel, kx, ...)
        Var kh("kh"), kv("kv"), hx("hx"), j("j"), jo("jo"), jl("jl"), jx("jx"), jy("jy"), jz("jz");
        std::vector<VarOrRVar> order = {kv, jo};
        order.insert(order.end(), v.begin() + 3, v.end());
        order.push_back(jl);
        // (The thread loop outermost: serial loops outside it would each be a thread loop of their
        // own, a barrier after every vector.)
        f.compute_at(chunk)
            .store_in(MemoryType::GPUShared)
            .bound(v[0], 0, fs.K)
            .split(v[0], kh, kv, kStagedChannelGroup)
            .vectorize(kv)
            .reorder(kv, kh, v[2], v[1])
            .fuse(kh, v[2], hx)
            .fuse(hx, v[1], j)
            .split(j, jo, jl, threads, TailStrategy::GuardWithIf)
            .reorder(order)
            .split(jl, jy, jx, fs.lanes)
            .split(jy, jz, jy, wm)
            .gpu_threads(jx, jy, jz)
            .unroll(jo);
        // Copies ahead (BwdDataMmaGraph::ahead): stored outside the chunk loop, so sliding window
        // carries the chunk copied in one iteration to the next (storage folded to two chunks).
        if (g.ahead) f.store_at(LoopLevel(g.acc, g.cb));
    }
    const std::vector<Var> wv = g.wt.args();
    Var ko("ko"), ki("ki"), rs("rs");
    g.wt.compute_root()
        .align_storage(wv[0], kStagedChannelGroup)
        .align_bounds(wv[0], kStagedChannelGroup)
        .split(wv[0], ko, ki, 64, TailStrategy::GuardWithIf)
        .fuse(wv[2], wv[3], rs)
        .reorder(ki, wv[1], ko, rs)
        .gpu_blocks(wv[1], ko, rs)
        .gpu_threads(ki);
}
}  // namespace

// Matrix fragments (conv_bwd_data_mma_gpu): one block = one wave (64 lanes, AMD) or warp (32,
// NVIDIA) computing tile_m x tile_n fragments of each stride phase of its columns (one phase at
// stride 1). acc lives per lane in registers (the fragment's elements per lane each); each k-block
// loads the lane's operand elements and makes the calls of each fragment, which the target's
// prelude merges into one matrix instruction. Every lane runs every call: res (the block's
// fragments, in shared memory) has a fixed extent (bound), so no guard reaches acc but the
// stride's tap test, the same for every lane; out reads res with the lanes along the channels
// (NHWC) or the columns (NCHW), the tensor's innermost dim (coalesced stores), guarded at the tails.
void schedule_bwd_data_mma_gpu(BwdDataMmaGraph &g, const BwdDataMmaGpuParams &p, Layout layout) {
    if (g.stage > 0) {
        schedule_bwd_data_mma_staged(g, p);
        return;
    }
    const frag::Shape fs = frag::shape(p.frag);
    const int tm = p.tile_m, tn = p.tile_n;
    Var xo("xo"), xi("xi"), co("co"), ci("ci"), yn("yn"), t("t"), to("to"), ti("ti");
    g.res.bound(g.ph, 0, g.sx);
    // Phases inside the lane's loop: acc (per phase) stays in the lane's registers.
    // (warps_m x warps_n > 1: a block of warps, each loading its own operands; those along the
    // pixels read the same w, those along the channels the same dy, at the same k-blocks: through L1.)
    schedule_fragment_block(g.res, g.acc, fs, tm, tn, LoopLevel(g.out, co), {g.ph}, {g.y, g.n},
                            {g.kb.x, g.kb.y, g.kb.z}, p.warps_m, p.warps_n);
    if (g.vec > 1) {
        // The lane's channel groups of a k-block, loaded as vectors into registers before its calls;
        // w's copy (k innermost, rows padded to the vector) once per call, threads along k; NCHW,
        // dy's copy (dyt: channels innermost) once per call too.
        // unroll > 1: u k-blocks a step, every operand of the step loaded before its first fragment
        // (the algorithm rounds the k-blocks up to a multiple of u: the split has no tail).
        fragment_lanes_per_step(g, g.acc, p.unroll);
        const std::vector<Var> wv = g.wt.args();
        Var ko("ko"), ki("ki"), rs("rs");
        g.wt.compute_root()
            .align_storage(wv[0], g.vec)
            .align_bounds(wv[0], g.vec)
            .split(wv[0], ko, ki, 64, TailStrategy::GuardWithIf)
            .fuse(wv[2], wv[3], rs)
            .reorder(ki, wv[1], ko, rs)
            .gpu_blocks(wv[1], ko, rs)
            .gpu_threads(ki);
        if (g.dyt.defined()) schedule_channel_copy(g.dyt, g.vec);  // NCHW
    }
    for_each_branch(g.out, Halide::Internal::const_true(), g.beta, [&](Stage s, bool) {
        s.split(g.x, xo, xi, data_block_columns(p) * g.sx, TailStrategy::GuardWithIf)
            .split(g.c, co, ci, fs.N * data_block_frags_n(p), TailStrategy::GuardWithIf)
            .fuse(g.y, g.n, yn);
        if (layout == Layout::NCHW)
            s.reorder(xi, ci, co, xo, yn).fuse(xi, ci, t);
        else
            s.reorder(ci, xi, co, xo, yn).fuse(ci, xi, t);
        s.split(t, to, ti, fs.lanes * p.warps_m * p.warps_n).gpu_blocks(co, xo, yn).gpu_threads(ti);
    });
}

// Matrix fragments (conv_bwd_weight_mma_gpu): one block = one wave or warp computing tile_m x
// tile_n fragments (k x c) of one filter tap over one split of the pixels, as the backward-data
// schedule above (acc per lane in registers, the block's fragments through shared memory, every
// lane running every call); the block writes its partials to the workspace with the lanes along
// the channels, and a second kernel sums the splits in order (as conv_bwd_weight_gpu's).
void schedule_bwd_weight_mma_gpu(BwdWeightMmaGraph &g, const BwdWeightMmaGpuParams &p, Layout layout) {
    const frag::Shape fs = frag::shape(p.frag);
    const int tm = p.tile_m, tn = p.tile_n;
    Var co("co"), ci("ci"), ko("ko"), ki("ki"), t("t"), to("to"), ti("ti"), tile("tile"), tap("tap");
    // A block: warps_m x warps_n warps of tile_m x tile_n fragments each (stage 0: each warp loads
    // its own operands, its neighbours' at the same k-blocks, so that they meet in L1).
    const int wm = p.warps_m, wn = p.warps_n, threads = fs.lanes * wm * wn;
    g.ws.split(g.cg, co, ci, fs.N * weight_block_frags_n(p), TailStrategy::GuardWithIf)
        .split(g.k, ko, ki, fs.M * weight_block_frags_m(p), TailStrategy::GuardWithIf)
        .reorder(ci, ki, co, ko, g.s, g.r, g.sp)
        .fuse(ci, ki, t)
        .split(t, to, ti, threads)
        .fuse(co, ko, tile)
        .fuse(g.s, g.r, tap)
        .gpu_blocks(tile, tap, g.sp)
        .gpu_threads(ti);
    if (g.stage > 0) {
        // Staged chunks. Per chunk (the block's serial loop): the copies (threads along the columns
        // j, then the channel groups: a thread loads one pixel's group of kStagedChannelGroup
        // channels, threads j and j + 16 one 32-byte sector; written pixels innermost); then each
        // warp's sums of the chunk's k-blocks (unrolled) from shared memory, in registers (cp: per thread, so Halide keeps
        // them in registers), added into the block's accumulators in shared memory (partial),
        // which the block then writes to the workspace. A thread is lane l of warp (mw, cw).
        const LoopLevel block(g.ws, tile);
        g.res.compute_inline();
        Var mw("mw"), mi("mi"), cw("cw"), cx("cx"), th("th"), wth("wth");
        g.partial.compute_at(block)
            .store_in(MemoryType::GPUShared)
            .bound(g.i, 0, fs.elems)
            .bound(g.l, 0, fs.lanes)
            .bound_extent(g.mt, tm * wm)
            .bound_extent(g.ct, tn * wn);
        // Both stages: a thread's elements and fragments unrolled, the update's chunks outermost.
        for (Stage st : {Stage(g.partial), g.partial.update()}) {
            std::vector<VarOrRVar> order = {g.i, mi, cx, g.l, mw, cw, g.s, g.r, g.sp};
            if (st.name() != g.partial.name()) order.push_back(g.kc.x);
            st.split(g.mt, mw, mi, tm)
                .split(g.ct, cw, cx, tn)
                .reorder(order)
                .fuse(g.l, mw, th)
                .fuse(th, cw, wth)
                .gpu_threads(wth)
                .unroll(g.i)
                .unroll(mi)
                .unroll(cx);
        }
        g.cp.compute_at(LoopLevel(g.partial, wth)).store_in(MemoryType::Register).unroll(g.i).unroll(g.mt).unroll(g.ct);
        g.cp.update().reorder(g.mt, g.ct, g.kb.x, g.l, g.s, g.r, g.sp, g.kcv).unroll(g.mt).unroll(g.ct).unroll(g.kb.x);
        const LoopLevel chunk(g.partial, g.kc.x);
        for (Func f : {g.as, g.bs}) {
            const std::vector<Var> v = f.args();  // (j, v, group, kx, ...)
            Var jc("jc"), jg("jg"), jo("jo"), jl("jl");
            // (The thread loop outermost: serial loops outside it would each be a thread loop of
            // their own, a barrier after every vector.)
            f.compute_at(chunk).store_in(MemoryType::GPUShared).bound(v[1], 0, kStagedChannelGroup);
            if (weight_mma_input_vector(p, layout) > 1) {
                // NHWC: a thread loads one pixel's group of channels as a vector and stores it
                // across the pixel-innermost rows.
                f.vectorize(v[1])
                    .reorder(v[1], v[0], v[2], v[3])
                    .fuse(v[0], v[2], jg)
                    .split(jg, jo, jl, threads, TailStrategy::GuardWithIf)
                    .reorder(v[1], jo, v[3], jl);
            } else {
                // NCHW: the pixels are innermost in the tensors as in the chunk: consecutive threads
                // take consecutive pixels of a row (a warp reads two rows' 16 pixels, 32 bytes
                // each), an element a thread, and store them as they lie.
                f.fuse(v[0], v[1], jc)
                    .fuse(jc, v[2], jg)
                    .split(jg, jo, jl, threads, TailStrategy::GuardWithIf)
                    .reorder(jo, v[3], jl);
            }
            f.gpu_threads(jl).unroll(jo).unroll(v[3]);
        }
    } else {
        schedule_fragment_block(g.res, g.partial, fs, tm, tn, LoopLevel(g.ws, tile), {}, {g.s, g.r, g.sp}, {g.kb.x}, wm, wn);
    }
    if (g.vec > 1) {
        // The lane's pixel groups of a k-block, loaded as vectors into registers before its calls
        // (the Func making them: cp, staged; else partial); unstaged, the copies (columns
        // innermost) once per call.
        // (unroll > 1, stage 0: u k-blocks a step, every operand of the step loaded before its first
        // fragment, as backward-data's; the algorithm rounds the split's k-blocks up to a multiple of u.)
        Func acc = g.stage > 0 ? g.cp : g.partial;
        fragment_lanes_per_step(g, acc, g.stage == 0 ? p.unroll : 1);
        if (g.stage == 0) {
            // Where each k-block starts: a table made first (a thread per k-block), read per
            // k-block at one address for every lane. Its divisions by the run-time column blocks
            // and rows were ~100 of the 177 instructions of a 16-fragment k-block when each block
            // made them in its loop.
            const std::vector<Var> kv = g.kinfo.args();
            Var kxo("kxo"), kxi("kxi");
            g.kinfo.compute_root()
                .split(kv[0], kxo, kxi, 64, TailStrategy::GuardWithIf)
                .gpu_blocks(kxo, kv[1])
                .gpu_threads(kxi);
            if (p.copy_groups) {
                schedule_grouped_column_copy(g.dyt, g.dyg, g.gv, g.vec, g.k_channels);
                schedule_grouped_column_copy(g.xs, g.xg, g.gv, g.vec, g.c_channels);
            } else {
                schedule_column_copy(g.dyt, g.vec, layout);
                schedule_column_copy(g.xs, g.vec, layout);
            }
        }
    }

    schedule_weight_output_gpu(g);
}

}  // namespace convbwd
