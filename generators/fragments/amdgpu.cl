// Matrix fragments on AMD (generators/fragments.h): prepended to the OpenCL C of every amdgpu
// kernel that calls them. Each function returns element i of the lane's 16 results of one
// 32x32x8 MFMA with a zero accumulator; the 16 calls of a k-block have the same operands, so clang
// merges them into one instruction (checked per code object by test_amdgpu_kernels).
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

static inline float convbwd_mfma32x32x8_f16(half a0, half a1, half a2, half a3, half b0, half b1, half b2,
                                            half b3, int i) {
    float16 d = __builtin_amdgcn_mfma_f32_32x32x8f16((half4)(a0, a1, a2, a3), (half4)(b0, b1, b2, b3),
                                                      (float16)(0.0f), 0, 0, 0);
    return d[i];
}

static inline float convbwd_mfma32x32x8_bf16(ushort a0, ushort a1, ushort a2, ushort a3, ushort b0, ushort b1,
                                             ushort b2, ushort b3, int i) {
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
    return d[i];
}
