#include "algorithms.h"

#include <functional>

#include "fragments.h"
#include "winograd.h"

using namespace Halide;

namespace convbwd {

namespace {
// f16 as 16-bit storage (set_half_as_bits): one generator run builds one kernel for one target.
bool g_half_as_bits = false;

// f16 bits -> f32 with integer operations (normal, subnormal, zero, Inf, NaN).
Expr half_bits_to_float(Expr h) {
    Expr u = cast<uint32_t>(h);
    Expr sign = (u & 0x8000) << 16, e = (u >> 10) & 0x1f, m = u & 0x3ff;
    Expr normal = reinterpret<float>(sign | ((e + 112) << 23) | (m << 13));
    Expr special = reinterpret<float>(sign | 0x7f800000 | (m << 13));  // Inf, NaN (payload kept)
    Expr sub = cast<float>(m) * 5.9604644775390625e-8f;                 // m * 2^-24
    return select(e == 0, select(sign != 0, -sub, sub), e == 31, special, normal);
}

// f32 -> f16 bits, round to nearest even; overflow to Inf, NaN stays a (quiet) NaN.
Expr float_to_half_bits(Expr f) {
    Expr u = reinterpret<uint32_t>(f), sign = (u >> 16) & 0x8000, a = u & 0x7fffffff;
    // |f| >= 65536 (incl. Inf, NaN): Inf or NaN.
    Expr big = select(a > 0x7f800000, cast<uint32_t>(0x7e00), cast<uint32_t>(0x7c00));
    // |f| < 2^-14 (f16 subnormals and zero): adding 0.5 lets the FPU round (to nearest even) the
    // bits below 2^-24 away; the result's low bits are then the f16 bits.
    Expr tiny = reinterpret<uint32_t>(reinterpret<float>(a) + 0.5f) - 0x3f000000;
    // Normal: rebias the exponent, round the 13 dropped mantissa bits to nearest even.
    Expr odd = (a >> 13) & 1;
    Expr normal = (a - ((127 - 15) << 23) + 0xfff + odd) >> 13;
    Expr bits = select(a >= 0x47800000, big, a < 0x38800000, tiny, normal);
    return cast<uint16_t>(bits | sign);
}
}  // namespace

void set_half_as_bits(bool on) { g_half_as_bits = on; }

Type storage_type(DType t) {
    switch (t) {
    case DType::F32: return Float(32);
    case DType::F16: return g_half_as_bits ? UInt(16) : Float(16);
    case DType::BF16: return UInt(16);
    }
    return Float(32);
}

Expr decode(Expr v, DType t) {
    switch (t) {
    case DType::F32: return v;
    case DType::F16: return g_half_as_bits ? half_bits_to_float(v) : cast<float>(v);
    case DType::BF16: return reinterpret<float>(cast<uint32_t>(v) << 16);
    }
    return v;
}

Expr encode(Expr f, DType t) {
    switch (t) {
    case DType::F32: return f;
    case DType::F16: return g_half_as_bits ? float_to_half_bits(f) : cast(Float(16), f);
    case DType::BF16: {
        Expr u = reinterpret<uint32_t>(f);
        Expr rounded = (u + (0x7fff + ((u >> 16) & 1))) >> 16;
        // Keep NaN a NaN (quiet), never round it into Inf. An integer test: is_nan() makes its
        // argument strict_float, which kept `select(beta == 0, v, v + beta * prev)` (and prev's
        // load) alive inside the beta == 0 specialisation of every bf16 kernel (ncu on the H100:
        // a CUDA fragment kernel 2.8x slower than its f16 twin, stalled on that load).
        Expr nan = (u & 0x7fffffff) > 0x7f800000;
        return cast<uint16_t>(select(nan, (u >> 16) | 0x40, rounded));
    }
    }
    return f;
}

ClassConsts class_consts(StrideClass sc, FilterClass fc) {
    ClassConsts k;
    k.stride = sc == StrideClass::S1 ? 1 : sc == StrideClass::S2 ? 2 : 0;
    k.filter = class_filter_size(fc);
    if (fc == FilterClass::K1) {
        k.dilation = 1;  // irrelevant for a 1x1 filter
        k.pad = 0;
    } else if (k.filter > 0) {
        k.dilation = 1;
    }
    return k;
}

namespace {

Expr or_const(int c, Expr e) { return c > 0 ? Expr(c) : e; }

// The taps of one spatial dim of backward-data, per stride phase (DESIGN.md, "Formulas").
// Output position t = x + pad_begin = s*m + ph. Tap j of phase ph is filter index r(ph, j);
// it reads dy at src(m, ph, j); valid(ph, j) says whether that tap exists at all.
struct PhaseTaps {
    Expr count;  // RDom extent: taps per phase (an upper bound where it varies by phase)
    bool all_valid = false;  // every tap of every phase exists (stride 1)
    std::function<Expr(Expr, Expr)> r, valid;
    std::function<Expr(Expr, Expr, Expr)> src;
};

PhaseTaps phase_taps(int s_const, Expr s_rt, Expr dil, int dil_const, Expr R) {
    PhaseTaps t;
    if (s_const == 1) {  // one phase, every tap
        t.count = R;
        t.all_valid = true;
        t.r = [](Expr, Expr j) { return j; };
        t.valid = [](Expr, Expr) { return Halide::Internal::const_true(); };
        t.src = [dil](Expr m, Expr, Expr j) { return m - j * dil; };
        return t;
    }
    if (s_const == 0) {  // runtime stride: test each tap against the phase
        Expr s = s_rt;
        t.count = R;
        t.r = [](Expr, Expr j) { return j; };
        t.valid = [s, dil](Expr ph, Expr j) { return (j * dil - ph) % s == 0; };
        t.src = [s, dil](Expr m, Expr ph, Expr j) { return m - (j * dil - ph) / s; };
        return t;
    }
    // Compile-time stride s: for each residue dm = dil mod s the phase structure is a table of
    // constants (g = gcd(s, dm), s/g taps apart, first tap r0(ph)); a compile-time dilation
    // folds the selects away, and an unrolled phase loop folds them per phase.
    const int s = s_const;
    Expr dm = dil_const > 0 ? Expr(dil_const % s) : dil % s;
    auto by_dm = [dm, s](std::function<Expr(int)> f) {
        Expr e = f(s - 1);
        for (int v = s - 2; v >= 0; v--) e = select(dm == v, f(v), e);
        return e;
    };
    auto g_of = [s](int v) { return (int)gcd64(s, v); };  // gcd(s, 0) = s
    auto r0_of = [s](int v, int ph) {                     // smallest r with r*v = ph (mod s), or -1
        for (int r = 0; r < s; r++)
            if ((r * v - ph) % s == 0) return r;
        return -1;
    };
    Expr sg = by_dm([&](int v) { return Expr(s / g_of(v)); });
    Expr step = by_dm([&](int v) { return dil / g_of(v); });
    auto r0 = [=](Expr ph) {
        return by_dm([&](int v) {
            Expr e = Expr(r0_of(v, s - 1));
            for (int q = s - 2; q >= 0; q--) e = select(ph == q, r0_of(v, q), e);
            return e;
        });
    };
    t.count = (R + sg - 1) / sg;
    // Invalid taps (past R, or of an empty phase, r0 = -1) are never executed (RDom::where), but
    // bounds inference sees their indices: clamp so the filter's required region stays [0, R).
    t.r = [=](Expr ph, Expr j) { return clamp(r0(ph) + j * sg, 0, R - 1); };
    t.valid = [=](Expr ph, Expr j) { return r0(ph) >= 0 && r0(ph) + j * sg < R; };
    t.src = [=](Expr m, Expr ph, Expr j) { return m - (r0(ph) * dil - ph) / s - j * step; };
    return t;
}

Expr in_range(Expr v, Expr extent) { return v >= 0 && v < extent; }

// Every kernel's last stage: res (alpha already applied) plus beta times the output's previous
// value prev_value (never read where beta == 0), encoded to the storage type.
Expr blend_output(Expr res, Expr prev_value, const ConvArgs &a, DType t) {
    return encode(select(a.beta == 0.0f, res, res + a.beta * decode(prev_value, t)), t);
}

// f(x, y, c, n) defined as copies, with no pure step: src over the plane [0, w) x [0, h), then zeros
// over the rest of [x_lo, x_hi) x [y_lo, y_hi) (each side's extent clamped at 0). A schedule computes
// it (it cannot be inlined): the plane's rows copy as dense vectors and the border is plain stores,
// where a border select's clamped index is a gather in every vector that meets the border
// (ConvArgs::weight_copy_planes, ConvArgs::data_copy_dy_columns).
void define_copy_with_border(Func f, const std::function<Expr(Expr, Expr, Expr, Expr)> &src, Expr w, Expr h,
                             Expr x_lo, Expr x_hi, Expr y_lo, Expr y_hi) {
    Var xx("xx"), yy("yy"), c("c"), n("n");
    f(xx, yy, c, n) = Halide::undef<float>();
    RDom rp(0, w, 0, h, "rp");
    f(rp.x, rp.y, c, n) = src(rp.x, rp.y, c, n);
    Expr rows = max(0, y_hi - y_lo);
    RDom left(x_lo, max(0, -x_lo), y_lo, rows, "rl"), right(w, max(0, x_hi - w), y_lo, rows, "rr");
    RDom top(0, w, y_lo, max(0, -y_lo), "rt"), bottom(0, w, h, max(0, y_hi - h), "rb");
    for (const RDom &d : {left, right, top, bottom}) f(d.x, d.y, c, n) = 0.0f;
}

}  // namespace

BwdDataGraph define_bwd_data(Func dy, Func w, Func prev, Func out, const ConvArgs &a, DType t,
                             StrideClass sc, FilterClass fc, GroupClass gc, int w_tile) {
    BwdDataGraph g;
    ClassConsts k = class_consts(sc, fc);
    g.sx = g.sy = k.stride;
    g.beta = a.beta;
    Expr R = or_const(k.filter, a.R), S = or_const(k.filter, a.S);
    Expr dh = or_const(k.dilation, a.dilation_h), dw = or_const(k.dilation, a.dilation_w);
    Expr pt = k.pad >= 0 ? Expr(k.pad) : a.pad_top, pl = k.pad >= 0 ? Expr(k.pad) : a.pad_left;
    Expr sh = or_const(k.stride, a.stride_h), sw = or_const(k.stride, a.stride_w);
    const bool depthwise = gc == GroupClass::Depthwise;
    // Groups of exactly gl channels and k side by side in a packed tile (ConvArgs::data_group_lanes).
    const int gl = w_tile > 0 && !depthwise ? a.data_group_lanes : 0;
    Expr Cg = depthwise ? Expr(1) : gl ? Expr(gl) : a.C / a.groups;
    Expr Kg = depthwise ? Expr(1) : gl ? Expr(gl) : a.K / a.groups;

    Var q("q"), p("p"), kk("k"), s("s"), r("r"), cg("cg");
    Var &x = g.x, &y = g.y, &c = g.c, &n = g.n;
    g.dy_f = Func("dy_f");
    if (k.filter == 1 && k.stride == 1) {
        // Pointwise stride 1 (no padding): dx's plane is dy's, every read lies inside dy, so its
        // loads stay plain: no range test, no clamp (NCHW read in place 0.60 -> 0.77 against
        // cuDNN on the H100, docs/PERFORMANCE.md, 2026-11-23).
        Expr qq = q;
        if (a.data_whole_columns > 0)  // ConvArgs::data_whole_columns
            // (Bounds inference takes the union of a select's sides: the unclamped side is promised
            // inside the row, which it is where it is taken.)
            qq = select(a.beta == 0.0f && a.W >= a.data_whole_columns, unsafe_promise_clamped(q, 0, a.Q - 1),
                        min(likely(q), a.Q - 1));
        g.dy_f(q, p, kk, n) = decode(dy(qq, p, kk, n), t);
    } else if (k.filter == 1) {
        // Pointwise, stride > 1: the one tap of phase 0 reads dy at the phase array's own
        // position, inside dy (Q = ceil(W / stride)); the clamp only keeps the empty phases'
        // (never executed) reads in bounds for bounds inference. No range test.
        g.dy_f(q, p, kk, n) = decode(dy(clamp(q, 0, a.Q - 1), clamp(p, 0, a.P - 1), kk, n), t);
    } else if (a.data_copy_dy_columns > 0 && k.stride == 1) {
        // ConvArgs::data_copy_dy_columns: acc reads dy at q = x + pad_left - s * dilation (x below
        // W rounded up to the tile), p likewise (y below H): the plane, then the border's sides.
        const int tx = a.data_copy_dy_columns;
        define_copy_with_border(
            g.dy_f, [&](Expr cq, Expr cp, Expr ck, Expr cn) { return decode(dy(cq, cp, ck, cn), t); }, a.Q, a.P,
            pl - (S - 1) * dw, (a.W + tx - 1) / tx * tx + pl, pt - (R - 1) * dh, a.H + pt);
    } else if (a.data_copy_dy_columns > 0 && k.stride == 2) {
        // The same at stride 2, whose tiles start where x + pad_left is a multiple of the tile (so
        // up to a tile left of x = 0) and end past W rounded up by a tile: acc reads dy at
        // q = (x + pad_left) / 2 - (tap offset at most ((S - 1) * dilation + 1) / 2), p likewise
        // (y below H). A margin of one column and row each side.
        const int tx = a.data_copy_dy_columns;
        define_copy_with_border(
            g.dy_f, [&](Expr cq, Expr cp, Expr ck, Expr cn) { return decode(dy(cq, cp, ck, cn), t); }, a.Q, a.P,
            (pl - tx - (S - 1) * dw) / 2 - 1, ((a.W + tx - 1) / tx * tx + tx + pl) / 2 + 1,
            (pt - (R - 1) * dh) / 2 - 1, (a.H + pt) / 2 + 1);
    } else {
        g.dy_f(q, p, kk, n) = select(in_range(q, a.Q) && in_range(p, a.P),
                                     decode(dy(clamp(q, 0, a.Q - 1), clamp(p, 0, a.P - 1), kk, n), t), 0.0f);
    }
    g.w_f = Func("w_f");
    g.w_f(s, r, cg, kk) = decode(w(s, r, cg, kk), t);
    g.w_tile = w_tile;
    if (w_tile > 0) {  // a partial last tile repeats the last channel (never read)
        Var ci("wci"), co("wco");
        g.w_p = Func("w_p");
        if (gl) {  // lane ci: channel ci % gl of group (co * w_tile + ci) / gl; kk is k within the group
            Expr ch = min(co * w_tile + ci, a.C - 1);
            g.w_p(ci, kk, s, r, co) = g.w_f(s, r, ch % gl, ch / gl * gl + kk);
        } else {
            g.w_p(ci, kk, s, r, co) = g.w_f(s, r, min(co * w_tile + ci, Cg - 1), kk);
        }
    }

    PhaseTaps tx = phase_taps(k.stride, sw, dw, k.dilation, S);
    PhaseTaps ty = phase_taps(k.stride, sh, dh, k.dilation, R);
    g.r = RDom(0, Kg, 0, tx.count, 0, ty.count, "r");
    Expr vx = tx.valid(g.phx, g.r.y), vy = ty.valid(g.phy, g.r.z);
    if (!tx.all_valid && !ty.all_valid) g.r.where(vx && vy);
    else if (!tx.all_valid) g.r.where(vx);
    else if (!ty.all_valid) g.r.where(vy);

    // Groups: channel c is channel c % Cg of group c / Cg; its dy channels are that group's Kg.
    // With one group the index math folds away (the schedules specialise on groups == 1).
    // With a packed filter the schedule computes acc over whole channel tiles, past C in the
    // last one (never stored): its group index is clamped so that dy's reads stay in range.
    Expr grp = depthwise ? Expr(c) : select(a.groups == 1, 0, w_tile > 0 ? min(c / Cg, a.groups - 1) : c / Cg);
    Expr c_in = depthwise ? Expr(0) : select(a.groups == 1, c, c % Cg);
    Expr w_lane, w_co;  // channel c's place in w_p (w_tile > 0)
    if (gl) {
        // Whole groups in the tile, in channel order: a vector's group index is uniform over each
        // run of gl lanes (the schedule vectorises c as gl lanes inside w_tile / gl groups).
        grp = c / gl;
        w_lane = c % w_tile;
        w_co = c / w_tile;
    } else if (w_tile > 0 && !depthwise) {
        // A packed tile lies inside one group (the dispatcher's condition for these kernels:
        // c / groups a multiple of w_tile, group_channel_tile() in schedules/spaces.h), so its group
        // and its tile within the group come from its first channel: uniform over the tile's
        // lanes, and dy_f and w_p load dense vectors (per lane, grouped layers gathered both:
        // 0.02-0.07 of oneDNN).
        Expr tile = c / w_tile, grp_t = min(tile * w_tile / Cg, a.groups - 1);
        grp = select(a.groups == 1, 0, grp_t);
        w_lane = c % w_tile;
        w_co = select(a.groups == 1, tile, clamp(tile - grp_t * (Cg / w_tile), 0, (Cg - 1) / w_tile));
    } else if (w_tile > 0) {
        w_lane = c_in % w_tile, w_co = c_in / w_tile;
    }
    Expr k_of = depthwise ? Expr(c) : grp * Kg + g.r.x;
    g.acc = Func("acc");
    g.acc(g.mx, g.phx, g.my, g.phy, c, n) = 0.0f;
    Expr tap_s = tx.r(g.phx, g.r.y), tap_r = ty.r(g.phy, g.r.z);
    Expr w_val = gl           ? g.w_p(w_lane, g.r.x, tap_s, tap_r, w_co)
                 : w_tile > 0 ? g.w_p(w_lane, k_of, tap_s, tap_r, w_co)
                              : g.w_f(tap_s, tap_r, c_in, k_of);
    Expr src_q = tx.src(g.mx, g.phx, g.r.y), src_p = ty.src(g.my, g.phy, g.r.z);
    if (w_tile > 0) {
        // Filter rows whose dy row lies in the zero border are left out, as oneDNN's direct kernels
        // leave them (a 5x5 filter on a 7x7 plane: 17% of the row terms, 14x14 9%). The packed
        // schedule computes acc a row at a time (my fixed), so this is one test per filter row,
        // outside the column tiles and k. (Depthwise kernels and 1x1 filters: not packed this way,
        // no border rows.)
        if (!depthwise && k.filter != 1) g.r.where(src_p >= 0 && src_p < a.P);
        // The packed schedule stages dy_f over the region bounds inference gives it, which
        // counts the taps of empty phases (never executed) at their nominal position, a
        // dilation away: fuzz_problem's 1x1 filter with dilation 287072208 and stride 2 asked
        // for a 143M-row staging. Clamped to one past each side: a valid tap that reads outside
        // dy reads dy_f's zero border, which one past the edge is too, so no result changes,
        // and the region is dy's plus a border of one.
        src_q = clamp(src_q, -1, a.Q);
        src_p = clamp(src_p, -1, a.P);
    }
    Expr dy_val = g.dy_f(src_q, src_p, k_of, n);
    if (w_tile > 0 && !depthwise) {
        Var kin("kin"), gg("gg");
        g.dy_g = Func("dy_g");
        // A 1x1 filter at stride 1 reads dy_f (no zero border) at columns inside dy only, but the
        // host schedule computes a row's last column tile whole: its columns past Q repeat Q - 1.
        g.dy_g_in_bounds = k.filter == 1 && k.stride == 1;
        Expr qq = g.dy_g_in_bounds ? min(q, a.Q - 1) : Expr(q);
        if (gl) {
            // The tile's gi groups side by side (gs innermost): a vector's values at one k are gi
            // adjacent floats. No clamp: the dispatcher gives these kernels whole tiles of groups.
            const int gi = w_tile / gl;
            Var gs("gs");
            g.dy_g(gs, kin, q, p, gg, n) = g.dy_f(qq, p, (gg * gi + gs) * gl + kin, n);
            dy_val = g.dy_g(grp % gi, g.r.x, src_q, src_p, grp / gi, n);
        } else {
            g.dy_g(kin, q, p, gg, n) = g.dy_f(qq, p, gg * Kg + kin, n);
            dy_val = g.dy_g(g.r.x, src_q, src_p, grp, n);
        }
    }
    g.acc(g.mx, g.phx, g.my, g.phy, c, n) += dy_val * w_val;

    Expr tX = x + pl, tY = y + pt;
    g.dx = Func("dx");
    Expr phase_y = a.data_row_phase ? tY - (tY / sh) * sh : tY % sh;  // ConvArgs::data_row_phase
    g.dx(x, y, c, n) = g.acc(tX / sw, tX % sw, tY / sh, phase_y, c, n);

    g.out = out;
    Expr res = a.alpha * g.dx(x, y, c, n);
    g.out(x, y, c, n) = blend_output(res, prev(x, y, c, n), a, t);
    return g;
}

namespace {
// Backward-data's staged chunks (BwdDataMmaGraph, stage > 0; NHWC, stride 1, vec = 4): the operands
// staged per chunk, one accumulator per warp, res and out from them. g's a_op / b_op are defined.
void define_bwd_data_mma_staged(BwdDataMmaGraph &g, Func dy, Func prev, Func out, const ConvArgs &a, DType t,
                                const frag::Shape &fs, const ClassConsts &k1, int tile_m, int tile_n, int warps_m,
                                int warps_n, int block_pixels) {
    Var &i = g.i, &l = g.l, &mt = g.mt, &ct = g.ct, &ph = g.ph, &y = g.y, &n = g.n, &cb = g.cb;
    Var &e = g.e, &h = g.h, &kx = g.kx, &ts = g.ts, &tr = g.tr;
    Var kk("kk"), q("q"), blk("blk"), k("k"), c("c"), cc("cc");
    const Type st = storage_type(t);
    const int G = kStagedChannelGroup, stage = g.stage, vec = g.vec;
    Expr R = or_const(k1.filter, a.R), S = or_const(k1.filter, a.S);
    Expr dh = or_const(k1.dilation, a.dilation_h), dwl = or_const(k1.dilation, a.dilation_w);
    Expr pt = k1.pad >= 0 ? Expr(k1.pad) : a.pad_top, pl = k1.pad >= 0 ? Expr(k1.pad) : a.pad_left;
    g.block_pixels = block_pixels;
    g.x_blocks = (a.W + g.block_pixels - 1) / g.block_pixels;
    // Slot q of pixel block blk: dx's pixel (x, y) = ((blk % x_blocks) * block_pixels + q, blk / x_blocks).
    Expr sx = (blk % g.x_blocks) * g.block_pixels + q, sy = blk / g.x_blocks;
    Expr chunks = ((a.K + fs.K - 1) / fs.K + stage - 1) / stage;
    // The staged chunks' k-block: kx of tap (ts, tr), or (ahead) k-block kj of chunk fc over every
    // tap's chunks in turn (tap fc / chunks), so that the chunk loop, and the copies one chunk ahead,
    // run on from one tap into the next; the division is by chunk, the same for a whole copy.
    Var kj("kj"), fc("fc");
    Expr tf = fc / chunks;
    Expr kxs_of = g.ahead ? (fc % chunks) * stage + kj : Expr(kx), ts_of = g.ahead ? Expr(tf % S) : Expr(ts),
         tr_of = g.ahead ? min(tf / S, R - 1) : Expr(tr);  // (past the last tap: read ahead, never used)
    Expr dq = sx + pl - ts_of * dwl, dp = sy + pt - tr_of * dh, k0 = fs.K * kxs_of + G * (kk / G);
    Expr as_value = select(dq >= 0 && dq < a.Q && dp >= 0 && dp < a.P && k0 < a.K,
                           dy(clamp(dq, 0, a.Q - 1), clamp(dp, 0, a.P - 1), max(min(k0, a.K - G), 0) + kk % G, n), cast(st, 0));
    g.wt = Func("wt");
    g.wt(k, c, ts, tr) = g.b_op(c, k, ts, tr);
    g.as = Func("as");
    g.bs = Func("bs");
    if (g.ahead) {
        g.as(kk, q, kj, fc, blk, n) = as_value;
        g.bs(kk, cc, kj, fc) = g.wt(fs.K * kxs_of + kk, cc, ts_of, tr_of);
    } else {
        g.as(kk, q, kx, ts, tr, blk, n) = as_value;
        g.bs(kk, cc, kx, ts, tr) = g.wt(fs.K * kx + kk, cc, ts, tr);
    }
    // A lane's group: vec consecutive channels of its row (A: a slot) / column (B: a channel).
    Expr kl = vec * frag::group_of(fs, l);
    Expr arow = fs.M * mt + frag::a_row(fs, l, 0) + 8 * h, bcol = fs.N * ct + frag::b_col(fs, l, 0);
    g.a_lane = Func("a_lane");
    g.b_lane = Func("b_lane");
    // The reduction: (k-block in the chunk, warp along the pixels, along the channels, chunk, tap s,
    // tap r; ahead: chunks of every tap in turn); the warp's fragments placed in the block (the warp as
    // two variables: bounds inference sees one warp's fragments through monotonic expressions only).
    Expr kxb, tap_s, tap_r;
    if (g.ahead) {
        // The lanes' chunk index reaches one chunk further for bounds inference only, through
        // select(v * (1 - v) == 1, 1, 0), whose condition no integer v meets (v * (1 - v) <= 0) but
        // whose interval over the unrolled h and ct holds 1: each chunk's region of as and bs then
        // overlaps the next's, sliding window (the Funcs stored outside the chunk loop) copies only the
        // chunk after the one the iteration runs and starts the loop one chunk early, and storage
        // folding keeps two chunks. Once h and ct are unrolled constants the select folds away.
        // (Checked with the pinned Halide 21.0.0, whose lowered loop copies chunk w + 1 at w. A Halide
        // that proved the condition false would copy each chunk where it runs while the runtime, trusting
        // copies_ahead(), waits a chunk late: the GPU conformance cases of the ahead kernels would fail.)
        auto never = [](Expr v) { return v * (1 - v) == 1; };
        g.a_lane(e, h, mt, kj, fc, l, blk, n) = g.as(kl + e, arow, kj, fc + select(never(h), 1, 0), blk, n);
        g.b_lane(e, ct, kj, fc, l) = g.bs(kl + e, bcol, kj, fc + select(never(ct % tile_n), 1, 0));
        g.kb = RDom({{0, stage}, {0, warps_m}, {0, warps_n}, {0, chunks * S * R}}, "kb");
    } else {
        g.a_lane(e, h, mt, kx, ts, tr, l, blk, n) = g.as(kl + e, arow, kx, ts, tr, blk, n);
        g.b_lane(e, ct, kx, ts, tr, l) = g.bs(kl + e, bcol, kx, ts, tr);
        g.kb = RDom({{0, stage}, {0, warps_m}, {0, warps_n}, {0, chunks}, {0, S}, {0, R}}, "kb");
        kxb = g.kb.w * stage + g.kb.x, tap_s = g.kb[4], tap_r = g.kb[5];
    }
    Expr mt_blk = g.kb.y * tile_m + mt, ct_blk = cb * (tile_n * warps_n) + g.kb.z * tile_n + ct;
    std::vector<Expr> av, bv;
    for (int j = 0; j < fs.a_per_lane; j++)
        av.push_back(g.ahead ? g.a_lane(frag::a_group_elem(fs, j), frag::a_half(fs, j), mt_blk, g.kb.x, g.kb.w, l, y, n)
                             : g.a_lane(frag::a_group_elem(fs, j), frag::a_half(fs, j), mt_blk, kxb, tap_s, tap_r, l, y, n));
    for (int j = 0; j < fs.b_per_lane; j++)
        bv.push_back(g.ahead ? g.b_lane(frag::b_group_elem(fs, j), ct_blk, g.kb.x, g.kb.w, l)
                             : g.b_lane(frag::b_group_elem(fs, j), ct_blk, kxb, tap_s, tap_r, l));
    // One accumulator per warp, acc's y the pixel block: every warp zeroes and updates "the same" acc,
    // which a schedule keeps in each thread's registers (MemoryType::Register at the block, striped
    // over the lanes) with the warps loops over threads, so each warp's copy is its own.
    g.acc = Func("acc");
    g.acc(i, l, mt, ct, cb, y, n) = 0.0f;
    g.zero = RDom({{0, warps_m}, {0, warps_n}}, "zero");
    g.acc(i, l, mt, ct, cb, y, n) = cast<float>(g.zero.x + g.zero.y) * 0.0f;
    frag::mma(g.acc, {l, mt, ct, cb, y, n}, fs, t, av, bv);
    const int bn = tile_n * warps_n;
    g.res = Func("res");
    g.res(i, l, mt, ct, ph, y, n) = g.acc(i, l, mt % tile_m, ct % tile_n, ct / bn, y, n);
    Expr sl = g.x % g.block_pixels, row = sl % fs.M, col = g.c % fs.N;
    Expr v = a.alpha * g.res(frag::elem_of(fs, row, col), frag::lane_of(fs, row, col), sl / fs.M, g.c / fs.N, 0,
                             y * g.x_blocks + g.x / g.block_pixels, n);
    g.out = out;
    g.out(g.x, y, g.c, n) = blend_output(v, prev(g.x, y, g.c, n), a, t);
}
}  // namespace

BwdDataMmaGraph define_bwd_data_mma(Func dy, Func w, Func prev, Func out, const ConvArgs &a, DType t, StrideClass sc,
                                    FilterClass fc, int frag_kind, int vec, bool dy_copy, int stage, int tile_m,
                                    int tile_n, int warps_m, int warps_n, int block_pixels, bool ahead, int unroll) {
    BwdDataMmaGraph g;
    g.vec = vec;
    g.stage = stage;
    g.ahead = ahead;  // (data_mma_copies_ahead(): stage > 0)
    g.beta = a.beta;
    const frag::Shape fs = frag::shape(frag_kind);
    ClassConsts k1 = class_consts(sc, fc);
    g.sx = k1.stride;
    const int sx = k1.stride;  // both dims; a compile-time constant (s1, s2)
    Expr R = or_const(k1.filter, a.R), S = or_const(k1.filter, a.S);
    Expr dh = or_const(k1.dilation, a.dilation_h), dw = or_const(k1.dilation, a.dilation_w);
    Expr pt = k1.pad >= 0 ? Expr(k1.pad) : a.pad_top, pl = k1.pad >= 0 ? Expr(k1.pad) : a.pad_left;
    Var &i = g.i, &l = g.l, &mt = g.mt, &ct = g.ct, &ph = g.ph, &y = g.y, &n = g.n;
    const Type st = storage_type(t);
    // Reduction: k-blocks innermost, then the filter's taps. Tap (r, s) of output pixel (x, y)
    // reads dy at ((x + pad - s * dilation) / stride, (y + pad - r * dilation) / stride) where
    // that divides: with x = stride * mx + ph, the column is mx + (ph + pad - s * dilation) /
    // stride (floor), and whether it divides depends on the phase ph and the row y only, the same
    // for every lane of a block (a uniform guard; none at stride 1).
    // (unroll > 1, BwdDataMmaGpuParams::unroll: the k-blocks rounded up to a multiple of it, so that
    // the schedule's split of kb.x has no tail; the operands are zero past K.)
    Expr kblocks = round_up_kblocks<Expr>((a.K + fs.K - 1) / fs.K, unroll);
    g.kb = RDom(0, kblocks, 0, S, 0, R, "kb");
    Expr tap_s = g.kb.y, tap_r = g.kb.z;
    // The column (of phase ph) and row offsets of tap (s, r), before the division by the stride.
    auto col_off = [&](Expr phase, Expr s) { return phase + pl - s * dw; };
    auto row_off = [&](Expr row, Expr r) { return row + pt - r * dh; };
    Expr ex = col_off(ph, tap_s), ey = row_off(y, tap_r);
    if (sx > 1) g.kb.where(ex % sx == 0 && ey % sx == 0);
    Expr p = ey / sx;  // dy's row: the same for every lane
    // dy at column q, row pp, channel `at` where q, pp are inside it and k_in holds, else zero
    // (clamped reads; a 1x1 filter's column and row are never negative or past P).
    Func dy_src = dy;
    if (dy_copy) {  // BwdDataMmaGraph::dyt (vec > 1)
        Var kk("kk"), q("q"), pp("pp");
        g.dyt = Func("dyt");
        g.dyt(kk, q, pp, n) = select(kk < a.K, dy(q, pp, min(kk, a.K - 1), n), cast(st, 0));
        dy_src = Func("dy_src");
        dy_src(q, pp, kk, n) = g.dyt(kk, q, pp, n);
    }
    auto dy_or_zero = [&](Expr q, Expr pp, Expr k_in, Expr at, Expr img) {
        Expr in = k1.filter == 1 ? q < a.Q : q >= 0 && q < a.Q && pp >= 0 && pp < a.P;
        return select(in && k_in, dy_src(clamp(q, 0, a.Q - 1), clamp(pp, 0, a.P - 1), at, img), cast(st, 0));
    };
    // The operands, zero past the tensors: dy at column q, row pp, channel kk; w at tap (s, r).
    {
        Var kk("kk"), q("q"), pp("pp"), cc("cc"), s("s"), r("r");
        g.a_op = Func("a_op");
        g.a_op(kk, q, pp, n) = dy_or_zero(q, pp, kk < a.K, min(kk, a.K - 1), n);
        g.b_op = Func("b_op");
        g.b_op(cc, kk, s, r) = select(cc < a.C && kk < a.K, w(s, r, min(cc, a.C - 1), min(kk, a.K - 1)), cast(st, 0));
    }
    if (stage > 0) {
        define_bwd_data_mma_staged(g, dy, prev, out, a, t, fs, k1, tile_m, tile_n, warps_m, warps_n, block_pixels);
        return g;
    }
    // The lane's operand elements j of one k-block and tap.
    std::vector<Expr> av, bv;
    if (vec == 1) {
        for (int j = 0; j < fs.a_per_lane; j++)
            av.push_back(g.a_op(fs.K * g.kb.x + frag::a_k(fs, l, j), fs.M * mt + frag::a_row(fs, l, j) + ex / sx, p, n));
        for (int j = 0; j < fs.b_per_lane; j++)
            bv.push_back(g.b_op(fs.N * ct + frag::b_col(fs, l, j), fs.K * g.kb.x + frag::b_k(fs, l, j), tap_s, tap_r));
    } else {
        // Channel groups of vec = 4 (K a multiple of 4: a group is inside dy or past it whole, so
        // its first channel is clamped, not each element, and its loads stay dense). From dyt
        // (dy_copy), zero past K to the k-blocks' end: any K, no clamp.
        Var &e = g.e, &h = g.h, &kx = g.kx, &ts = g.ts, &tr = g.tr, k("k"), c("c");
        Expr k0 = fs.K * kx + vec * frag::group_of(fs, l);
        Expr q = fs.M * mt + frag::a_row(fs, l, 0) + 8 * h + col_off(ph, ts) / sx;
        g.a_lane = Func("a_lane");
        g.a_lane(e, h, mt, kx, ts, tr, l, ph, y, n) =
            g.dyt.defined() ? dy_or_zero(q, row_off(y, tr) / sx, Halide::Internal::const_true(), k0 + e, n)
                            : dy_or_zero(q, row_off(y, tr) / sx, k0 < a.K, max(min(k0, a.K - vec), 0) + e, n);
        g.wt = Func("wt");
        g.wt(k, c, ts, tr) = g.b_op(c, k, ts, tr);
        g.b_lane = Func("b_lane");
        g.b_lane(e, ct, kx, ts, tr, l) = g.wt(k0 + e, fs.N * ct + frag::b_col(fs, l, 0), ts, tr);
        for (int j = 0; j < fs.a_per_lane; j++)
            av.push_back(g.a_lane(frag::a_group_elem(fs, j), frag::a_half(fs, j), mt, g.kb.x, tap_s, tap_r, l, ph, y, n));
        for (int j = 0; j < fs.b_per_lane; j++)
            bv.push_back(g.b_lane(frag::b_group_elem(fs, j), ct, g.kb.x, tap_s, tap_r, l));
    }
    g.acc = Func("acc");
    g.acc(i, l, mt, ct, ph, y, n) = 0.0f;
    frag::mma(g.acc, {l, mt, ct, ph, y, n}, fs, t, av, bv);
    g.res = Func("res");
    g.res(i, l, mt, ct, ph, y, n) = g.acc(i, l, mt, ct, ph, y, n);

    Expr mx = g.x / sx, row = mx % fs.M, col = g.c % fs.N;
    Expr v = a.alpha *
             g.res(frag::elem_of(fs, row, col), frag::lane_of(fs, row, col), mx / fs.M, g.c / fs.N, g.x % sx, y, n);
    g.out = out;
    g.out(g.x, y, g.c, n) = blend_output(v, prev(g.x, y, g.c, n), a, t);
    return g;
}

namespace {
// The staged GEMMs' sums, one definition for the direct and the Winograd kernels of each direction
// (the callers define as, bs and the chunk reduction rc, with its predicate, in between).
// Backward-data: a chunk's sums per thread tile (cp, over kb = block_k k of the chunk) ...
void define_data_chunk_sums(BwdDataStagedGraph &g, int tile_x, int tile_c, int block_k) {
    Var &xr = g.xr, &cr = g.cr, &xt = g.xt, &ct = g.ct, &pb = g.pb, &cb = g.cb, &n = g.n, &kcv = g.kcv, &sv = g.sv,
        &rv = g.rv;
    g.kb = RDom(0, block_k, "kb");
    g.cp = Func("cp");
    g.cp(xr, cr, xt, ct, pb, cb, n, kcv, sv, rv) = 0.0f;
    g.cp(xr, cr, xt, ct, pb, cb, n, kcv, sv, rv) +=
        g.as(g.kb.x, xt * tile_x + xr, pb, cb, kcv, sv, rv, n) * g.bs(ct * tile_c + cr, g.kb.x, pb, cb, kcv, sv, rv, n);
}
// ... then the block's accumulators over the chunks (partial, over rc) and dxf(pixel, c, n) from them.
void define_data_partial(BwdDataStagedGraph &g, int tile_x, int tile_c, int threads_x, int threads_c) {
    Var &xr = g.xr, &cr = g.cr, &xt = g.xt, &ct = g.ct, &pb = g.pb, &cb = g.cb, &n = g.n, &pixv = g.pix, &c = g.c;
    const int bp = tile_x * threads_x, bc = tile_c * threads_c;
    g.partial = Func("partial");
    g.partial(xr, cr, xt, ct, pb, cb, n) = 0.0f;
    g.partial(xr, cr, xt, ct, pb, cb, n) += g.cp(xr, cr, xt, ct, pb, cb, n, g.rc.x, g.rc.y, g.rc.z);
    Expr jp = pixv % bp, jc = c % bc;
    g.dxf = Func("dxf");
    g.dxf(pixv, c, n) = g.partial(jp % tile_x, jc % tile_c, jp / tile_x, jc / tile_c, pixv / bp, c / bc, n);
}
// Backward-weight: a chunk's sums per thread tile (cp, over pb = block_p pixels of the chunk) ...
void define_weight_chunk_sums(BwdWeightStagedGraph &g, int tile_c, int tile_k, int block_p) {
    Var &kr = g.kr, &cr = g.cr, &kt = g.kt, &ct = g.ct, &kb = g.kb, &cb = g.cb, &s = g.s, &r = g.r, &sp = g.sp,
        &kcv = g.kcv;
    g.pb = RDom(0, block_p, "pb");
    g.cp = Func("cp");
    g.cp(kr, cr, kt, ct, kb, cb, s, r, sp, kcv) = 0.0f;
    g.cp(kr, cr, kt, ct, kb, cb, s, r, sp, kcv) +=
        g.as(kt * tile_k + kr, g.pb.x, kb, cb, s, r, sp, kcv) * g.bs(ct * tile_c + cr, g.pb.x, kb, cb, s, r, sp, kcv);
}
// ... then the block's accumulators over the chunks (partial, over rc), the split's workspace ws(s,
// r, cg, k, sp) from them and dw = the splits summed in order.
void define_weight_partial(BwdWeightStagedGraph &g, Func ws, int tile_c, int tile_k, int threads_c, int threads_k) {
    Var &kr = g.kr, &cr = g.cr, &kt = g.kt, &ct = g.ct, &kb = g.kb, &cb = g.cb, &s = g.s, &r = g.r, &sp = g.sp,
        &cg = g.cg, &k = g.k;
    const int bc = tile_c * threads_c, bk = tile_k * threads_k;
    g.partial = Func("partial");
    g.partial(kr, cr, kt, ct, kb, cb, s, r, sp) = 0.0f;
    g.partial(kr, cr, kt, ct, kb, cb, s, r, sp) += g.cp(kr, cr, kt, ct, kb, cb, s, r, sp, g.rc.x);
    Expr jc = cg % bc, jk = k % bk;
    g.ws = ws;
    g.ws(s, r, cg, k, sp) = g.partial(jk % tile_k, jc % tile_c, jk / tile_k, jc / tile_c, k / bk, cg / bc, s, r, sp);
    g.rsp = RDom(0, g.splits, "rsp");
    g.dw = Func("dw");
    g.dw(s, r, cg, k) = 0.0f;
    g.dw(s, r, cg, k) += g.ws(s, r, cg, k, g.rsp);
}
// Entry (i, j) of a Winograd transform matrix, value(i, j), for an Expr i and a constant j: a chain of
// selects that folds to the constant once a schedule unrolls the loop i comes from.
template <class Value>
Expr entry(Value value, int rows, Expr i, int j) {
    Expr v = 0.0f;
    for (int r = 0; r < rows; r++)
        if (const double x = value(r, j); x != 0) v = select(i == r, (float)x, v);
    return v;
}
// One 2-D transform at point (i, j): sum over u, v < n of M(i, u) M(j, v) f(u, v), M = value (rows x n,
// read by entry()): U = G g G^T, V = B^T d B, Y = A^T M A.
template <class Value, class F>
Expr transform_2d(Value value, int rows, int n, Expr i, Expr j, F f) {
    Expr sum = 0.0f;
    for (int v = 0; v < n; v++)
        for (int u = 0; u < n; u++) sum += entry(value, rows, i, u) * entry(value, rows, j, v) * f(u, v);
    return sum;
}
}  // namespace

BwdDataStagedGraph define_bwd_data_staged(Func dy, Func w, Func prev, Func out, const ConvArgs &a, DType t,
                                          StrideClass sc, FilterClass fc, int tile_x, int tile_c, int threads_x,
                                          int threads_c, int block_k, bool fold_images, bool skip_pad) {
    BwdDataStagedGraph g;
    g.beta = a.beta;
    ClassConsts k1 = class_consts(sc, fc);
    const int st = k1.stride;  // 1 or 2: a compile-time stride (the family's valid())
    Expr R = or_const(k1.filter, a.R), S = or_const(k1.filter, a.S);
    Expr dh = or_const(k1.dilation, a.dilation_h), dwl = or_const(k1.dilation, a.dilation_w);
    Expr pt = k1.pad >= 0 ? Expr(k1.pad) : a.pad_top, pl = k1.pad >= 0 ? Expr(k1.pad) : a.pad_left;
    const int bp = tile_x * threads_x, bc = tile_c * threads_c;
    Expr Cg = a.C / a.groups, Kg = a.K / a.groups;
    Var &kk = g.kk, &j = g.j, &pb = g.pb, &cb = g.cb, &kcv = g.kcv, &sv = g.sv, &rv = g.rv, &n = g.n;
    // The block's group (from its first channel) and its channel j's index within the group.
    Expr grp = select(a.groups == 1, 0, min(cb * bc / Cg, a.groups - 1));
    auto c_in_group = [&](Expr ch) { return select(a.groups == 1, ch, ch - grp * Cg); };
    // The planes the tiles cover. Stride 1: dx's plane, pixel = y * W + x. Stride st > 1: one plane
    // per stride phase (phx, phy) = ((x + pl) % st, (y + pt) % st), of Wm x Hm pixels (mx, my), dx's
    // columns x = st * (mx + mx0(phx)) + phx - pl from the first inside dx (mx0: so that a phase plane
    // holds only dx's pixels, up to one column and row past the smaller phases), its tiles after the
    // previous phase's (tpp tiles a phase): a phase's taps are a stride-1 filter over dy
    // (phase_taps), the same for every pixel of a tile. fold_images: the images' planes one after
    // another (a phase's pixels N * Hm * Wm).
    Expr Wm = st == 1 ? a.W : (a.W + st - 1) / st, Hm = st == 1 ? a.H : (a.H + st - 1) / st;
    Expr plane = Hm * Wm, pixels = fold_images ? a.N * plane : plane;
    Expr tpp = (pixels + bp - 1) / bp;
    Expr ph = st == 1 ? Expr(0) : pb / tpp, phx = ph % st, phy = ph / st;
    Expr pb_in = st == 1 ? Expr(pb) : pb % tpp;
    auto m0 = [&](Expr phase, Expr pad) { return (pad - phase + st - 1) / st; };  // mx0, my0
    // Pixel j of tile pb: its column, row (and image) in its plane (tab(0 | 1 | 2, j, pb): a schedule
    // can compute them once per block), then dy's column and row at tap (sv, rv).
    Expr pix = pb_in * bp + j, in_plane = fold_images ? pix % plane : pix;
    {
        Var f("f");
        g.tab = Func("tab");
        if (fold_images) g.tab(f, j, pb) = select(f == 0, in_plane % Wm, f == 1, in_plane / Wm, pix / plane);
        else g.tab(f, j, pb) = select(f == 0, pix % Wm, pix / Wm);
    }
    Expr px = g.tab(0, j, pb), py = g.tab(1, j, pb);
    Expr img = fold_images ? clamp(g.tab(2, j, pb), 0, a.N - 1) : Expr(n);
    PhaseTaps tx = phase_taps(st, Expr(), dwl, k1.dilation, S), ty = phase_taps(st, Expr(), dh, k1.dilation, R);
    // dy's column and row for tap (sv, rv) of the tile's phase at plane pixel (mx, my).
    auto dy_col = [&](Expr mx, Expr s) { return st == 1 ? mx + pl - s * dwl : tx.src(mx + m0(phx, pl), phx, s); };
    auto dy_row = [&](Expr my, Expr r) { return st == 1 ? my + pt - r * dh : ty.src(my + m0(phy, pt), phy, r); };
    Expr q = dy_col(px, sv), p = dy_row(py, rv);
    Expr kin = kcv * block_k + kk;
    Expr inside = k1.filter == 1 && k1.pad == 0 ? Expr(pix < pixels && kin < Kg)
                                                  : pix < pixels && kin < Kg && q >= 0 && q < a.Q && p >= 0 && p < a.P;
    g.as = Func("as");
    g.as(kk, j, pb, cb, kcv, sv, rv, n) =
        select(inside, decode(dy(clamp(q, 0, a.Q - 1), clamp(p, 0, a.P - 1), grp * Kg + clamp(kin, 0, Kg - 1), img), t), 0.0f);
    {
        Var wc("wc"), wk("wk"), ws("ws"), wr("wr");
        g.wt = Func("wt");
        g.wt(wc, wk, ws, wr) = decode(w(ws, wr, wc, wk), t);
    }
    Expr ch = cb * bc + j;
    // The filter tap of tap index (sv, rv) of the tile's phase.
    Expr tap_s = st == 1 ? Expr(sv) : tx.r(phx, sv), tap_r = st == 1 ? Expr(rv) : ty.r(phy, rv);
    g.bs = Func("bs");
    // (n unused, pb only for the phase: bs has as's dims, so that a schedule can copy both in one
    // loop nest.)
    g.bs(j, kk, pb, cb, kcv, sv, rv, n) =
        select(ch < a.C && kin < Kg, g.wt(clamp(c_in_group(ch), 0, Cg - 1), grp * Kg + clamp(kin, 0, Kg - 1), tap_s, tap_r), 0.0f);

    define_data_chunk_sums(g, tile_x, tile_c, block_k);
    g.rc = RDom(0, (Kg + block_k - 1) / block_k, 0, tx.count, 0, ty.count, "rc");
    Expr taps_exist = Halide::Internal::const_true();  // the tile's phase has tap (rc.y, rc.z)
    if (st > 1) taps_exist = tx.valid(phx, g.rc.y) && ty.valid(phy, g.rc.z);
    if (skip_pad && !(k1.filter == 1 && k1.pad == 0)) {
        // Taps whose dy reads lie wholly in the padding for every pixel of tile pb add zeros: skip
        // them (a uniform test per block and tap, so the chunk's copies are skipped too). The tile's
        // rows are [y0, y1]; its columns [x0, x1] when it lies in one row, else every column (dy's
        // row and column grow with the plane's). DeepLab's ASPP (rate 12-18 on 32x32 planes) reads
        // padding on 25-38% of its row taps.
        // Folded images: a tile spanning two images takes every row.
        Expr first = pb_in * bp, last = min(first + bp, pixels) - 1;
        Expr one_image = fold_images ? first / plane == last / plane : Halide::Internal::const_true();
        if (fold_images) first = first % plane, last = last % plane;
        Expr y0 = select(one_image, first / Wm, 0), y1 = select(one_image, last / Wm, Hm - 1);
        Expr x0 = select(one_image && y0 == y1, first % Wm, 0), x1 = select(one_image && y0 == y1, last % Wm, Wm - 1);
        g.rc.where(taps_exist && dy_row(y1, g.rc.z) >= 0 && dy_row(y0, g.rc.z) < a.P && dy_col(x1, g.rc.y) >= 0 &&
                   dy_col(x0, g.rc.y) < a.Q);
    } else if (st > 1) {
        g.rc.where(taps_exist);
    }
    define_data_partial(g, tile_x, tile_c, threads_x, threads_c);
    Var &c = g.c;
    g.out = out;
    // dx's pixel (x, y) of image n in dxf: y * W + x, or at stride st its phase's tiles, then (mx, my)
    // there (clamped to the phases' tiles: bounds inference sees the divisions' full range); folded,
    // after the plane of each image before n (dxf's n then has extent 1).
    Expr at = g.y * a.W + g.x;
    if (st > 1) {
        Expr tx_ = g.x + pl, ty_ = g.y + pt, phx_ = tx_ % st, phy_ = ty_ % st;
        Expr mx = tx_ / st - m0(phx_, pl), my = ty_ / st - m0(phy_, pt);
        at = (phy_ * st + phx_) * tpp * bp + my * Wm + mx;
    }
    if (fold_images) at += n * plane;
    if (st > 1) at = clamp(at, 0, st * st * tpp * bp - 1);
    Expr res = a.alpha * g.dxf(at, c, fold_images ? Expr(0) : Expr(n));
    g.out(g.x, g.y, c, n) = blend_output(res, prev(g.x, g.y, c, n), a, t);
    return g;
}

BwdDataStagedGraph define_bwd_data_winograd(Func dy, Func w, Func prev, Func out, const ConvArgs &a, DType t, int m,
                                            int r, int tile_x, int tile_c, int threads_x, int threads_c, int block_k) {
    BwdDataStagedGraph g;
    g.beta = a.beta;
    const winograd::Transform T = winograd::transform(m, r);
    const int al = T.alpha;
    g.wino_m = m, g.alpha = al;
    const int bp = tile_x * threads_x, bc = tile_c * threads_c;
    Expr Cg = a.C / a.groups, Kg = a.K / a.groups;
    Expr TW = (a.W + m - 1) / m, TH = (a.H + m - 1) / m, tiles = a.N * TH * TW;
    Var &u = g.u, &v = g.v, &e = g.e, &tl = g.tl, &n = g.n, &c = g.c;
    Var kx("kx");
    // dy's input tile: dx's tile (tx, ty) of image n reads dy's columns tx * m + u + pad_left - (r - 1)
    // (u < alpha), rows likewise: dx is the correlation of dy shifted by r - 1 - pad with the rotated
    // filter.
    {
        Expr tx = tl % TW, rest = tl / TW, ty = rest % TH, img = rest / TH;
        Expr q = tx * m + u + a.pad_left - (r - 1), p = ty * m + v + a.pad_top - (r - 1);
        g.dt = Func("dt");
        g.dt(u, v, kx, tl) = select(in_range(q, a.Q) && in_range(p, a.P) && tl < tiles,
                                    decode(dy(clamp(q, 0, a.Q - 1), clamp(p, 0, a.P - 1), kx, clamp(img, 0, a.N - 1)), t),
                                    0.0f);
    }
    auto bt = [&](int i, int j) { return T.b_t(i, j); };
    auto gm = [&](int i, int j) { return T.g_(i, j); };
    auto atm = [&](int i, int j) { return T.a_t(i, j); };
    // V = B^T d B at point e = ex + alpha * ey (ex along the columns).
    g.vt = Func("vt");
    g.vt(kx, tl, e) = transform_2d(bt, al, al, e % al, e / al, [&](int uu, int vv) { return g.dt(uu, vv, kx, tl); });
    // U = G g G^T of the rotated filter, channels innermost (wt's dims as the staged family's: c, k,
    // then the point's column and row).
    {
        Var wc("wc"), wk("wk"), ws("ws"), wr("wr");
        g.wt = Func("wt");
        g.wt(wc, wk, ws, wr) =
            transform_2d(gm, al, r, ws, wr, [&](int ss, int rr) { return decode(w(r - 1 - ss, r - 1 - rr, wc, wk), t); });
    }
    // The GEMM per point (n = e): define_bwd_data_staged's, with the tiles as its pixels, one tap.
    Var &kk = g.kk, &j = g.j, &pb = g.pb, &cb = g.cb, &kcv = g.kcv, &sv = g.sv, &rv = g.rv;
    Expr grp = select(a.groups == 1, 0, min(cb * bc / Cg, a.groups - 1));
    auto c_in_group = [&](Expr ch) { return select(a.groups == 1, ch, ch - grp * Cg); };
    Expr tile = pb * bp + j, kin = kcv * block_k + kk, ch = cb * bc + j;
    g.as = Func("as");
    g.as(kk, j, pb, cb, kcv, sv, rv, n) =
        select(tile < tiles && kin < Kg, g.vt(grp * Kg + clamp(kin, 0, Kg - 1), clamp(tile, 0, tiles - 1), n), 0.0f);
    g.bs = Func("bs");
    g.bs(j, kk, pb, cb, kcv, sv, rv, n) =
        select(ch < a.C && kin < Kg, g.wt(clamp(c_in_group(ch), 0, Cg - 1), grp * Kg + clamp(kin, 0, Kg - 1), n % al, n / al),
               0.0f);
    define_data_chunk_sums(g, tile_x, tile_c, block_k);
    g.rc = RDom(0, (Kg + block_k - 1) / block_k, 0, 1, 0, 1, "rc");
    define_data_partial(g, tile_x, tile_c, threads_x, threads_c);
    g.mt = Func("mt");
    g.mt(e, c, tl) = g.dxf(tl, c, e);
    // dx = A^T M A at (x % m, y % m) of its tile.
    Expr at_tile = (n * TH + g.y / m) * TW + g.x / m;
    Expr res = a.alpha * transform_2d(atm, m, al, g.x % m, g.y % m,
                                      [&](int ex, int ey) { return g.mt(ex + al * ey, c, at_tile); });
    g.out = out;
    g.out(g.x, g.y, c, n) = blend_output(res, prev(g.x, g.y, c, n), a, t);
    return g;
}

BwdWeightGraph define_bwd_weight(Func x, Func dy, Func prev, Func ws, Func out, const ConvArgs &a, DType t,
                                 StrideClass sc, FilterClass fc, Expr max_splits, GroupClass gc, bool image_splits,
                                 int k_tile) {
    BwdWeightGraph g;
    g.x_in = x;
    ClassConsts k = class_consts(sc, fc);
    g.sx = g.sy = k.stride;
    g.beta = a.beta;
    Expr dh = or_const(k.dilation, a.dilation_h), dwl = or_const(k.dilation, a.dilation_w);
    Expr pt = k.pad >= 0 ? Expr(k.pad) : a.pad_top, pl = k.pad >= 0 ? Expr(k.pad) : a.pad_left;
    Expr sh = or_const(k.stride, a.stride_h), sw = or_const(k.stride, a.stride_w);
    const bool depthwise = gc == GroupClass::Depthwise;  // C / G = K / G = 1: x channel k for filter k
    Expr Cg = a.C / a.groups, Kg = a.K / a.groups;

    Var xx("xx"), yy("yy"), c("c"), n("n"), q("q"), p("p"), kk("k");
    g.x_f = Func("x_f");
    const int round_q = image_splits && k.filter != 1 ? a.weight_round_columns : 0;  // ConvArgs::weight_round_columns
    // The reduction's columns (rounded up to a multiple of round_q) and rows, and the region of x
    // they read (x_f's extent for weight_copy_planes).
    Expr q_end = round_q > 1 ? (a.Q + round_q - 1) / round_q * round_q : a.Q;
    if (image_splits && a.weight_copy_planes) {
        // ConvArgs::weight_copy_planes: x over the region the reduction reads (the plane's part in
        // it copied), dy with its zeros past Q.
        Expr x_hi = (q_end - 1) * sw - pl + (k.filter > 0 ? k.filter - 1 : a.S - 1) * dwl + 1;
        Expr y_hi = (a.P - 1) * sh - pt + (k.filter > 0 ? k.filter - 1 : a.R - 1) * dh + 1;
        define_copy_with_border(
            g.x_f, [&](Expr cx, Expr cy, Expr cc, Expr cn) { return decode(x(cx, cy, cc, cn), t); },
            max(0, min(a.W, x_hi)), max(0, min(a.H, y_hi)), -pl, x_hi, -pt, y_hi);
        if (!a.weight_dy_in_place) {
            g.dy_f = Func("dy_f");
            define_copy_with_border(
                g.dy_f, [&](Expr cq, Expr cp, Expr ck, Expr cn) { return decode(dy(cq, cp, ck, cn), t); }, a.Q,
                a.P, 0, q_end, 0, a.P);
        }
    } else if (k.filter == 1) {
        // Pointwise (no padding): output column q reads x at q * stride <= (Q - 1) * stride <=
        // W - 1, always inside x, so its loads stay plain (no range test, no clamp), as
        // backward-data's pointwise dy loads.
        g.x_f(xx, yy, c, n) = decode(x(xx, yy, c, n), t);
    } else if (a.likely_bounds) {
        // One select per dim (each loop's partition solves its own test), the in-bounds values likely.
        Expr v = decode(x(clamp(likely(xx), 0, a.W - 1), clamp(likely(yy), 0, a.H - 1), c, n), t);
        g.x_f(xx, yy, c, n) = select(in_range(yy, a.H), likely(select(in_range(xx, a.W), likely(v), 0.0f)), 0.0f);
    } else {
        g.x_f(xx, yy, c, n) = select(in_range(xx, a.W) && in_range(yy, a.H),
                                     decode(x(clamp(xx, 0, a.W - 1), clamp(yy, 0, a.H - 1), c, n), t), 0.0f);
    }
    if (!(image_splits && a.weight_copy_planes && !a.weight_dy_in_place)) {
        g.dy_f = Func("dy_f");
        if (round_q > 1)
            g.dy_f(q, p, kk, n) = select(q < a.Q, decode(dy(min(q, a.Q - 1), p, kk, n), t), 0.0f);
        else
            g.dy_f(q, p, kk, n) = decode(dy(q, p, kk, n), t);
    }

    g.partial = Func("partial");
    g.partial(g.s, g.r, g.cg, g.k, g.sp) = 0.0f;
    Expr grp = select(a.groups == 1, 0, k_tile > 1 ? g.k / k_tile * k_tile / Kg : g.k / Kg);
    Expr c_of = depthwise ? Expr(g.k) : grp * Cg + g.cg;
    if (image_splits) {
        // Splits of whole images (ceil(N / max_splits) each; the dispatcher makes max_splits a
        // divisor of N) and a reduction over (q, p, image): no division per row, and a split's
        // x and dy are whole images, which a schedule can stage once.
        // (ConvArgs::weight_direct: one split of every image, a constant the schedule's tile sees.)
        Expr ips = a.weight_direct ? a.N : (a.N + max_splits - 1) / max_splits;
        g.rows = ips * a.P;
        g.splits = a.weight_direct ? Expr(1) : (a.N + ips - 1) / ips;
        g.rr = RDom(0, q_end, 0, a.P, 0, ips, "rr");
        Expr n_raw = g.sp * ips + g.rr.z;
        g.rr.where(n_raw < a.N);
        Expr n = min(n_raw, a.N - 1);  // bounds inference sees the images past N (never executed)
        g.partial(g.s, g.r, g.cg, g.k, g.sp) +=
            g.x_f(g.rr.x * sw - pl + g.s * dwl, g.rr.y * sh - pt + g.r * dh, c_of, n) * g.dy_f(g.rr.x, g.rr.y, g.k, n);
    } else {
        // Split the N*P rows into at most max_splits contiguous chunks: a fixed partition for a
        // given problem and kernel, so the result is bit-identical from run to run.
        Expr rows_total = a.N * a.P;
        g.rows = a.weight_direct ? rows_total : wgrad_rows_per_split(rows_total, max_splits);
        g.splits = a.weight_direct ? Expr(1) : wgrad_splits(rows_total, max_splits);
        g.rr = RDom(0, a.Q, 0, g.rows, "rr");
        Expr row = g.sp * g.rows + g.rr.y;
        if (!a.weight_direct) g.rr.where(row < rows_total);  // direct: one split of every row
        if (a.weight_skip_pad) {  // ConvArgs::weight_skip_pad
            Expr xc = g.rr.x * sw - pl + g.s * dwl, xr = (row % a.P) * sh - pt + g.r * dh;
            g.rr.where(xc >= 0 && xc < a.W && xr >= 0 && xr < a.H);
        }
        // Rows past the end are never executed (where), but bounds inference sees them: n is clamped.
        // x and dy by flattened row (n, p): partial reads row `rw` through these (inlined unless a
        // schedule wraps them). A wrapper computed per row then has a one-row region, where through
        // row % P and row / P Halide's interval arithmetic would see every row of the split.
        // x_row's second dim is the filter row (not its offset r * dilation): a row block stages
        // R rows of x per output row, where offsets made bounds inference stage every row in
        // between ((R - 1) * dilation + 1: 25 for DeepLab's rate 12, most of its time).
        Var rw("rw"), tr("tr");
        Expr n_of = a.clamp_all ? clamp(rw / a.P, 0, a.N - 1) : min(rw / a.P, a.N - 1), p_of = rw % a.P;
        g.x_row = Func("x_row");
        g.x_row(xx, tr, c, rw) = g.x_f(xx, p_of * sh - pt + tr * dh, c, n_of);
        g.dy_row = Func("dy_row");
        g.dy_row(q, kk, rw) = g.dy_f(a.clamp_all ? clamp(q, 0, a.Q - 1) : Expr(q), p_of, kk, n_of);

        g.partial(g.s, g.r, g.cg, g.k, g.sp) +=
            g.x_row(g.rr.x * sw - pl + g.s * dwl, g.r, c_of, row) * g.dy_row(g.rr.x, g.k, row);
    }
    g.ws = ws;
    if (a.weight_direct) g.ws(g.s, g.r, g.cg, g.k, g.sp) = 0.0f;  // of extent 0 (ConvArgs::weight_direct)
    else g.ws(g.s, g.r, g.cg, g.k, g.sp) = g.partial(g.s, g.r, g.cg, g.k, g.sp);

    g.rsp = RDom(0, g.splits, "rsp");
    g.dw = Func("dw");
    g.dw(g.s, g.r, g.cg, g.k) = 0.0f;
    Func parts = a.sum_from_partial || a.weight_direct ? g.partial : g.ws;  // ConvArgs::sum_from_partial
    g.dw(g.s, g.r, g.cg, g.k) += parts(g.s, g.r, g.cg, g.k, g.rsp);

    g.out = out;
    Expr res = a.alpha * g.dw(g.s, g.r, g.cg, g.k);
    g.out(g.s, g.r, g.cg, g.k) = blend_output(res, prev(g.s, g.r, g.cg, g.k), a, t);
    return g;
}

BwdWeightStagedGraph define_bwd_weight_staged(Func x, Func dy, Func prev, Func ws, Func out, const ConvArgs &a,
                                              DType t, StrideClass sc, FilterClass fc, Expr max_splits, int tile_c,
                                              int tile_k, int threads_c, int threads_k, int block_p, bool skip_pad) {
    BwdWeightStagedGraph g;
    g.beta = a.beta;
    ClassConsts k1 = class_consts(sc, fc);
    Expr dh = or_const(k1.dilation, a.dilation_h), dwl = or_const(k1.dilation, a.dilation_w);
    Expr pt = k1.pad >= 0 ? Expr(k1.pad) : a.pad_top, pl = k1.pad >= 0 ? Expr(k1.pad) : a.pad_left;
    Expr sh = or_const(k1.stride, a.stride_h), sw = or_const(k1.stride, a.stride_w);
    const int bc = tile_c * threads_c, bk = tile_k * threads_k;
    Var &i = g.i, &j = g.j, &kb = g.kb, &cb = g.cb, &kcv = g.kcv, &s = g.s, &r = g.r, &sp = g.sp;
    // The splits of define_bwd_weight: rows (n, p) per split and their count.
    Expr rows_total = a.N * a.P;
    Expr rows = wgrad_rows_per_split(rows_total, max_splits);
    g.splits = wgrad_splits(rows_total, max_splits);
    // Chunk kcv's pixel j of split sp: its column q (-1 past the split and N*P), row p and image n
    // (tab(0 | 1 | 2, ...): a schedule can compute them once per chunk).
    {
        Var f("f");
        Expr pix = kcv * block_p + j, rw = pix / a.Q, row = sp * rows + rw;
        Expr rowc = min(row, rows_total - 1);
        g.tab = Func("tab");
        g.tab(f, j, sp, kcv) = select(f == 0, select(rw < rows && row < rows_total, pix % a.Q, -1),
                                      f == 1, rowc % a.P, rowc / a.P);
    }
    Expr q = clamp(g.tab(0, j, sp, kcv), 0, a.Q - 1), p = clamp(g.tab(1, j, sp, kcv), 0, a.P - 1);
    Expr n = clamp(g.tab(2, j, sp, kcv), 0, a.N - 1), live = g.tab(0, j, sp, kcv) >= 0;
    Expr kin = kb * bk + i;
    g.as = Func("as");
    g.as(i, j, kb, cb, s, r, sp, kcv) = select(live && kin < a.K, decode(dy(q, p, min(kin, a.K - 1), n), t), 0.0f);
    Expr xc = q * sw - pl + s * dwl, xr = p * sh - pt + r * dh, cin = cb * bc + i;
    Expr in_image = k1.filter == 1 && k1.pad == 0 ? Halide::Internal::const_true()
                                                   : xc >= 0 && xc < a.W && xr >= 0 && xr < a.H;
    g.bs = Func("bs");
    g.bs(i, j, kb, cb, s, r, sp, kcv) =
        select(live && cin < a.C && in_image,
               decode(x(clamp(xc, 0, a.W - 1), clamp(xr, 0, a.H - 1), min(cin, a.C - 1), n), t), 0.0f);

    define_weight_chunk_sums(g, tile_c, tile_k, block_p);
    g.rc = RDom(0, (rows * a.Q + block_p - 1) / block_p, "rc");
    if (skip_pad && !(k1.filter == 1 && k1.pad == 0)) {
        // Chunks whose x reads at tap (s, r) lie wholly in the padding add zeros: skip them (a
        // uniform test per chunk, so its copies are skipped too). The chunk's rows of the flattened
        // (n, p) space are [g0, g1]; its columns [q0, q1] when it lies in one row, else every column.
        // DeepLab's ASPP (rate 12-18 on 32x32 planes) reads padding on 25-38% of its row taps.
        Expr pix0 = g.rc.x * block_p, pix1 = min(pix0 + block_p, rows * a.Q) - 1;
        Expr rw0 = pix0 / a.Q, rw1 = pix1 / a.Q;
        Expr g0 = sp * rows + rw0, g1 = min(sp * rows + rw1, rows_total - 1);
        // The rows p (columns q) whose x row (column) lies in the image at this tap; division of a
        // negative numerator rounds down (Halide's Euclidean division by a positive stride).
        Expr lo_p = max((pt - r * dh + sh - 1) / sh, 0), hi_p = min((a.H - 1 + pt - r * dh) / sh, a.P - 1);
        Expr p0 = g0 % a.P, p1 = g1 % a.P;
        Expr rows_hit = lo_p <= hi_p &&
                        (g1 - g0 >= a.P - 1 ||
                         select(p0 <= p1, max(p0, lo_p) <= min(p1, hi_p), hi_p >= p0 || lo_p <= p1));
        Expr lo_q = max((pl - s * dwl + sw - 1) / sw, 0), hi_q = min((a.W - 1 + pl - s * dwl) / sw, a.Q - 1);
        Expr q0 = select(rw0 == rw1, pix0 % a.Q, 0), q1 = select(rw0 == rw1, pix1 % a.Q, a.Q - 1);
        g.rc.where(rows_hit && max(q0, lo_q) <= min(q1, hi_q));
    }
    define_weight_partial(g, ws, tile_c, tile_k, threads_c, threads_k);
    Var &cg = g.cg, &k = g.k;
    g.out = out;
    Expr res = a.alpha * g.dw(s, r, cg, k);
    g.out(s, r, cg, k) = blend_output(res, prev(s, r, cg, k), a, t);
    return g;
}

BwdWeightStagedGraph define_bwd_weight_winograd(Func x, Func dy, Func prev, Func ws, Func out, const ConvArgs &a,
                                                DType t, Expr max_splits, int m, int fr, int tile_c, int tile_k,
                                                int threads_c, int threads_k, int block_p) {
    BwdWeightStagedGraph g;
    g.beta = a.beta;
    const winograd::Transform T = winograd::transform(fr, m);  // fr outputs (filter taps), m-tap "filter" (dy)
    const int al = T.alpha;
    g.wino_m = m, g.alpha = al, g.tab_fields = 1;
    const int bc = tile_c * threads_c, bk = tile_k * threads_k;
    Var &i = g.i, &j = g.j, &kb = g.kb, &cb = g.cb, &kcv = g.kcv, &s = g.s, &r = g.r, &sp = g.sp;
    Var &u = g.u, &v = g.v, &e = g.e, &tl = g.tl, &kx = g.kx;
    Expr TP = (a.P + m - 1) / m, TQ = (a.Q + m - 1) / m, trows_total = a.N * TP, tiles = trows_total * TQ;
    // The splits as the runtime counts them (over the N * P rows: wgrad_splits()), each taking its
    // share of the N * TP rows of tiles.
    g.splits = wgrad_splits(a.N * a.P, max_splits);
    Expr trows = (trows_total + g.splits - 1) / g.splits;
    {
        Var f("f");
        Expr pix = kcv * block_p + j, rw = pix / TQ, trow = sp * trows + rw;
        g.tab = Func("tab");  // chunk kcv's tile j of split sp (-1 past the split and the tiles)
        g.tab(f, j, sp, kcv) = select(rw < trows && trow < trows_total, trow * TQ + pix % TQ, -1);
    }
    // Tile tl's dy (m x m from column tq * m, row tp * m of image n) and x's window (alpha x alpha from
    // column tq * m - pad_left, row tp * m - pad_top).
    Expr tq = tl % TQ, rest = tl / TQ, tp = rest % TP, img = clamp(rest / TP, 0, a.N - 1);
    {
        Expr q = tq * m + u, p = tp * m + v;
        g.dt = Func("dt");
        g.dt(u, v, kx, tl) = select(q < a.Q && p < a.P, decode(dy(min(q, a.Q - 1), min(p, a.P - 1), kx, img), t), 0.0f);
        Expr xc = tq * m + u - a.pad_left, xr = tp * m + v - a.pad_top;
        g.xw = Func("xw");
        g.xw(u, v, kx, tl) = select(in_range(xc, a.W) && in_range(xr, a.H),
                                    decode(x(clamp(xc, 0, a.W - 1), clamp(xr, 0, a.H - 1), kx, img), t), 0.0f);
    }
    auto bt = [&](int a_, int b_) { return T.b_t(a_, b_); };
    auto gm = [&](int a_, int b_) { return T.g_(a_, b_); };
    auto atm = [&](int a_, int b_) { return T.a_t(a_, b_); };
    g.ut = Func("ut");
    g.ut(kx, tl, e) = transform_2d(gm, al, m, e % al, e / al, [&](int uu, int vv) { return g.dt(uu, vv, kx, tl); });
    g.vt = Func("vt");
    g.vt(kx, tl, e) = transform_2d(bt, al, al, e % al, e / al, [&](int uu, int vv) { return g.xw(uu, vv, kx, tl); });
    Expr tile = g.tab(0, j, sp, kcv), live = tile >= 0, tlc = clamp(tile, 0, tiles - 1);
    Expr kin = kb * bk + i, cin = cb * bc + i, point = s + al * r;
    g.as = Func("as");
    g.as(i, j, kb, cb, s, r, sp, kcv) = select(live && kin < a.K, g.ut(min(kin, a.K - 1), tlc, point), 0.0f);
    g.bs = Func("bs");
    g.bs(i, j, kb, cb, s, r, sp, kcv) = select(live && cin < a.C, g.vt(min(cin, a.C - 1), tlc, point), 0.0f);

    define_weight_chunk_sums(g, tile_c, tile_k, block_p);
    g.rc = RDom(0, (trows * TQ + block_p - 1) / block_p, "rc");
    define_weight_partial(g, ws, tile_c, tile_k, threads_c, threads_k);  // dw: the points' sums over the splits
    Var &cg = g.cg, &k = g.k;
    // The filter's tap (s, r) = A^T M A.
    Expr res = a.alpha * transform_2d(atm, fr, al, s, r, [&](int ex, int ey) { return g.dw(ex, ey, cg, k); });
    g.out = out;
    g.out(s, r, cg, k) = blend_output(res, prev(s, r, cg, k), a, t);
    return g;
}

BwdWeightMmaGraph define_bwd_weight_mma(Func x, Func dy, Func prev, Func ws, Func out, const ConvArgs &a, DType t,
                                        StrideClass sc, FilterClass fc, Expr max_splits, int frag_kind, int vec,
                                        int stage, int unroll, bool copy_groups) {
    BwdWeightMmaGraph g;
    g.beta = a.beta;
    g.vec = vec;
    g.stage = stage;
    const frag::Shape fs = frag::shape(frag_kind);
    ClassConsts k1 = class_consts(sc, fc);
    Expr dh = or_const(k1.dilation, a.dilation_h), dwl = or_const(k1.dilation, a.dilation_w);
    Expr pt = k1.pad >= 0 ? Expr(k1.pad) : a.pad_top, pl = k1.pad >= 0 ? Expr(k1.pad) : a.pad_left;
    Expr sh = or_const(k1.stride, a.stride_h), sw = or_const(k1.stride, a.stride_w);
    Var &i = g.i, &l = g.l, &mt = g.mt, &ct = g.ct, &s = g.s, &r = g.r, &sp = g.sp;
    const Type st = storage_type(t);
    // The reduction: k-blocks of fs.K columns of a row (n, p), rows in order, split into runs of
    // equal length (the last shorter), as the dispatcher counts them (mma_weight_kblocks).
    Expr qblocks = (a.Q + fs.K - 1) / fs.K, rows_total = a.N * a.P;
    Expr total = mma_weight_kblocks(rows_total, a.Q, fs.K);
    Expr per_split = wgrad_rows_per_split(total, max_splits);
    g.splits = wgrad_splits(total, max_splits);
    // stage > 0: chunks of `stage` k-blocks (kc the chunk, kb the k-block in it; k-blocks past the
    // split's end are zeroed in the staging).
    // (unroll > 1, stage 0: the split's k-blocks rounded up to a multiple of unroll, so that the
    // schedule's split of kb.x has no tail; those past the split's end are not live.)
    const bool rounded = stage == 0 && unroll > 1;
    g.kb = RDom(0, stage > 0 ? Expr(stage) : round_up_kblocks(per_split, rounded ? unroll : 1), "kb");
    if (stage > 0) g.kc = RDom(0, (per_split + stage - 1) / stage, "kc");
    Expr kbx = stage > 0 ? g.kcv * stage + g.kb.x : Expr(g.kb.x);
    // K-block kx of split sp: its index over all k-blocks, and its row (n, p) clamped (k-blocks
    // past the last are never executed, vec=1, or zeroed, vec=4, but read a valid row).
    auto kblock_index = [&](Expr kx) { return sp * per_split + kx; };
    auto kblock_row = [&](Expr kidx) { return min(kidx / qblocks, rows_total - 1); };
    // x's column and row that output column q and row p read at tap (s, r).
    auto x_col = [&](Expr q, Expr ts) { return q * sw - pl + ts * dwl; };
    auto x_row = [&](Expr pp, Expr tr) { return pp * sh - pt + tr * dh; };
    Expr idx = kblock_index(kbx), live = idx < total;  // the same for every lane
    if (rounded) live = live && kbx < per_split;
    Expr row = kblock_row(idx), q0 = (idx % qblocks) * fs.K;
    Expr n = row / a.P, p = row % a.P;
    Expr yy = x_row(p, r);  // x's row: the same for every lane
    Expr row_in = k1.filter == 1 ? live : live && yy >= 0 && yy < a.H;
    std::vector<Expr> av, bv;
    if (vec == 1) {
        for (int j = 0; j < fs.a_per_lane; j++) {  // A[k][pixel] = dy
            Expr kk = fs.M * mt + frag::a_row(fs, l, j), q = q0 + frag::a_k(fs, l, j);
            Expr in = live && kk < a.K && q < a.Q;
            av.push_back(select(in, dy(min(q, a.Q - 1), p, min(kk, a.K - 1), n), cast(st, 0)));
        }
        for (int j = 0; j < fs.b_per_lane; j++) {  // B[pixel][c] = x at the tap
            Expr c = fs.N * ct + frag::b_col(fs, l, j), q = q0 + frag::b_k(fs, l, j);
            Expr xx = x_col(q, s);
            Expr in = row_in && c < a.C && q < a.Q && (k1.filter == 1 ? xx < a.W : xx >= 0 && xx < a.W);
            bv.push_back(
                select(in, x(clamp(xx, 0, a.W - 1), clamp(yy, 0, a.H - 1), min(c, a.C - 1), n), cast(st, 0)));
        }
    } else if (stage > 0) {
        // Chunks staged per block: as(j, v, g, kx, sp) / bs(j, v, g, kx, s, r, sp) = column j of
        // k-block kx's row of dy / of x at tap (s, r), channel G g + v; zero past Q, past the split,
        // outside the image and past the channels. Channels in groups of G (C and K multiples of G:
        // a group lies inside the tensor or past it whole, so its first channel is clamped, not
        // each, and its load stays one vector); a k-block's column block, row and image depend on
        // kx alone.
        Var jj("jj"), cv("cv"), cgr("cgr"), kxv("kxv");
        Var &e = g.e, &h = g.h, &kx = g.kx;
        Expr kidx = kblock_index(kxv), krow = kblock_row(kidx);
        Expr qs = (kidx % qblocks) * fs.K + jj, ps = krow % a.P, ns = krow / a.P;
        Expr slive = kxv < per_split && kidx < total && qs < a.Q;
        // Channel G cgr + cv (G = kStagedChannelGroup): groups past the channels read the last group
        // (and are zeroed).
        const int G = kStagedChannelGroup;
        g.as = Func("as");
        g.as(jj, cv, cgr, kxv, sp) =
            select(slive && G * cgr < a.K, dy(min(qs, a.Q - 1), ps, max(min(G * cgr, a.K - G), 0) + cv, ns), cast(st, 0));
        Expr xc = x_col(min(qs, a.Q - 1), s), xr = x_row(ps, r);
        Expr in_image = k1.filter == 1 ? Halide::Internal::const_true() : xc >= 0 && xc < a.W && xr >= 0 && xr < a.H;
        g.bs = Func("bs");
        g.bs(jj, cv, cgr, kxv, s, r, sp) =
            select(slive && G * cgr < a.C && in_image,
                   x(clamp(xc, 0, a.W - 1), clamp(xr, 0, a.H - 1), max(min(G * cgr, a.C - G), 0) + cv, ns), cast(st, 0));
        // A lane's group: vec consecutive columns of its row (A) / column (B) of the fragment.
        Expr j0 = vec * frag::group_of(fs, l);
        Expr ka = fs.M * mt + frag::a_row(fs, l, 0) + 8 * h, cb = fs.N * ct + frag::b_col(fs, l, 0);
        g.a_lane = Func("a_lane");
        g.a_lane(e, h, mt, kx, l, sp) = g.as(j0 + e, ka % G, ka / G, kx, sp);
        g.b_lane = Func("b_lane");
        g.b_lane(e, ct, kx, l, s, r, sp) = g.bs(j0 + e, cb % G, cb / G, kx, s, r, sp);
        for (int j = 0; j < fs.a_per_lane; j++)
            av.push_back(g.a_lane(frag::a_group_elem(fs, j), frag::a_half(fs, j), mt, kbx, l, sp));
        for (int j = 0; j < fs.b_per_lane; j++)
            bv.push_back(g.b_lane(frag::b_group_elem(fs, j), ct, kbx, l, s, r, sp));
    } else {
        // Pixel groups of vec = 4 consecutive columns from the copies (columns innermost, zero past
        // Q and, for x, outside the image, so no lane tests a bound): a k-block's q0 and a group's
        // offset are multiples of 4, and so every load is one aligned vector. Rows k >= K and
        // columns c >= C read the last one (their results are never stored); k-blocks past the
        // split's end read a valid row and are zeroed in A (uniform).
        Var qq("qq"), kk("kk"), cc("cc"), pp("pp"), yv("yv"), nn("nn"), ss("ss");
        Var &e = g.e, &h = g.h, &kx = g.kx;
        // The copies' values: channel kk / cc of dy / x (copy_groups: channel G g + v, through dyg
        // and xg, the same expressions with the channel's group and place as dims).
        const int G = kStagedChannelGroup;
        Var &gv = g.gv, gg("gg");
        g.k_channels = a.K;
        g.c_channels = a.C;
        // (A group is clamped to the channels, `extent`: a schedule may compute a thread's groups
        // past them, which it then does not store.)
        auto copy = [&](Func &f, Func &grouped, const std::string &name, Var ch, Expr extent, std::vector<Var> rest,
                        const std::function<Expr(Expr)> &value) {
            f = Func(name);
            std::vector<Var> args = {qq, ch};
            args.insert(args.end(), rest.begin(), rest.end());
            if (!copy_groups) {
                f(args) = value(ch);
                return;
            }
            grouped = Func(name + "_g");
            std::vector<Var> gargs = {gv, qq, gg};
            gargs.insert(gargs.end(), rest.begin(), rest.end());
            grouped(gargs) = value(G * clamp(gg, 0, extent / G - 1) + gv);
            std::vector<Expr> at = {ch % G, qq, ch / G};
            at.insert(at.end(), rest.begin(), rest.end());
            f(args) = grouped(at);
        };
        // (Grouped, the rows and images clamped too: the schedule computes a group per thread, at
        // rows and images its block decodes from a flat grid, whose bounds Halide does not narrow.)
        Expr pc = copy_groups ? clamp(pp, 0, a.P - 1) : Expr(pp), nc = copy_groups ? clamp(nn, 0, a.N - 1) : Expr(nn);
        copy(g.dyt, g.dyg, "dyt", kk, a.K, {pp, nn},
             [&](Expr ch) { return select(qq < a.Q, dy(min(qq, a.Q - 1), pc, ch, nc), cast(st, 0)); });
        if (k1.filter == 1) {
            // No padding: output column q reads x column q * stride <= W - 1, row p row p * stride.
            copy(g.xs, g.xg, "xs", cc, a.C, {pp, nn}, [&](Expr ch) {
                return select(qq < a.Q, x(x_col(min(qq, a.Q - 1), 0), x_row(pc, 0), ch, nc), cast(st, 0));
            });
        } else {
            Expr xx = x_col(qq, ss);
            copy(g.xs, g.xg, "xs", cc, a.C, {ss, yv, nn}, [&](Expr ch) {
                return select(qq < a.Q && xx >= 0 && xx < a.W && yv >= 0 && yv < a.H,
                              x(clamp(xx, 0, a.W - 1), clamp(yv, 0, a.H - 1), ch, nc), cast(st, 0));
            });
        }
        // Where k-block kx of split sp starts (column block, row, image): one set of divisions per
        // k-block, which both operands' loads share.
        Expr kidx = kblock_index(kx), krow = kblock_row(kidx);
        g.kinfo = Func("kinfo");
        g.kinfo(kx, sp) = {kidx % qblocks, krow % a.P, krow / a.P};
        // (Its values' ranges, which bounds inference does not see through a Func, promised.)
        Expr klive = rounded ? kidx < total && kx < per_split : kidx < total;
        // (The column block times fs.K here, where the loads' alignment analysis sees it.)
        Expr kq = unsafe_promise_clamped(g.kinfo(kx, sp)[0], 0, qblocks - 1) * fs.K + vec * frag::group_of(fs, l);
        Expr kp = unsafe_promise_clamped(g.kinfo(kx, sp)[1], 0, a.P - 1);
        Expr kn = unsafe_promise_clamped(g.kinfo(kx, sp)[2], 0, a.N - 1);
        g.a_lane = Func("a_lane");
        g.a_lane(e, h, mt, kx, l, sp) =
            select(klive, g.dyt(kq + e, min(fs.M * mt + frag::a_row(fs, l, 0) + 8 * h, a.K - 1), kp, kn), cast(st, 0));
        g.b_lane = Func("b_lane");
        Expr c_lane = min(fs.N * ct + frag::b_col(fs, l, 0), a.C - 1);
        g.b_lane(e, ct, kx, l, s, r, sp) = k1.filter == 1
                                               ? g.xs(kq + e, c_lane, kp, kn)
                                               : g.xs(kq + e, c_lane, s, x_row(kp, r), kn);
        for (int j = 0; j < fs.a_per_lane; j++)
            av.push_back(g.a_lane(frag::a_group_elem(fs, j), frag::a_half(fs, j), mt, g.kb.x, l, sp));
        for (int j = 0; j < fs.b_per_lane; j++)
            bv.push_back(g.b_lane(frag::b_group_elem(fs, j), ct, g.kb.x, l, s, r, sp));
    }
    g.partial = Func("partial");
    g.partial(i, l, mt, ct, s, r, sp) = 0.0f;
    if (stage > 0) {
        // A chunk's sums, then added to partial chunk by chunk (in order).
        g.cp = Func("cp");
        g.cp(i, l, mt, ct, s, r, sp, g.kcv) = 0.0f;
        frag::mma(g.cp, {l, mt, ct, s, r, sp, g.kcv}, fs, t, av, bv);
        g.partial(i, l, mt, ct, s, r, sp) += g.cp(i, l, mt, ct, s, r, sp, g.kc.x);
    } else {
        frag::mma(g.partial, {l, mt, ct, s, r, sp}, fs, t, av, bv);
    }
    g.res = Func("res");
    g.res(i, l, mt, ct, s, r, sp) = g.partial(i, l, mt, ct, s, r, sp);

    Expr mrow = g.k % fs.M, ncol = g.cg % fs.N;
    g.ws = ws;
    g.ws(s, r, g.cg, g.k, sp) =
        g.res(frag::elem_of(fs, mrow, ncol), frag::lane_of(fs, mrow, ncol), g.k / fs.M, g.cg / fs.N, s, r, sp);
    g.rsp = RDom(0, g.splits, "rsp");
    g.dw = Func("dw");
    g.dw(s, r, g.cg, g.k) = 0.0f;
    g.dw(s, r, g.cg, g.k) += g.ws(s, r, g.cg, g.k, g.rsp);
    g.out = out;
    Expr res = a.alpha * g.dw(s, r, g.cg, g.k);
    g.out(s, r, g.cg, g.k) = blend_output(res, prev(s, r, g.cg, g.k), a, t);
    return g;
}

}  // namespace convbwd
