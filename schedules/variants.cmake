# THE kernel list: one conv_kernel() line per AOT variant (cmake/ConvbwdKernels.cmake).
# Order is dispatch priority: specialised classes first, the generic (any, any) kernel of each
# direction last. Adding a variant is one line; the test, benchmark row and registry entry follow.

# f32, both layouts: a kernel per (stride class, filter class).
# 22.0 -> 17.5 ms, res2 3x3 batch 8 NHWC dgrad, 2-core AVX2 host, 2026-11-22 (c3x4 vs c2x4, 3 runs
# each, docs/PERFORMANCE.md): three channel vectors x four columns use 12 of the 16 registers.
conv_kernel(DIR bwd_data DTYPE f32 LAYOUT nhwc STRIDE s1 FILTER k3 ON host TAG c3x4 SCHEDULE tile_c=3 tile_x=4)
conv_kernel(DIR bwd_data DTYPE f32 LAYOUT nchw STRIDE s1 FILTER k3 ON host TAG c2x4 SCHEDULE tile_c=2 tile_x=4)
foreach (layout IN ITEMS nhwc nchw)
    conv_kernel(DIR bwd_data DTYPE f32 LAYOUT ${layout} STRIDE s1 FILTER k1 ON host TAG c2x4 SCHEDULE tile_c=2 tile_x=4)
    conv_kernel(DIR bwd_data DTYPE f32 LAYOUT ${layout} STRIDE s2 FILTER k1 ON host TAG c2x3 SCHEDULE tile_c=2 tile_x=3)
    conv_kernel(DIR bwd_data DTYPE f32 LAYOUT ${layout} STRIDE s2 FILTER k3 ON host TAG c2x3 SCHEDULE tile_c=2 tile_x=3)
    conv_kernel(DIR bwd_data DTYPE f32 LAYOUT ${layout} STRIDE s1 FILTER any ON host TAG c2x4 SCHEDULE tile_c=2 tile_x=4)
    conv_kernel(DIR bwd_data DTYPE f32 LAYOUT ${layout} STRIDE s2 FILTER any ON host TAG c2x3 SCHEDULE tile_c=2 tile_x=3)
    conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT ${layout} STRIDE s1 FILTER k1 ON host TAG c2k4 SCHEDULE tile_c=2 tile_k=4)
    conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT ${layout} STRIDE s1 FILTER k3 ON host TAG c2k4 SCHEDULE tile_c=2 tile_k=4)
    conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT ${layout} STRIDE s2 FILTER k1 ON host TAG c2k4 SCHEDULE tile_c=2 tile_k=4)
    conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT ${layout} STRIDE s2 FILTER k3 ON host TAG c2k4 SCHEDULE tile_c=2 tile_k=4)
endforeach ()

# f16 and bf16 (f32 accumulation), both layouts: the common 3x3 stride-1 class; NHWC also the
# strided classes of the IREE shapes (1x1 and 3x3, stride 2).
foreach (dtype IN ITEMS f16 bf16)
    foreach (layout IN ITEMS nhwc nchw)
        conv_kernel(DIR bwd_data DTYPE ${dtype} LAYOUT ${layout} STRIDE s1 FILTER k3 ON host TAG c2x4 SCHEDULE tile_c=2 tile_x=4)
        conv_kernel(DIR bwd_weight DTYPE ${dtype} LAYOUT ${layout} STRIDE s1 FILTER k3 ON host TAG c2k4 SCHEDULE tile_c=2 tile_k=4)
    endforeach ()
    conv_kernel(DIR bwd_data DTYPE ${dtype} LAYOUT nhwc STRIDE s2 FILTER k1 ON host TAG c2x3 SCHEDULE tile_c=2 tile_x=3)
    conv_kernel(DIR bwd_data DTYPE ${dtype} LAYOUT nhwc STRIDE s2 FILTER k3 ON host TAG c2x3 SCHEDULE tile_c=2 tile_x=3)
endforeach ()

# Comparison baseline, never dispatched: scatter-then-conv backward-data (driver --compare scatter).
foreach (dtype IN ITEMS f32 f16 bf16)
    conv_kernel(DIR bwd_data DTYPE ${dtype} LAYOUT nhwc STRIDE any FILTER any ON host TAG scatter
                GENERATOR conv_bwd_data_scatter_host BASELINE SCHEDULE tile_c=2 tile_x=4)
endforeach ()
conv_kernel(DIR bwd_data DTYPE f32 LAYOUT nchw STRIDE any FILTER any ON host TAG scatter
            GENERATOR conv_bwd_data_scatter_host BASELINE SCHEDULE tile_c=2 tile_x=4)

# Comparison baseline, never dispatched: backward-weight without the reduction split
# (max_splits=1), for split-vs-unsplit rows (driver --kernel).
conv_kernel(DIR bwd_weight DTYPE bf16 LAYOUT nchw STRIDE any FILTER any ON host TAG c1k4n1 BASELINE
            SCHEDULE tile_c=1 tile_k=4 max_splits=1)

# Generic fallbacks: every dtype and layout, every valid problem. Keep last.
foreach (dtype IN ITEMS f32 f16 bf16)
    foreach (layout IN ITEMS nhwc nchw)
        conv_kernel(DIR bwd_data DTYPE ${dtype} LAYOUT ${layout} STRIDE any FILTER any ON host TAG c1x4 SCHEDULE tile_c=1 tile_x=4)
        conv_kernel(DIR bwd_weight DTYPE ${dtype} LAYOUT ${layout} STRIDE any FILTER any ON host TAG c1k4 SCHEDULE tile_c=1 tile_k=4)
    endforeach ()
endforeach ()

# GPU kernels (CUDA, OpenCL; CONVBWD_TARGETS picks which are built). Thread tiles are
# tile_c x tile_x registers; blocks are threads_c x threads_x = 128 threads (two AMD wavefronts).
foreach (layout IN ITEMS nhwc nchw)
    foreach (sf IN ITEMS "s1;k1" "s1;k3" "s2;k1" "s2;k3")
        list(GET sf 0 s)
        list(GET sf 1 f)
        conv_kernel(DIR bwd_data DTYPE f32 LAYOUT ${layout} STRIDE ${s} FILTER ${f} ON gpu TAG c4x4
                    SCHEDULE tile_c=4 tile_x=4 threads_c=16 threads_x=8)
        conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT ${layout} STRIDE ${s} FILTER ${f} ON gpu TAG c4k4
                    SCHEDULE tile_c=4 tile_k=4 threads_c=16 threads_k=8 max_splits=512)
    endforeach ()
endforeach ()
# f16 and bf16 NHWC strided backward-data (the IREE shapes); f16 skips OpenCL (PoCL has no fp16).
foreach (dtype IN ITEMS f16 bf16)
    set(skip none)
    if (dtype STREQUAL "f16")
        set(skip opencl)
    endif ()
    foreach (f IN ITEMS k1 k3)
        conv_kernel(DIR bwd_data DTYPE ${dtype} LAYOUT nhwc STRIDE s2 FILTER ${f} ON gpu TAG c4x4 SKIP_ON ${skip}
                    SCHEDULE tile_c=4 tile_x=4 threads_c=16 threads_x=8)
    endforeach ()
endforeach ()

# Baselines, never dispatched: scatter-then-conv (driver --compare scatter) and unsplit wgrad.
foreach (dtype IN ITEMS f32 f16 bf16)
    set(skip none)
    if (dtype STREQUAL "f16")
        set(skip opencl)
    endif ()
    conv_kernel(DIR bwd_data DTYPE ${dtype} LAYOUT nhwc STRIDE any FILTER any ON gpu TAG scatter BASELINE SKIP_ON ${skip}
                GENERATOR conv_bwd_data_scatter_gpu SCHEDULE tile_c=2 tile_x=2 threads_c=16 threads_x=8)
endforeach ()
conv_kernel(DIR bwd_weight DTYPE bf16 LAYOUT nchw STRIDE any FILTER any ON gpu TAG c2k2n1 BASELINE
            SCHEDULE tile_c=2 tile_k=2 threads_c=16 threads_k=8 max_splits=1)

foreach (dtype IN ITEMS f32 f16 bf16)
    set(skip none)
    if (dtype STREQUAL "f16")
        set(skip opencl)
    endif ()
    foreach (layout IN ITEMS nhwc nchw)
        # PoCL (the CI's OpenCL) has no cl_khr_fp16: f16 runs on CUDA only for now.
        conv_kernel(DIR bwd_data DTYPE ${dtype} LAYOUT ${layout} STRIDE any FILTER any ON gpu TAG c2x2
                    SKIP_ON ${skip} SCHEDULE tile_c=2 tile_x=2 threads_c=16 threads_x=8)
        conv_kernel(DIR bwd_weight DTYPE ${dtype} LAYOUT ${layout} STRIDE any FILTER any ON gpu TAG c2k2
                    SKIP_ON ${skip} SCHEDULE tile_c=2 tile_k=2 threads_c=16 threads_k=8 max_splits=512)
    endforeach ()
endforeach ()

# Tuning candidates on GPUs (never dispatched until promoted into the lines above; forced by
# name in scripts/gpu_run.sh's sweep): larger register tiles for the common NHWC classes. Not for
# AMD: 32+ accumulators per thread fall under 4 waves/SIMD on gfx90a (test amdgpu says so).
foreach (sf IN ITEMS "s1;k1" "s1;k3" "s2;k3")
    list(GET sf 0 s)
    list(GET sf 1 f)
    conv_kernel(DIR bwd_data DTYPE f32 LAYOUT nhwc STRIDE ${s} FILTER ${f} ON gpu TAG c8x4 BASELINE SKIP_ON opencl amdgpu
                SCHEDULE tile_c=8 tile_x=4 threads_c=8 threads_x=16)
    conv_kernel(DIR bwd_data DTYPE f32 LAYOUT nhwc STRIDE ${s} FILTER ${f} ON gpu TAG c4x8 BASELINE SKIP_ON opencl amdgpu
                SCHEDULE tile_c=4 tile_x=8 threads_c=16 threads_x=8)
    conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT nhwc STRIDE ${s} FILTER ${f} ON gpu TAG c8k8 BASELINE SKIP_ON opencl amdgpu
                SCHEDULE tile_c=8 tile_k=8 threads_c=8 threads_k=8 max_splits=512)
    conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT nhwc STRIDE ${s} FILTER ${f} ON gpu TAG c4k8 BASELINE SKIP_ON opencl amdgpu
                SCHEDULE tile_c=4 tile_k=8 threads_c=16 threads_k=8 max_splits=512)
endforeach ()
