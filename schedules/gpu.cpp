// GPU schedules (CUDA PTX, OpenCL C; the AMDGPU code objects are this OpenCL C compiled by
// clang). Register tiles per thread, no shared memory yet: a starting point measured against
// cuDNN in docs/PERFORMANCE.md, not a ceiling.
#include "schedules.h"

using namespace Halide;

namespace convbwd {

// Register tiles must have a constant size, so the per-thread split shifts its last tile inwards
// (ShiftInwards): legal where the extent covers one tile (for_each_branch's `fits`). Elsewhere
// (tiny problems) a 1x1 tile runs.

// Backward-data. Each thread owns tile_c channels x tile_x columns of one stride phase and keeps
// them in registers while k and the taps stream past. Stride 1: the phase array is the output,
// computed in place. Stride > 1: the phase array is stored once (acc.in()), one stride phase per
// block (no divergence over the phase's tap table), then gathered into dx.
void schedule_bwd_data_gpu(BwdDataGraph &g, const BwdDataGpuParams &p, const ConvArgs &a, Layout layout,
                           StrideClass, FilterClass) {
    Var &x = g.x, &y = g.y, &c = g.c, &n = g.n;
    Var cb("cb"), cr("cr"), xb("xb"), xr("xr"), cbo("cbo"), cbi("cbi"), xbo("xbo"), xbi("xbi"), yn("yn");
    const bool nhwc = layout == Layout::NHWC;
    // Threads along the layout's dense dim, so a warp's loads and stores are contiguous.
    const int t_c = nhwc ? p.threads_c : p.threads_x, t_x = nhwc ? p.threads_x : p.threads_c;

    // Splits cv into per-thread registers (cr) x threads x blocks, likewise xv; `rest` lists the
    // remaining pure vars of s, innermost first, so the loop order is explicit.
    auto tile_thread = [&](Stage s, bool full, Var cv, Var xv, std::vector<VarOrRVar> rest) {
        const int tc = full ? p.tile_c : 1, tx = full ? p.tile_x : 1;
        s.split(cv, cb, cr, tc, TailStrategy::ShiftInwards).split(xv, xb, xr, tx, TailStrategy::ShiftInwards);
        std::vector<VarOrRVar> order = {cr, xr};
        if (nhwc) order.insert(order.end(), {cb, xb});
        else order.insert(order.end(), {xb, cb});
        order.insert(order.end(), rest.begin(), rest.end());
        s.reorder(order);
        if (nhwc)
            s.gpu_tile(cb, xb, cbo, xbo, cbi, xbi, t_c, t_x, TailStrategy::GuardWithIf);
        else
            s.gpu_tile(xb, cb, xbo, cbo, xbi, cbi, t_x, t_c, TailStrategy::GuardWithIf);
        s.unroll(cr).unroll(xr);
    };

    const Var thread_inner = nhwc ? cbi : xbi;
    if (g.sx == 1 && g.sy == 1) {
        g.out.compute_root();
        for_each_branch(g.out, a.C >= p.tile_c && a.W >= p.tile_x, g.beta, [&](Stage s, bool full) {
            tile_thread(s, full, c, x, {y, n});
            s.fuse(y, n, yn).gpu_blocks(yn);
        });
        g.acc.compute_at(g.out, thread_inner);
    } else {
        Func stored = g.acc.in(g.dx);  // the phase array, computed once
        stored.compute_root();
        Var rows("rows");
        Expr columns = (a.W + a.pad_left) / a.stride_w;  // a lower bound on the phase array's width
        for_each_branch(stored, a.C >= p.tile_c && columns >= p.tile_x, Expr(), [&](Stage s, bool full) {
            // One launch per stride phase (the phase loops stay on the host): each kernel runs
            // one sub-filter, and a thread's tile lies in one phase.
            tile_thread(s, full, c, g.mx, {g.my, n, g.phx, g.phy});
            s.fuse(g.my, n, rows).gpu_blocks(rows);
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
    g.acc.store_in(MemoryType::Register).unroll(c).unroll(g.mx);
    g.acc.update()
        .reorder(c, g.mx, g.phx, g.r.x, g.r.y, g.r.z, g.my, g.phy, n)
        .unroll(c)
        .unroll(g.mx)
        .unroll(g.phx);
    g.acc.update().specialize(a.groups == 1);
}

// Backward-weight. Stage 1 (ws, in the caller's workspace): one (tap, split) per block column;
// each thread keeps tile_c x tile_k partial sums in registers over its split's rows. Stage 2
// (out): each thread sums its element's splits in a fixed order and applies alpha/beta.
void schedule_bwd_weight_gpu(BwdWeightGraph &g, const BwdWeightGpuParams &p, const ConvArgs &a, Layout,
                             StrideClass, FilterClass) {
    Var cb("cb"), cr("cr"), kb("kb"), kr("kr"), cbo("cbo"), cbi("cbi"), kbo("kbo"), kbi("kbi"), tap("tap"),
        all("all");
    Expr Cg = a.C / a.groups;
    for_each_branch(g.ws, Cg >= p.tile_c && a.K >= p.tile_k, Expr(), [&](Stage s, bool full) {
        const int tc = full ? p.tile_c : 1, tk = full ? p.tile_k : 1;
        s.split(g.cg, cb, cr, tc, TailStrategy::ShiftInwards)
            .split(g.k, kb, kr, tk, TailStrategy::ShiftInwards)
            .reorder(cr, kr, cb, kb, g.s, g.r, g.sp)
            .gpu_tile(cb, kb, cbo, kbo, cbi, kbi, p.threads_c, p.threads_k, TailStrategy::GuardWithIf)
            .unroll(cr)
            .unroll(kr)
            .reorder(cr, kr, cbi, kbi, cbo, kbo, g.sp, g.s, g.r)
            .gpu_blocks(g.sp);  // the taps (s, r) stay host loops: one launch per tap
    });
    g.partial.compute_at(g.ws, cbi);
    g.partial.store_in(MemoryType::Register).unroll(g.cg).unroll(g.k);
    g.partial.update().reorder(g.cg, g.k, g.rr.x, g.rr.y).unroll(g.cg).unroll(g.k);
    g.partial.update().specialize(a.groups == 1);

    g.out.compute_root();
    for_each_branch(g.out, Halide::Internal::const_true(), g.beta, [&](Stage s, bool) {
        s.reorder(g.cg, g.k, g.s, g.r)
            .gpu_tile(g.cg, g.k, cbo, kbo, cbi, kbi, 16, 8, TailStrategy::GuardWithIf)
            .fuse(g.s, g.r, tap)
            .gpu_blocks(tap);
    });
    g.dw.compute_at(g.out, cbi);
}

}  // namespace convbwd
