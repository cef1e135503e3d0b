/*AccVGPR probe for test/test_amdgpu.cpp: a kernel that keeps a 32x32 MFMA accumulator live, so
  that the compiler allocates AGPRs. Checks how .vgpr_count and .agpr_count relate (on gfx90a the
  metadata .vgpr_count is the unified ArchVGPR+AccVGPR total) and that the occupancy estimate
  stays sane. Needs a processor with MFMA (gfx908, gfx90a, gfx940).*/
typedef float float32 __attribute__((ext_vector_type(32)));

__kernel void _kernel_mfma_probe(__global float32 *restrict _out, __global const float *restrict _a, const int _n)
{
 float32 _acc = 0.000000f;
 for (int _i = 0; _i < _n; _i++)
 {
  _acc = __builtin_amdgcn_mfma_f32_32x32x1f32(_a[_i], _a[_i + 1], _acc, 0, 0, 0);
  _acc = __builtin_amdgcn_mfma_f32_32x32x1f32(_a[_i + 2], _a[_i + 3], _acc, 0, 0, 0);
 }
 _out[get_group_id(0) * get_local_size(0) + get_local_id(0)] = _acc;
}
