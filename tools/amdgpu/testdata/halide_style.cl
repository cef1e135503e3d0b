/*OpenCL C test kernels for the AMDGPU code-object / launcher tests (test/test_amdgpu.cpp).
  Hand-written in the shape of Halide's OpenCL C output (Pipeline::compile_to_module with an
  OpenCL target, buffer "<name>_gpu_source_kernels"): one source holding every kernel, restrict
  global pointers, const scalar arguments, and the shared allocation passed as a trailing
  __local pointer (Halide types it int16* so that it is 64-byte aligned, then casts).
  _kernel_dw_partials additionally declares a static __local array, which Halide does not emit:
  it gives the kernel a non-zero .group_segment_fixed_size so that the placement of dynamic LDS
  after static LDS (aligned to .pointee_align) is exercised.*/
#pragma OPENCL FP_CONTRACT ON
inline float float_from_bits(unsigned int x) {return as_float(x);}
#define halide_maybe_unused(x)

__kernel void _at_least_one_kernel(int x) { }

// Address spaces for _kernel_dx_s0_x_xo_block_id_x
#define __address_space__dx __global
#define __address_space__dy __global
#define __address_space__w __global
// Backward data of a 1-D convolution, one 64-wide output tile per work-group:
// dx[n, x] = alpha * sum_r dy[n, x + pad - r] * w[r] + beta * dx[n, x]
// The dy tile plus halo is staged in the dynamic __local buffer.
__kernel void _kernel_dx_s0_x_xo_block_id_x(
 __address_space__dx float *restrict _dx,
 __address_space__dy const float *restrict _dy,
 __address_space__w const float *restrict _w,
 const int _dx_extent_0,
 const int _dx_stride_1,
 const int _dy_extent_0,
 const int _dy_stride_1,
 const int _R,
 const int _pad,
 const float _alpha,
 const float _beta,
 __local float* __shared)
{
 int _dx_s0_x_xo_block_id_x = get_group_id(0);
 int _dx_s0_n_block_id_y = get_group_id(1);
 int _thread_id_x = get_local_id(0);
 int _0 = _dx_s0_x_xo_block_id_x * 64;
 int _1 = _0 + _pad;
 int _2 = _1 - _R;
 int _3 = _2 + 1;
 int _4 = _dx_s0_n_block_id_y * _dy_stride_1;
 // produce dy_tile (64 + R - 1 values)
 int _5 = 63 + _R;
 for (int _i = _thread_id_x; _i < _5; _i += 64)
 {
  int _6 = _3 + _i;
  bool _7 = (0 <= _6) && (_6 < _dy_extent_0);
  float _8 = _7 ? _dy[_4 + _6] : 0.000000f;
  ((__local float *)__shared)[_i] = _8;
 }
 barrier(0 | CLK_LOCAL_MEM_FENCE);
 // consume dy_tile
 float _acc = float_from_bits(0 /* 0 */);
 for (int _r = 0; _r < _R; _r++)
 {
  int _9 = _thread_id_x + _R;
  int _10 = _9 - 1;
  int _11 = _10 - _r;
  float _12 = ((__local float *)__shared)[_11];
  float _13 = _w[_r];
  _acc = _acc + _12 * _13;
 }
 int _14 = _0 + _thread_id_x;
 if (_14 < _dx_extent_0)
 {
  int _15 = _dx_s0_n_block_id_y * _dx_stride_1;
  int _16 = _15 + _14;
  float _17 = _dx[_16];
  _dx[_16] = _alpha * _acc + _beta * _17;
 }
} // kernel _kernel_dx_s0_x_xo_block_id_x
#undef __address_space__dx
#undef __address_space__dy
#undef __address_space__w

// Address spaces for _kernel_dw_partials_s0_r_ro_block_id_x
#define __address_space__dw_partials __global
#define __address_space__x __global
#define __address_space__dy __global
// Backward weight split reduction: each work-group reduces one chunk of N*X for all R taps and
// writes R partial sums; a tree reduction runs in the dynamic __local buffer.
__kernel void _kernel_dw_partials_s0_r_ro_block_id_x(
 __address_space__dw_partials float *restrict _dw_partials,
 __address_space__x const float *restrict _x,
 __address_space__dy const float *restrict _dy,
 const int _X,
 const int _chunk,
 const int _R,
 const int _pad,
 const float _scale,
 __local int16* __shared)
{
 __local float _tap_sum[33];
 int _split = get_group_id(0);
 int _thread_id_x = get_local_id(0);
 int _lanes = get_local_size(0);
 int _0 = _split * _chunk;
 for (int _r = 0; _r < _R; _r++)
 {
  float _acc = 0.000000f;
  for (int _i = _thread_id_x; _i < _chunk; _i += _lanes)
  {
   int _1 = _0 + _i;
   int _2 = _1 + _r - _pad;
   bool _3 = (0 <= _2) && (_2 < _X);
   float _4 = _3 ? _x[_2] : 0.000000f;
   _acc = _acc + _4 * _dy[_1];
  }
  ((__local float *)__shared)[_thread_id_x] = _acc;
  barrier(0 | CLK_LOCAL_MEM_FENCE);
  for (int _s = _lanes >> 1; _s > 0; _s >>= 1)
  {
   if (_thread_id_x < _s)
   {
    ((__local float *)__shared)[_thread_id_x] += ((__local float *)__shared)[_thread_id_x + _s];
   }
   barrier(0 | CLK_LOCAL_MEM_FENCE);
  }
  if (_thread_id_x == 0)
  {
   _tap_sum[_r & 31] = ((__local float *)__shared)[0] * _scale;
  }
  barrier(0 | CLK_LOCAL_MEM_FENCE);
 }
 if (_thread_id_x < _R)
 {
  _dw_partials[_split * _R + _thread_id_x] = _tap_sum[_thread_id_x & 31];
 }
} // kernel _kernel_dw_partials_s0_r_ro_block_id_x
#undef __address_space__dw_partials
#undef __address_space__x
#undef __address_space__dy

// Address spaces for _kernel_axpby_s0_x
#define __address_space__y __global
#define __address_space__x __global
// Element-wise y = a * x + b * y with global ids (uses the hidden global-offset arguments) and
// no shared memory, hence no __local argument.
__kernel void _kernel_axpby_s0_x(
 __address_space__y float *restrict _y,
 __address_space__x const float *restrict _x,
 const int _n,
 const float _a,
 const float _b)
{
 int _i = get_global_id(0);
 if (_i < _n)
 {
  _y[_i] = _a * _x[_i] + _b * _y[_i];
 }
} // kernel _kernel_axpby_s0_x
#undef __address_space__y
#undef __address_space__x

// Address spaces for _kernel_wide_s0_x_block_id_x
#define __address_space__out __global
// A 1024-work-item block. clang gives OpenCL kernels .max_flat_workgroup_size 256 unless told
// otherwise, and Halide does not annotate its kernels, so kernels scheduled with larger blocks
// need this attribute added to the OpenCL C before compiling (else the launcher refuses them).
__kernel __attribute__((amdgpu_flat_work_group_size(1, 1024))) void _kernel_wide_s0_x_block_id_x(
 __address_space__out float *restrict _out,
 const int _n,
 __local float* __shared)
{
 int _thread_id_x = get_local_id(0);
 int _i = get_group_id(0) * 1024 + _thread_id_x;
 ((__local float *)__shared)[_thread_id_x] = (_i < _n) ? (float)_i : 0.000000f;
 barrier(0 | CLK_LOCAL_MEM_FENCE);
 for (int _s = 512; _s > 0; _s >>= 1)
 {
  if (_thread_id_x < _s)
  {
   ((__local float *)__shared)[_thread_id_x] += ((__local float *)__shared)[_thread_id_x + _s];
  }
  barrier(0 | CLK_LOCAL_MEM_FENCE);
 }
 if (_thread_id_x == 0)
 {
  _out[get_group_id(0)] = ((__local float *)__shared)[0];
 }
} // kernel _kernel_wide_s0_x_block_id_x
#undef __address_space__out

// Address spaces for _kernel_tile16_s0_y_yo_block_id_y
#define __address_space__out __global
// A fixed 16x16 block (.reqd_workgroup_size): the launcher must refuse any other block.
__kernel __attribute__((reqd_work_group_size(16, 16, 1))) void _kernel_tile16_s0_y_yo_block_id_y(
 __address_space__out float *restrict _out,
 const int _stride)
{
 int _x = get_group_id(0) * 16 + get_local_id(0);
 int _y = get_group_id(1) * 16 + get_local_id(1);
 _out[_y * _stride + _x] = (float)(_x + _y);
} // kernel _kernel_tile16_s0_y_yo_block_id_y
#undef __address_space__out
