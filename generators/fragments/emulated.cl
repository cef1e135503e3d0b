// Matrix fragments emulated on any OpenCL device (generators/fragments.h): both lane layouts
// computed through work-group local memory and barriers, so the AMD and NVIDIA mappings and the
// kernels around them run and are verified on PoCL (CI) and any other OpenCL. Prepended at load
// time by runtime/src/opencl_fragments.cpp, which also declares the local scratch
// `convbwd_frag_lds` (512 floats a wave, CONVBWD_FRAG_WAVES waves) at the top of every kernel of
// the source. Needs a work-group of whole waves along dim 0 (lane = local id % the wave's lanes;
// each wave its own 512 floats), every lane of the work-group making every call (the barriers are
// the work-group's). A native prelude in front
// (nvidia.cl) defines CONVBWD_NATIVE_MMA16X8X16 and takes that layout.
// CONVBWD_FRAG_GROUPED (defined in front by the runtime where the source's calls pass its check,
// runtime/src/opencl_fragments.h): each k-block's calls come one after another in element order
// with the same operands, so the call for element 0 alone exchanges the operands (two barriers)
// and the others read what it stored. Without it every call exchanges them (the same results;
// PoCL 3.1 compiled a 16-fragment kernel in 31 s so, against 18 s grouped).
#ifdef CONVBWD_FRAG_GROUPED
#define CONVBWD_FRAG_EXCHANGE(i) if ((i) == 0)
#else
#define CONVBWD_FRAG_EXCHANGE(i)
#endif

static inline float convbwd_frag_bf16(ushort v) { return as_float(((uint)v) << 16); }
// f16 bits (IEEE binary16) to float: normal, subnormal, zero, Inf, NaN.
static inline float convbwd_frag_f16(ushort v) {
    const uint u = v, sign = (u & 0x8000u) << 16, e = (u >> 10) & 0x1fu, m = u & 0x3ffu;
    if (e == 0) {
        const float s = (float)m * 5.9604644775390625e-8f;  // m * 2^-24
        return sign ? -s : s;
    }
    if (e == 31) return as_float(sign | 0x7f800000u | (m << 13));
    return as_float(sign | ((e + 112u) << 23) | (m << 13));
}

// The accumulator element i of the lane's c0..c3 / c0..c15.
static inline float convbwd_frag_pick4(int i, float c0, float c1, float c2, float c3) {
    return i == 0 ? c0 : i == 1 ? c1 : i == 2 ? c2 : c3;
}
static inline float convbwd_frag_pick16(int i, float c0, float c1, float c2, float c3, float c4, float c5, float c6,
                                        float c7, float c8, float c9, float c10, float c11, float c12, float c13,
                                        float c14, float c15) {
    const float c[16] = {c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15};
    return c[i];
}

// Kind 0, 32x32x8 over 64 lanes: element i of lane l's D = A B + C (c: C's element i), h = l / 32.
// (Not static: PoCL 3.1 gave wrong backward-weight results with these two functions static inline.)
float convbwd_frag_emulated_32x32x8(__local float *lds, float a0, float a1, float a2, float a3, float b0, float b1,
                                    float b2, float b3, float c, int i) {
    const int l = get_local_id(0) % 64, h = l / 32, m = l % 32;
    lds += (get_local_id(0) / 64) * 512;  // the wave's own scratch
    CONVBWD_FRAG_EXCHANGE(i) {
        barrier(CLK_LOCAL_MEM_FENCE);  // every lane is done reading the previous call's operands
        lds[m * 8 + 4 * h + 0] = a0;    // A[m][4h + j], row-major 32 x 8
        lds[m * 8 + 4 * h + 1] = a1;
        lds[m * 8 + 4 * h + 2] = a2;
        lds[m * 8 + 4 * h + 3] = a3;
        lds[256 + (4 * h + 0) * 32 + m] = b0;  // B[4h + j][m], row-major 8 x 32
        lds[256 + (4 * h + 1) * 32 + m] = b1;
        lds[256 + (4 * h + 2) * 32 + m] = b2;
        lds[256 + (4 * h + 3) * 32 + m] = b3;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const int row = 8 * (i / 4) + 4 * h + i % 4;
    float d = c;
    for (int k = 0; k < 8; k++) d = fma(lds[row * 8 + k], lds[256 + k * 32 + m], d);
    return d;
}

// Kind 1, 16x8x16 over 32 lanes: element i of lane l's D = A B + C (c: C's element i), g = l / 4,
// t = l % 4.
float convbwd_frag_emulated_16x8x16(__local float *lds, float a0, float a1, float a2, float a3, float a4, float a5,
                                    float a6, float a7, float b0, float b1, float b2, float b3, float c, int i) {
    const int l = get_local_id(0) % 32, g = l / 4, t = l % 4;
    lds += (get_local_id(0) / 32) * 512;  // the wave's own scratch
    const float a[8] = {a0, a1, a2, a3, a4, a5, a6, a7}, b[4] = {b0, b1, b2, b3};
    CONVBWD_FRAG_EXCHANGE(i) {
        barrier(CLK_LOCAL_MEM_FENCE);
        // A 16 x 16, B 16 x 8
        for (int j = 0; j < 8; j++) lds[(g + 8 * ((j / 2) % 2)) * 16 + 2 * t + j % 2 + 8 * (j / 4)] = a[j];
        for (int j = 0; j < 4; j++) lds[256 + (2 * t + j % 2 + 8 * (j / 2)) * 8 + g] = b[j];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const int row = g + 8 * (i / 2), col = 2 * t + i % 2;
    float d = c;
    for (int k = 0; k < 16; k++) d = fma(lds[row * 16 + k], lds[256 + k * 8 + col], d);
    return d;
}

#define convbwd_mfma32x32x8_bf16(a0, a1, a2, a3, b0, b1, b2, b3,                                                \
    c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, i)                                    \
    convbwd_frag_emulated_32x32x8(convbwd_frag_lds, convbwd_frag_bf16(a0), convbwd_frag_bf16(a1),            \
                                  convbwd_frag_bf16(a2), convbwd_frag_bf16(a3), convbwd_frag_bf16(b0),       \
                                  convbwd_frag_bf16(b1), convbwd_frag_bf16(b2), convbwd_frag_bf16(b3),        \
                                  convbwd_frag_pick16((i), c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11,  \
                                                      c12, c13, c14, c15), (i))
#ifndef CONVBWD_NATIVE_MMA16X8X16
#define convbwd_mma16x8x16_bf16(a0, a1, a2, a3, a4, a5, a6, a7, b0, b1, b2, b3, c0, c1, c2, c3, i)              \
    convbwd_frag_emulated_16x8x16(convbwd_frag_lds, convbwd_frag_bf16(a0), convbwd_frag_bf16(a1),            \
                                  convbwd_frag_bf16(a2), convbwd_frag_bf16(a3), convbwd_frag_bf16(a4),       \
                                  convbwd_frag_bf16(a5), convbwd_frag_bf16(a6), convbwd_frag_bf16(a7),       \
                                  convbwd_frag_bf16(b0), convbwd_frag_bf16(b1), convbwd_frag_bf16(b2),       \
                                  convbwd_frag_bf16(b3), convbwd_frag_pick4((i), c0, c1, c2, c3), (i))
#endif
// f16 operands are 16-bit storage on OpenCL (generators/algorithms.h): bits to float by integers.
#define convbwd_mfma32x32x8_f16(a0, a1, a2, a3, b0, b1, b2, b3,                                                 \
    c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, i)                                    \
    convbwd_frag_emulated_32x32x8(convbwd_frag_lds, convbwd_frag_f16(a0), convbwd_frag_f16(a1),              \
                                  convbwd_frag_f16(a2), convbwd_frag_f16(a3), convbwd_frag_f16(b0),          \
                                  convbwd_frag_f16(b1), convbwd_frag_f16(b2), convbwd_frag_f16(b3),           \
                                  convbwd_frag_pick16((i), c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11,  \
                                                      c12, c13, c14, c15), (i))
#ifndef CONVBWD_NATIVE_MMA16X8X16
#define convbwd_mma16x8x16_f16(a0, a1, a2, a3, a4, a5, a6, a7, b0, b1, b2, b3, c0, c1, c2, c3, i)               \
    convbwd_frag_emulated_16x8x16(convbwd_frag_lds, convbwd_frag_f16(a0), convbwd_frag_f16(a1),              \
                                  convbwd_frag_f16(a2), convbwd_frag_f16(a3), convbwd_frag_f16(a4),          \
                                  convbwd_frag_f16(a5), convbwd_frag_f16(a6), convbwd_frag_f16(a7),          \
                                  convbwd_frag_f16(b0), convbwd_frag_f16(b1), convbwd_frag_f16(b2),          \
                                  convbwd_frag_f16(b3), convbwd_frag_pick4((i), c0, c1, c2, c3), (i))
#endif
