// Matrix fragments on AMD (generators/fragments.h): prepended to the OpenCL C of every amdgpu
// kernel that calls them. Each function returns element i of the lane's 16 results of one
// 32x32x8 MFMA with a zero accumulator, plus c_i; the 16 calls of a k-block have the same
// operands, so clang merges them into one instruction (checked per code object by ctest mfma-*).
// Accumulating in the instruction (C = c0..c15, as NVIDIA's mma does here) was tried: gfx90a
// VGPRs 124 -> 148 for a 2x2-fragment wave (under 4 waves per SIMD) and the k3 tap loop unrolled;
// with no AMD GPU to measure either form, the add after the MFMA stays.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

// The lane's 16 accumulator elements: parameters, and as a vector.
#define CONVBWD_MFMA_C_PARAMS                                                                                 \
    float c0, float c1, float c2, float c3, float c4, float c5, float c6, float c7, float c8, float c9,       \
        float c10, float c11, float c12, float c13, float c14, float c15,
#define CONVBWD_MFMA_C (float16)(c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15)

static inline float convbwd_mfma32x32x8_f16(half a0, half a1, half a2, half a3, half b0, half b1, half b2,
                                            half b3, CONVBWD_MFMA_C_PARAMS int i) {
    float16 d = __builtin_amdgcn_mfma_f32_32x32x8f16((half4)(a0, a1, a2, a3), (half4)(b0, b1, b2, b3),
                                                      (float16)(0.0f), 0, 0, 0);
    return d[i] + CONVBWD_MFMA_C[i];
}

static inline float convbwd_mfma32x32x8_bf16(ushort a0, ushort a1, ushort a2, ushort a3, ushort b0, ushort b1,
                                             ushort b2, ushort b3, CONVBWD_MFMA_C_PARAMS int i) {
#if defined(__gfx908__)
    // gfx908 has no 32x32x8 bf16 instruction: two 32x32x4 ones. Their lanes hold k = 2h + j, ours
    // k = 4h + j: the same permutation of k for A and B, so the sums agree.
    float16 d = __builtin_amdgcn_mfma_f32_32x32x4bf16((short2)(as_short(a0), as_short(a1)),
                                                      (short2)(as_short(b0), as_short(b1)), (float16)(0.0f), 0, 0, 0);
    d = __builtin_amdgcn_mfma_f32_32x32x4bf16((short2)(as_short(a2), as_short(a3)),
                                              (short2)(as_short(b2), as_short(b3)), d, 0, 0, 0);
#else
    float16 d = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(
        (short4)(as_short(a0), as_short(a1), as_short(a2), as_short(a3)),
        (short4)(as_short(b0), as_short(b1), as_short(b2), as_short(b3)), (float16)(0.0f), 0, 0, 0);
#endif
    return d[i] + CONVBWD_MFMA_C[i];
}
