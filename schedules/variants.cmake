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
# NCHW stages its inputs with channels innermost (stage=1): H100, ResNet-50 batch 32, geomean
# cuDNN/convbwd 0.20 -> 0.49 (1x1), 0.08 -> 0.19 (3x3) for backward-data; 0.31 -> 0.55 (1x1)
# for backward-weight with the taps in one launch (docs/PERFORMANCE.md, sweep of 10:37 UTC).
# A GPU kernel's input staging per layout: NCHW copies its inputs channels-innermost first
# (stage=1, tag suffix "s"), NHWC reads them in place. (Since 2026-11-23 NCHW backward-data reads
# in place where that won on CUDA: 1x1 stride 2 and the stem; see the loop below.)
macro(gpu_stage_of layout)
    set(stage 0)
    set(tag "")
    if ("${layout}" STREQUAL "nchw")
        set(stage 1)
        set(tag s)
    endif ()
endmacro()

# Sweep of 12:56 UTC (H100, ResNet-50 batch 32, geomean cuDNN/convbwd per class,
# docs/results/h100-2026-11-22-1256-sweep.json): the 3x3 backward-data taps unrolled inside the
# k loop (unroll_taps=1, tag u) NHWC s1 0.57 -> 0.66, NCHW s1 0.22 -> 0.29, s2 0.56 -> 0.58 /
# 0.33 -> 0.36; 3 taps per thread in backward-weight (tile_s=3, tag t3) NHWC s2 0.25 -> 0.27,
# NCHW s1 0.15 -> 0.17; the 7x7 stem's backward-weight 18.5 -> 3.1 ms (s2 any kernel below).
# A backward-weight class's tap configuration as tuned at 64 registers: AMD's defaults, and on
# CUDA the base of the candidates. f = the taps looped inside each thread, one launch (NHWC 3x3
# stride 1: 0.26 -> 0.29); t3 = 3 taps per thread too (NHWC stride 2, NCHW stride 1); else one
# launch per tap. Sets fuse, ts and ftag (from gpu_stage_of's tag).
macro(gpu_wgrad_taps layout s f)
    set(fuse 0)
    set(ts 1)
    set(ftag ${tag})
    if ("${f}" STREQUAL "k3" AND "${layout}" STREQUAL "nhwc" AND "${s}" STREQUAL "s1")
        set(fuse 1)
        set(ftag f)
    elseif ("${f}" STREQUAL "k3" AND NOT ("${layout}" STREQUAL "nchw" AND "${s}" STREQUAL "s2"))
        set(fuse 1)
        set(ts 3)
        set(ftag f${tag}t3)
    endif ()
endmacro()

foreach (layout IN ITEMS nhwc nchw)
    gpu_stage_of(${layout})
    foreach (sf IN ITEMS "s1;k1" "s1;k3" "s2;k1" "s2;k3")
        list(GET sf 0 s)
        list(GET sf 1 f)
        # Backward-data: CUDA and OpenCL take (ctag, csched), AMD (atag, asched); where CUDA's
        # default changed, the previous one stays a named candidate there (btag, bsched).
        set(base threads_c=16 threads_x=8)
        set(atag c4x4${tag})
        set(asched tile_c=4 tile_x=4 ${base} stage=${stage})
        set(ctag ${atag})
        set(csched ${asched})
        set(btag "")
        if (sf STREQUAL "s1;k1")
            # Pointwise stride 1: the plane as one row of H*W columns (flat=1, read by the
            # runtime; the same code, so AMD too): NHWC 1.29 -> 1.53, NCHW 0.50 -> 0.59 (sweeps
            # of 15:43 and 07:54 UTC).
            set(atag c4x4${tag}f)
            list(APPEND asched flat=1)
            set(ctag ${atag})
            set(csched ${asched})
            if (layout STREQUAL "nchw")
                # NCHW on CUDA and OpenCL read in place since dy's loads lost their range test
                # and clamp (generators/algorithms.cpp): 0.60 (staged, kept as a named
                # candidate) -> 0.77 over the class's 12 ResNet-50 layers (sweep of 12:45 UTC,
                # 2026-11-23). AMD keeps the staged kernel (not measured there).
                set(btag ${ctag})
                set(bsched ${csched})
                set(ctag c4x4f)
                set(csched tile_c=4 tile_x=4 ${base} flat=1)
            endif ()
        elseif (f STREQUAL "k3" AND NOT (layout STREQUAL "nhwc" AND s STREQUAL "s2"))
            # CUDA unrolls the 3x3 taps along x inside the k loop (u: sweep of 12:56 UTC; NHWC
            # stride 2 keeps them rolled, 0.61 against 0.55 at 128 registers, 14:13). AMD keeps
            # them rolled: unrolled, NHWC stride 1 needs 140-143 VGPRs on gfx90a (3 waves per
            # SIMD, test amdgpu).
            set(ctag c4x4${tag}u)
            set(csched tile_c=4 tile_x=4 ${base} stage=${stage} unroll_taps=1)
            if (s STREQUAL "s1")
                # 7 columns per thread (every ResNet-50 row, 56, 28, 14 and 7 wide, is a whole
                # number of such tiles): NHWC 0.63 -> 0.87, NCHW (staged) 0.27 -> 0.32; the NCHW
                # 7x7 layer 0.23 -> 0.24 (sweep of 07:54 UTC, 2026-11-23).
                set(btag ${ctag})
                set(bsched ${csched})
                set(ctag c4x7${tag}u)
                set(csched tile_c=4 tile_x=7 ${base} stage=${stage} unroll_taps=1)
            elseif (layout STREQUAL "nchw")
                # Staged, this class's phase kernel needs 130 VGPRs on gfx90a (3 waves per
                # SIMD, test amdgpu): AMD reads it in place.
                set(atag c4x4)
                set(asched tile_c=4 tile_x=4 ${base})
            endif ()
        elseif (layout STREQUAL "nchw" AND sf STREQUAL "s2;k1")
            # NCHW 1x1 stride 2 on CUDA read in place (threads along the columns, no
            # channels-innermost copy), 8 channels x 7 columns per thread: 0.25 -> 0.29 (sweep of
            # 07:54 UTC). AMD keeps 4x4: 56 accumulators put 64-wide wavefronts under 4 per SIMD.
            set(btag ${ctag})
            set(bsched ${csched})
            set(ctag c8x7)
            set(csched tile_c=8 tile_x=7 ${base})
        endif ()
        if (layout STREQUAL "nchw" AND sf STREQUAL "s1;k3")
            # CUDA: w's channels as 16-byte vectors (vec=4, where C % 4 == 0; the kernel below
            # takes the rest): the 28-, 14- and 7-wide layers 0.32 / 0.31 / 0.24 -> 0.35 / 0.39 /
            # 0.37, the 56-wide 0.60 -> 0.45 (sweep of 10:35 UTC, 2026-11-23; in the runs since,
            # 0.41-0.42 ms on the 56-, 28- and 14-wide layers, no tuned row). OpenCL C has no
            # 28-wide register vector: CUDA only.
            conv_kernel(DIR bwd_data DTYPE f32 LAYOUT ${layout} STRIDE ${s} FILTER ${f} ON gpu TAG c4x7suv
                        SKIP_ON opencl amdgpu SCHEDULE tile_c=4 tile_x=7 ${base} stage=1 unroll_taps=1 vec=4)
        endif ()
        if (ctag STREQUAL atag AND csched STREQUAL asched)
            conv_kernel(DIR bwd_data DTYPE f32 LAYOUT ${layout} STRIDE ${s} FILTER ${f} ON gpu TAG ${ctag}
                        SCHEDULE ${csched})
        else ()
            conv_kernel(DIR bwd_data DTYPE f32 LAYOUT ${layout} STRIDE ${s} FILTER ${f} ON gpu TAG ${ctag}
                        SKIP_ON amdgpu SCHEDULE ${csched})
            conv_kernel(DIR bwd_data DTYPE f32 LAYOUT ${layout} STRIDE ${s} FILTER ${f} ON gpu TAG ${atag}
                        SKIP_ON cuda opencl SCHEDULE ${asched})
        endif ()
        if (btag)
            conv_kernel(DIR bwd_data DTYPE f32 LAYOUT ${layout} STRIDE ${s} FILTER ${f} ON gpu TAG ${btag}
                        BASELINE SKIP_ON opencl amdgpu SCHEDULE ${bsched})
        endif ()
        gpu_wgrad_taps(${layout} ${s} ${f})
        # CUDA: x's and dy's channels as 16-byte vectors loaded into registers (vec=4; the
        # candidates' block at the end of this file says more), where C and K are multiples of 4
        # and groups 1; the default after it takes the rest. Sweep of 14:33 UTC, 2026-11-23,
        # against the defaults: NCHW 3x3 stride 1 0.27 -> 0.31 (its 7x7 layer 0.905 -> 0.755 ms),
        # stride 2 0.39 -> 0.44, 1x1 0.77 -> 0.81 / 0.56 -> 0.64; NHWC 3x3 stride 1 0.50 -> 0.57
        # (NHWC 1x1 lost: default unchanged there). After the workspace's layout change, sweep of
        # 14:52 UTC: NCHW 3x3 stride 1 0.47 -> 0.64 (7x7 layer 0.651 -> 0.445 ms), stride 2 0.55
        # -> 0.65, 1x1 0.78 -> 0.85 / 0.61 -> 0.66; NHWC 3x3 stride 1 0.72 -> 0.79, stride 2 0.55
        # -> 0.60 (its three layers 10-13% faster; a tie at 14:33, before the layout change).
        set(vtag "")
        set(vbase "tile_c=4 tile_k=4 threads_c=16 threads_k=8 max_splits=512 stage=1 vec=4")
        if (sf STREQUAL "s1;k3" AND layout STREQUAL "nchw")
            set(vtag c4k4fst3u7v)
            set(vsched "${vbase} fuse_taps=1 tile_s=3 unroll_q=7")
        elseif (f STREQUAL "k3")
            set(vtag c4k4fst3u2v)
            set(vsched "${vbase} fuse_taps=1 tile_s=3 unroll_q=2")
        elseif (f STREQUAL "k1" AND layout STREQUAL "nchw")
            set(vtag c4k4svb4)
            set(vsched "${vbase} split_blocks=2112")
        endif ()
        if (vtag)
            separate_arguments(vsched)
            conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT ${layout} STRIDE ${s} FILTER ${f} ON gpu TAG ${vtag}
                        SKIP_ON opencl amdgpu SCHEDULE ${vsched})
        endif ()
        # 1x1: 2112 blocks per launch (split_blocks; more reduction splits), 0.59 -> 0.77 (NHWC
        # stride 1), 0.48 -> 0.56 (NHWC stride 2) in the sweep of 13:27 UTC; 3x3 lost with it.
        set(blocks 528)
        if (f STREQUAL "k1")
            set(blocks 2112)
            set(ftag ${ftag}b4)
        endif ()
        if (f STREQUAL "k3")
            # CUDA and OpenCL: 3 taps x 2 columns per iteration (t3u2), every 3x3 class: at 128
            # registers (no spills) NHWC 0.38 -> 0.49 (stride 1), 0.33 -> 0.42 (stride 2), NCHW
            # 0.22 -> 0.26, 0.28 -> 0.39 (sweep of 14:13 UTC). AMD keeps the configuration
            # above (its VGPR budget); on CUDA that stays a named candidate.
            set(uq 2)
            if (layout STREQUAL "nchw" AND s STREQUAL "s1")
                # NCHW stride 1: 7 columns per iteration (a whole 7-wide row, or an eighth,
                # quarter or half of the wider ones; unroll_q=7). Its worst layer, 512 channels
                # at 7x7: 0.186 -> 0.202 (sweep of 07:54 UTC), 0.154 -> 0.185 (full runs of 08:13
                # and 08:01); the class 0.295 -> 0.304. NHWC lost with it (0.52 -> 0.43).
                set(uq 7)
                conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT ${layout} STRIDE ${s} FILTER ${f} ON gpu
                            TAG c4k4f${tag}t3u2 BASELINE SKIP_ON opencl amdgpu SCHEDULE tile_c=4 tile_k=4
                            threads_c=16 threads_k=8 max_splits=512 stage=${stage} fuse_taps=1 tile_s=3 unroll_q=2)
            endif ()
            conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT ${layout} STRIDE ${s} FILTER ${f} ON gpu TAG c4k4f${tag}t3u${uq}
                        SKIP_ON amdgpu SCHEDULE tile_c=4 tile_k=4 threads_c=16 threads_k=8 max_splits=512
                        stage=${stage} fuse_taps=1 tile_s=3 unroll_q=${uq})
            conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT ${layout} STRIDE ${s} FILTER ${f} ON gpu TAG c4k4${ftag}
                        SKIP_ON cuda opencl SCHEDULE tile_c=4 tile_k=4 threads_c=16 threads_k=8 max_splits=512
                        stage=${stage} fuse_taps=${fuse} tile_s=${ts})
            conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT ${layout} STRIDE ${s} FILTER ${f} ON gpu TAG c4k4${ftag}
                        BASELINE SKIP_ON opencl amdgpu SCHEDULE tile_c=4 tile_k=4 threads_c=16 threads_k=8
                        max_splits=512 stage=${stage} fuse_taps=${fuse} tile_s=${ts})
        else ()
            conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT ${layout} STRIDE ${s} FILTER ${f} ON gpu TAG c4k4${ftag}
                        SCHEDULE tile_c=4 tile_k=4 threads_c=16 threads_k=8 max_splits=512 split_blocks=${blocks}
                        stage=${stage} fuse_taps=${fuse} tile_s=${ts})
        endif ()
    endforeach ()
    # Stride 2 with any filter (a first layer's 7x7): the stride is a compile-time constant, so
    # each phase's launch runs only its own taps; the filter size stays a runtime value.
    # (CUDA and OpenCL read NCHW's stem in place: 0.09 -> 0.22 against the staged kernel, whose
    # channels-innermost copy of 3-channel dy is most of its time; sweep of 15:43 UTC.)
    if (layout STREQUAL "nhwc")
        conv_kernel(DIR bwd_data DTYPE f32 LAYOUT ${layout} STRIDE s2 FILTER any ON gpu TAG c4x4
                    SCHEDULE tile_c=4 tile_x=4 threads_c=16 threads_x=8)
    else ()
        conv_kernel(DIR bwd_data DTYPE f32 LAYOUT ${layout} STRIDE s2 FILTER any ON gpu TAG c4x4
                    SKIP_ON amdgpu SCHEDULE tile_c=4 tile_x=4 threads_c=16 threads_x=8)
        conv_kernel(DIR bwd_data DTYPE f32 LAYOUT ${layout} STRIDE s2 FILTER any ON gpu TAG c4x4${tag}
                    SKIP_ON cuda opencl SCHEDULE tile_c=4 tile_x=4 threads_c=16 threads_x=8 stage=${stage})
        conv_kernel(DIR bwd_data DTYPE f32 LAYOUT ${layout} STRIDE s2 FILTER any ON gpu TAG c4x4${tag} BASELINE
                    SKIP_ON opencl amdgpu SCHEDULE tile_c=4 tile_x=4 threads_c=16 threads_x=8 stage=${stage})
    endif ()
    # Backward-weight, stride 2, any filter (the 7x7 RGB stem, 18.5 -> 3.1 ms): taps in one
    # launch, and a first layer's 3 channels x 4 k x 7 taps per thread. AMD takes 2 k per thread:
    # 84 accumulators need 254-281 VGPRs on gfx90a (test amdgpu).
    conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT ${layout} STRIDE s2 FILTER any ON gpu TAG c4k4ft7${tag} SKIP_ON amdgpu
                SCHEDULE tile_c=4 tile_k=4 threads_c=8 threads_k=16 max_splits=512 fuse_taps=1 tile_s=7 stage=${stage})
    # (Unstaged, AMD's NHWC kernel spills 6-17 SGPRs: staged in both layouts.)
    conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT ${layout} STRIDE s2 FILTER any ON gpu TAG c4k2ft7s SKIP_ON cuda opencl
                SCHEDULE tile_c=4 tile_k=2 threads_c=4 threads_k=32 max_splits=512 fuse_taps=1 tile_s=7 stage=1)
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
# Not for AMD: comparison kernels, and none can run here.
foreach (dtype IN ITEMS f32 f16 bf16)
    set(skip amdgpu)
    if (dtype STREQUAL "f16")
        set(skip opencl amdgpu)
    endif ()
    conv_kernel(DIR bwd_data DTYPE ${dtype} LAYOUT nhwc STRIDE any FILTER any ON gpu TAG scatter BASELINE SKIP_ON ${skip}
                GENERATOR conv_bwd_data_scatter_gpu SCHEDULE tile_c=2 tile_x=2 threads_c=16 threads_x=8)
endforeach ()
conv_kernel(DIR bwd_weight DTYPE bf16 LAYOUT nchw STRIDE any FILTER any ON gpu TAG c2k2sn1 BASELINE
            SCHEDULE tile_c=2 tile_k=2 threads_c=16 threads_k=8 max_splits=1 stage=1)

foreach (dtype IN ITEMS f32 f16 bf16)
    set(skip none)
    if (dtype STREQUAL "f16")
        set(skip opencl)
    endif ()
    foreach (layout IN ITEMS nhwc nchw)
        # NCHW stages its inputs channels-innermost (H100 ResNet-50 f32 backward-weight geomean
        # 0.12 -> 0.24 against cuDNN).
        gpu_stage_of(${layout})
        # PoCL (the CI's OpenCL) has no cl_khr_fp16: f16 runs on CUDA only for now.
        conv_kernel(DIR bwd_data DTYPE ${dtype} LAYOUT ${layout} STRIDE any FILTER any ON gpu TAG c2x2${tag}
                    SKIP_ON ${skip} SCHEDULE tile_c=2 tile_x=2 threads_c=16 threads_x=8 stage=${stage})
        conv_kernel(DIR bwd_weight DTYPE ${dtype} LAYOUT ${layout} STRIDE any FILTER any ON gpu TAG c2k2${tag}
                    SKIP_ON ${skip} SCHEDULE tile_c=2 tile_k=2 threads_c=16 threads_k=8 max_splits=512 stage=${stage})
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

# Backward-weight candidates on GPUs (forced by name in scripts/gpu_run.sh's sweep): each thread
# looping over the taps (f: one launch instead of one per tap), x staged with channels innermost
# and its padding materialised (s), the column loop unrolled by 2 (u2).
foreach (sf IN ITEMS "s1;k1" "s1;k3" "s2;k3")
    list(GET sf 0 s)
    list(GET sf 1 f)
    if (NOT sf STREQUAL "s1;k3")  # the default there
        conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT nhwc STRIDE ${s} FILTER ${f} ON gpu TAG c4k4f BASELINE SKIP_ON amdgpu
                    SCHEDULE tile_c=4 tile_k=4 threads_c=16 threads_k=8 max_splits=512 fuse_taps=1)
    endif ()
    foreach (layout IN ITEMS nhwc nchw)
        conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT ${layout} STRIDE ${s} FILTER ${f} ON gpu TAG c4k4fs BASELINE SKIP_ON amdgpu
                    SCHEDULE tile_c=4 tile_k=4 threads_c=16 threads_k=8 max_splits=512 fuse_taps=1 stage=1)
    endforeach ()
endforeach ()
conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT nhwc STRIDE s1 FILTER k3 ON gpu TAG c4k4fsu2 BASELINE SKIP_ON amdgpu
            SCHEDULE tile_c=4 tile_k=4 threads_c=16 threads_k=8 max_splits=512 fuse_taps=1 stage=1 unroll_q=2)
# 3 taps per thread without the column unroll (t3) where the defaults did not have it; the stem
# kernel staged (s, 0.280 vs 0.288) and with 2 k per thread (k2: half the registers, more
# threads).
foreach (layout IN ITEMS nhwc nchw)
    gpu_stage_of(${layout})
    foreach (s IN ITEMS s1 s2)
        if (NOT ((layout STREQUAL "nhwc" AND s STREQUAL "s2") OR (layout STREQUAL "nchw" AND s STREQUAL "s1")))
            conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT ${layout} STRIDE ${s} FILTER k3 ON gpu TAG c4k4f${tag}t3 BASELINE
                        SKIP_ON amdgpu SCHEDULE tile_c=4 tile_k=4 threads_c=16 threads_k=8 max_splits=512 fuse_taps=1
                        stage=${stage} tile_s=3)
        endif ()
    endforeach ()
    conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT ${layout} STRIDE s2 FILTER any ON gpu TAG c4k2ft7${tag} BASELINE
                SKIP_ON amdgpu SCHEDULE tile_c=4 tile_k=2 threads_c=4 threads_k=32 max_splits=512 fuse_taps=1 tile_s=7
                stage=${stage})
endforeach ()
conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT nhwc STRIDE s2 FILTER any ON gpu TAG c4k4ft7s BASELINE SKIP_ON amdgpu
            SCHEDULE tile_c=4 tile_k=4 threads_c=8 threads_k=16 max_splits=512 fuse_taps=1 tile_s=7 stage=1)
# The default backward-weight kernels with other blocks per launch (reduction splits): b1 = 528,
# b2 = 1056, b4 = 2112 (split_blocks, read by the dispatcher; the kernel code is the default's).
foreach (layout IN ITEMS nhwc nchw)
    gpu_stage_of(${layout})
    foreach (sf IN ITEMS "s1;k1" "s1;k3" "s2;k1" "s2;k3")
        list(GET sf 0 s)
        list(GET sf 1 f)
        gpu_wgrad_taps(${layout} ${s} ${f})
        set(bs 2 4)
        if (f STREQUAL "k1")  # b4 is the default there; b1 = 528
            set(bs 1 2)
        endif ()
        foreach (b IN ITEMS ${bs})
            math(EXPR blocks "528 * ${b}")
            conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT ${layout} STRIDE ${s} FILTER ${f} ON gpu TAG c4k4${ftag}b${b}
                        BASELINE SKIP_ON opencl amdgpu SCHEDULE tile_c=4 tile_k=4 threads_c=16 threads_k=8 max_splits=512
                        split_blocks=${blocks} stage=${stage} fuse_taps=${fuse} tile_s=${ts})
        endforeach ()
    endforeach ()
    # The stem with 4 taps per thread (t4: 48 accumulators, two tap tiles over 7 taps, one
    # recomputed), and 2 k x 4 taps.
    conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT ${layout} STRIDE s2 FILTER any ON gpu TAG c4k4ft4${tag} BASELINE
                SKIP_ON opencl amdgpu SCHEDULE tile_c=4 tile_k=4 threads_c=8 threads_k=16 max_splits=512 fuse_taps=1
                tile_s=4 stage=${stage})
    conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT ${layout} STRIDE s2 FILTER any ON gpu TAG c4k2ft4${tag} BASELINE
                SKIP_ON opencl amdgpu SCHEDULE tile_c=4 tile_k=2 threads_c=4 threads_k=32 max_splits=512 fuse_taps=1
                tile_s=4 stage=${stage})
    conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT ${layout} STRIDE s2 FILTER any ON gpu TAG c4k4ft7${tag}b2 BASELINE
                SKIP_ON opencl amdgpu SCHEDULE tile_c=4 tile_k=4 threads_c=8 threads_k=16 max_splits=512 split_blocks=1056
                fuse_taps=1 tile_s=7 stage=${stage})
endforeach ()
# Backward-data candidates: the 3x3 taps not unrolled (r: unroll_taps=0, the default before the
# 12:56 sweep; NHWC stride 2, whose default rolls them, gets u instead), the stem kernel with 3 channels x 4 columns per thread (l1: first_layer=1, 2.3x
# slower on the stem: a warp's dy loads scatter over 28 columns), and without the narrow-row
# shapes (n0: narrow=0, 8 column threads whatever the row width; NHWC 3x3 0.43 vs 0.57).
foreach (layout IN ITEMS nhwc nchw)
    gpu_stage_of(${layout})
    foreach (s IN ITEMS s1 s2)
        if (layout STREQUAL "nhwc" AND s STREQUAL "s2")  # the default rolls them there
            conv_kernel(DIR bwd_data DTYPE f32 LAYOUT ${layout} STRIDE ${s} FILTER k3 ON gpu TAG c4x4${tag}u BASELINE
                        SKIP_ON opencl amdgpu SCHEDULE tile_c=4 tile_x=4 threads_c=16 threads_x=8 stage=${stage}
                        unroll_taps=1)
        else ()
            conv_kernel(DIR bwd_data DTYPE f32 LAYOUT ${layout} STRIDE ${s} FILTER k3 ON gpu TAG c4x4${tag}r BASELINE
                        SKIP_ON opencl amdgpu SCHEDULE tile_c=4 tile_x=4 threads_c=16 threads_x=8 stage=${stage})
        endif ()
    endforeach ()
    conv_kernel(DIR bwd_data DTYPE f32 LAYOUT ${layout} STRIDE s2 FILTER any ON gpu TAG c4x4${tag}l1 BASELINE
                SKIP_ON opencl amdgpu SCHEDULE tile_c=4 tile_x=4 threads_c=16 threads_x=8 stage=${stage} first_layer=1)
    foreach (fu IN ITEMS "k1;0" "k3;1")
        list(GET fu 0 f)
        list(GET fu 1 u)
        conv_kernel(DIR bwd_data DTYPE f32 LAYOUT ${layout} STRIDE s1 FILTER ${f} ON gpu TAG c4x4${tag}n0 BASELINE
                    SKIP_ON opencl amdgpu SCHEDULE tile_c=4 tile_x=4 threads_c=16 threads_x=8 stage=${stage} narrow=0
                    unroll_taps=${u})
    endforeach ()
endforeach ()

# Smaller register tiles (GPU candidates): with 4 contiguous channels per thread a warp's load
# instruction touches 8 sectors for 4 bytes of each thread, 4 instructions the same 8 sectors
# (ncu on the H100: the 4x4 stride-2 phase kernel requested 3.2x the L1 sectors per FMA of the
# 2x2 scatter kernel). 2-wide tiles halve that.
foreach (dtype IN ITEMS f16 bf16)
    foreach (f IN ITEMS k1 k3)
        foreach (t IN ITEMS "2;2" "2;4" "4;2")
            list(GET t 0 tc)
            list(GET t 1 tx)
            conv_kernel(DIR bwd_data DTYPE ${dtype} LAYOUT nhwc STRIDE s2 FILTER ${f} ON gpu TAG c${tc}x${tx} BASELINE
                        SKIP_ON opencl amdgpu SCHEDULE tile_c=${tc} tile_x=${tx} threads_c=16 threads_x=8)
        endforeach ()
    endforeach ()
endforeach ()
foreach (sf IN ITEMS "s1;k1" "s1;k3" "s2;k3")
    list(GET sf 0 s)
    list(GET sf 1 f)
    foreach (t IN ITEMS "2;2" "2;4")
        list(GET t 0 tc)
        list(GET t 1 tx)
        conv_kernel(DIR bwd_data DTYPE f32 LAYOUT nhwc STRIDE ${s} FILTER ${f} ON gpu TAG c${tc}x${tx} BASELINE
                    SKIP_ON opencl amdgpu SCHEDULE tile_c=${tc} tile_x=${tx} threads_c=16 threads_x=8)
        conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT nhwc STRIDE ${s} FILTER ${f} ON gpu TAG c${tc}k${tx}f BASELINE
                    SKIP_ON opencl amdgpu SCHEDULE tile_c=${tc} tile_k=${tx} threads_c=16 threads_k=8 max_splits=512 fuse_taps=1)
    endforeach ()
endforeach ()

# NCHW backward-data read in place (stage=0: threads along the columns, no channels-innermost
# copy, rows of few column tiles on 8, 4 or 2 column threads), the other tiles of the sweep of
# 15:43 UTC: pointwise stride 1 with the plane as one row of H*W columns (f: flat=1, read by the
# runtime), 4x4 tiles (1x1 stride 2; 3x3 with the taps unrolled, u), the stem with 3 channels x
# 4 or 8 columns per thread (l1: in NCHW a warp's dy loads run along its columns). The pointwise
# class is a GEMM per image (dx = w^T dy over H*W columns); its 8x8 and 16x4 tiles are from the
# sweep of 09:46 UTC, 2026-11-23: 16x4 wins by 31% where C >= 2K and falls to 0.18 where K >= 4C;
# 8x8 0.50 against the default's 0.57 (docs/PERFORMANCE.md).
# (The 4x4 one is the CUDA default since 2026-11-23, in the loop above.)
foreach (t IN ITEMS "8;4" "4;8" "8;8" "16;4")
    list(GET t 0 tc)
    list(GET t 1 tx)
    conv_kernel(DIR bwd_data DTYPE f32 LAYOUT nchw STRIDE s1 FILTER k1 ON gpu TAG c${tc}x${tx}f BASELINE
                SKIP_ON opencl amdgpu SCHEDULE tile_c=${tc} tile_x=${tx} threads_c=16 threads_x=8 flat=1)
endforeach ()
conv_kernel(DIR bwd_data DTYPE f32 LAYOUT nchw STRIDE s2 FILTER k1 ON gpu TAG c4x4 BASELINE SKIP_ON opencl amdgpu
            SCHEDULE tile_c=4 tile_x=4 threads_c=16 threads_x=8)
foreach (s IN ITEMS s1 s2)
    conv_kernel(DIR bwd_data DTYPE f32 LAYOUT nchw STRIDE ${s} FILTER k3 ON gpu TAG c4x4u BASELINE
                SKIP_ON opencl amdgpu SCHEDULE tile_c=4 tile_x=4 threads_c=16 threads_x=8 unroll_taps=1)
endforeach ()
foreach (tx IN ITEMS 4 8)
    conv_kernel(DIR bwd_data DTYPE f32 LAYOUT nchw STRIDE s2 FILTER any ON gpu TAG c4x${tx}l1 BASELINE SKIP_ON opencl amdgpu
                SCHEDULE tile_c=4 tile_x=${tx} threads_c=16 threads_x=8 first_layer=1)
endforeach ()

# Other tiles of the sweep of 07:54 UTC, 2026-11-23 (the defaults above took 7-column tiles where
# they won): NCHW 3x3 read in place with 8 or 7 columns per thread (c4x8u: 0.55 and 0.36 on the
# 56- and 28-wide layers, but 0.04-0.06 on 7-wide rows), stride 2 staged with 7 columns, 1x1
# stride 2 with 8x4 and 4x7 tiles; NHWC stride 2 with 7 columns (0.34-0.45 against 0.60).
foreach (s IN ITEMS s1 s2)
    conv_kernel(DIR bwd_data DTYPE f32 LAYOUT nchw STRIDE ${s} FILTER k3 ON gpu TAG c4x8u BASELINE SKIP_ON opencl amdgpu
                SCHEDULE tile_c=4 tile_x=8 threads_c=16 threads_x=8 unroll_taps=1)
    conv_kernel(DIR bwd_data DTYPE f32 LAYOUT nchw STRIDE ${s} FILTER k3 ON gpu TAG c4x7u BASELINE SKIP_ON opencl amdgpu
                SCHEDULE tile_c=4 tile_x=7 threads_c=16 threads_x=8 unroll_taps=1)
endforeach ()
conv_kernel(DIR bwd_data DTYPE f32 LAYOUT nchw STRIDE s2 FILTER k3 ON gpu TAG c4x7su BASELINE SKIP_ON opencl amdgpu
            SCHEDULE tile_c=4 tile_x=7 threads_c=16 threads_x=8 stage=1 unroll_taps=1)
conv_kernel(DIR bwd_data DTYPE f32 LAYOUT nhwc STRIDE s2 FILTER k3 ON gpu TAG c4x7u BASELINE SKIP_ON opencl amdgpu
            SCHEDULE tile_c=4 tile_x=7 threads_c=16 threads_x=8 unroll_taps=1)
conv_kernel(DIR bwd_data DTYPE f32 LAYOUT nhwc STRIDE s2 FILTER k3 ON gpu TAG c4x7 BASELINE SKIP_ON opencl amdgpu
            SCHEDULE tile_c=4 tile_x=7 threads_c=16 threads_x=8)
foreach (t IN ITEMS "8;4" "4;7")
    list(GET t 0 tc)
    list(GET t 1 tx)
    conv_kernel(DIR bwd_data DTYPE f32 LAYOUT nchw STRIDE s2 FILTER k1 ON gpu TAG c${tc}x${tx} BASELINE SKIP_ON opencl amdgpu
                SCHEDULE tile_c=${tc} tile_x=${tx} threads_c=16 threads_x=8)
endforeach ()
# NHWC backward-weight 3x3 stride 1 with 7 columns per iteration (NCHW's default): 0.52 -> 0.43.
conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT nhwc STRIDE s1 FILTER k3 ON gpu TAG c4k4ft3u7 BASELINE
            SKIP_ON opencl amdgpu SCHEDULE tile_c=4 tile_k=4 threads_c=16 threads_k=8 max_splits=512
            fuse_taps=1 tile_s=3 unroll_q=7)
# NCHW pointwise staged with 8 columns per thread: a thread's dx stores per channel fill a
# 32-byte sector (4 columns fill half of one); 0.50 against 0.59 (sweep of 07:54 UTC).
conv_kernel(DIR bwd_data DTYPE f32 LAYOUT nchw STRIDE s1 FILTER k1 ON gpu TAG c4x8sf BASELINE SKIP_ON opencl amdgpu
            SCHEDULE tile_c=4 tile_x=8 threads_c=16 threads_x=8 stage=1 flat=1)
# NCHW pointwise stride 1 staged with 8x4 tiles (sweep of 09:46 UTC, 2026-11-23: 0.42 against the
# default's 0.57; the in-place 8x8 and 16x4 tiles are in the loop above).
conv_kernel(DIR bwd_data DTYPE f32 LAYOUT nchw STRIDE s1 FILTER k1 ON gpu TAG c8x4sf BASELINE SKIP_ON opencl amdgpu
            SCHEDULE tile_c=8 tile_x=4 threads_c=16 threads_x=8 stage=1 flat=1)
# Named NCHW backward-data candidates (CUDA; OpenCL too where the last field is 1, so that PoCL
# runs that code path in CI): "stride;filter;tile_c;tile_x;opt;stage;vec;opencl", opt f = flat=1,
# u = unroll_taps=1; stage 1 (tag s), 2 (tag m) or 3 (tag p); vec v = vec=4 (tag v).
macro(nchw_dgrad_candidate spec)
    set(_c "${spec}")
    list(GET _c 0 _s)
    list(GET _c 1 _f)
    list(GET _c 2 _tc)
    list(GET _c 3 _tx)
    list(GET _c 4 _opt)
    list(GET _c 5 _stage)
    list(GET _c 6 _v)
    list(GET _c 7 _ocl)
    set(_extra "")
    if (_opt STREQUAL "f")
        set(_extra flat=1)
    elseif (_opt STREQUAL "u")
        set(_extra unroll_taps=1)
    endif ()
    if (_v STREQUAL "v")
        list(APPEND _extra vec=4)
    endif ()
    set(_stag s)
    if (_stage STREQUAL "2")
        set(_stag m)
    elseif (_stage STREQUAL "3")
        set(_stag p)
    endif ()
    set(_skip opencl amdgpu)
    if (_ocl STREQUAL "1")
        set(_skip amdgpu)
    endif ()
    conv_kernel(DIR bwd_data DTYPE f32 LAYOUT nchw STRIDE ${_s} FILTER ${_f} ON gpu TAG c${_tc}x${_tx}${_stag}${_opt}${_v}
                BASELINE SKIP_ON ${_skip} SCHEDULE tile_c=${_tc} tile_x=${_tx} threads_c=16 threads_x=8 stage=${_stage}
                ${_extra})
endmacro()

# Staged with w's channels loaded as 16-byte vectors (vec=4, tag v: the staged copy aligned, the
# kernel requires C % 4 == 0): a thread's tile_c scalar loads of w spread over tile_c * 4 bytes x
# 32 threads, i.e. tile_c cache lines per load instruction; one vector load reads the same lines
# once. Sweep of 10:35 UTC, 2026-11-23 (docs/results/h100-2026-11-23-1035-*): 3x3 stride 1 with
# 4x7 tiles won (the default above); 1x1 4x4 0.54 against 0.58 with scalar loads, 1x1 stride 2
# 4x4 0.28 against 0.25 (0.42 against 0.24 at 14x14, a tuned row); 8-channel tiles collapse to
# 0.03-0.09: their accumulators, an 8-wide register vector, go to local memory (ptxas: a 256-384
# byte local depot; the 4-channel ones have none). OpenCL C has no 28-wide vector (4x7 tiles):
# OpenCL builds the 4x4 pointwise one only.
foreach (t IN ITEMS "s1;k1;4;4;f;1;v;1" "s1;k1;8;4;f;1;v;0" "s1;k1;4;8;f;1;v;0" "s1;k1;4;7;f;1;v;0"
                   "s1;k3;8;7;u;1;v;0" "s2;k3;4;4;u;1;v;0" "s2;k3;4;7;u;1;v;0" "s2;k1;4;4;;1;v;0"
                   "s2;k1;8;4;;1;v;0" "s2;k1;4;7;;1;v;0"
                   # The same 7-column pointwise tile with scalar loads (every ResNet-50 plane,
                   # 3136 to 49 columns when flat, is a whole number of 7-column tiles).
                   "s1;k1;4;7;f;1;;0")
    nchw_dgrad_candidate("${t}")
endforeach ()
# dy copied channels-innermost through a shared-memory tile (stage=2, tag m): the direct copy
# (stage=1) was a third of the 64->256 pointwise layer's time under ncu (10:55 UTC, 2026-11-23:
# 148 us of 440, 97% L1 busy). It lost: sweep of 11:08 (rows of 33 floats, no bank conflicts)
# 0.576 against 0.594 (1x1), 0.413 against 0.423 (3x3 stride 1), 0.364 against 0.360 (3x3 stride
# 2); 8x4, 8x7 and vector 4x4 stride-2 tiles lost more at 10:59.
foreach (t IN ITEMS "s1;k1;4;4;f;2;;1" "s1;k3;4;7;u;2;v;0" "s2;k3;4;4;u;2;;0")
    nchw_dgrad_candidate("${t}")
endforeach ()
# NCHW 1x1 stride 2 read in place with 16 channels x 4 columns per thread (the pointwise class's
# c16x4f tile on the stride phase): 0.97 ms against 1.11 at 56x56 (a tuned row), 0.92 / 1.32
# against 0.92 / 1.29 on the others (sweep of 10:59 UTC, 2026-11-23).
conv_kernel(DIR bwd_data DTYPE f32 LAYOUT nchw STRIDE s2 FILTER k1 ON gpu TAG c16x4 BASELINE SKIP_ON opencl amdgpu
            SCHEDULE tile_c=16 tile_x=4 threads_c=16 threads_x=8)
# NCHW pointwise stride 1 read in place with a thread's columns as 16-byte vectors (xvec=4, tag
# xv: one vector load of dy per k and channel tile, vector stores of dx; the kernel requires rows
# (flat: planes) and the tensors' strides and bases multiples of 4 elements, which the dispatcher
# checks). Sweep of 12:45 UTC, 2026-11-23: no win over scalar loads of the same tiles (8x8 0.64,
# 8x4 0.50, 4x4 0.53 against 0.77 for c4x4f over the 10 layers whose planes are multiples of 4:
# the L1 serves a warp's 4 strided scalar loads from the same lines). Kept as candidates: 8x8
# (the best), 8x4 (on OpenCL too, so that PoCL runs the code path in CI).
foreach (t IN ITEMS "8;4;1" "8;8;0")
    list(GET t 0 tc)
    list(GET t 1 tx)
    list(GET t 2 ocl)
    set(_skip opencl amdgpu)
    if (ocl)
        set(_skip amdgpu)
    endif ()
    conv_kernel(DIR bwd_data DTYPE f32 LAYOUT nchw STRIDE s1 FILTER k1 ON gpu TAG c${tc}x${tx}fxv BASELINE
                SKIP_ON ${_skip} SCHEDULE tile_c=${tc} tile_x=${tx} threads_c=16 threads_x=8 flat=1 xvec=4)
endforeach ()
# dy copied in its own layout with its zero border materialised (stage=3, tag p): the main kernel
# reads it as in place (threads along the columns) with no range test per load, which for the
# pointwise class (where no border exists) was worth 0.60 -> 0.77 (sweep of 12:45 UTC,
# 2026-11-23). Sweep of 12:56 UTC: 3x3 stride 1 lost to the staged c4x7suv on all four layers
# (0.42-1.08 ms against 0.41-0.58; 4x7 and 4x4 tiles), the stem too (2.81 ms against 2.44 in
# place); the generic stride-2 4x4 one won on the 3x3 stride-2 56x56 layer (0.82 ms against
# 1.06 for the class default, a tuned row) and came within 5-8% on two 1x1 stride-2 layers.
# Kept: that one and the 4x4 stride-1 one (on OpenCL too, so that PoCL runs the code path in CI).
foreach (t IN ITEMS "s1;k3;4;4;u;3;;1" "s2;any;4;4;;3;;0")
    nchw_dgrad_candidate("${t}")
endforeach ()
# (The scalar NCHW 3x3 stride-1 kernel with 2x and 4x the blocks per launch, c4k4fst3u7b2/b4,
# went after two sweeps: 0.21 / 0.17 against 0.27 at 14:33, 0.43 / 0.33 against 0.47 at 14:52,
# 2026-11-23; with the workspace's old layout each extra split cost ~45 us on the 7x7 layer.)
# Backward-weight with x's and dy's channels as 16-byte vectors (vec=4, tag v; stage=1 in either
# layout): each thread loads one column block's x (its columns and taps) and dy once into
# registers with ld.global.nc.v4, none inside the FMAs. ptxas 13.0.88 at the 128-register cap
# (tools/ptx_info/ptx_info.sh, sm_90): the 3x3 stride-1 NCHW scalar kernel (t3u7) spills 1104
# bytes in its 48-accumulator branch; vec with 2 columns per iteration none (119-124 registers),
# 4 columns 16-44 bytes, 7 columns about 550 (and win). The kernels take C, K multiples of 4 and
# groups 1 (the dispatcher checks, the generator requires). The winners are class defaults
# (above, in the defaults' loop); the rest stay candidates, the 3x3 stride-1 NCHW u4 one on
# OpenCL too, so that PoCL runs the path in CI. Sweep of 14:33 UTC, 2026-11-23 (-i 10, geomean
# against cuDNN over the class's layers): NCHW 3x3 stride 1 u7v 0.31, u4v 0.31, u2v 0.33 (7x7 layer 0.755 /
# 0.867 / 0.814 ms), u4v with 2x the splits 0.25; NCHW 1x1 u4 0.75, 8x8 0.62 against 0.81 for
# the 4x4 one column per iteration; NHWC 1x1 0.71 / 0.54 against 0.83 / 0.59 for the unstaged
# defaults. Sweep of 14:52 UTC (workspace layout changed): NCHW 3x3 stride 1 u7v 0.64, with half
# the splits (split_blocks 264, bh) 0.69 (7x7 layer 0.397 against 0.445 ms: a tuned row; the 28-
# and 14-wide layers slower), u4v 0.49, u2v 0.53; NCHW 1x1 u4 0.81, 8x8 0.64 against 0.85.
foreach (t IN ITEMS "nchw;s1;k3;4;1" "nchw;s1;k3;2;0")
    list(GET t 0 layout)
    list(GET t 1 s)
    list(GET t 2 f)
    list(GET t 3 uq)
    list(GET t 4 ocl)
    set(_skip opencl amdgpu)
    if (ocl)
        set(_skip amdgpu)
    endif ()
    conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT ${layout} STRIDE ${s} FILTER ${f} ON gpu TAG c4k4fst3u${uq}v BASELINE
                SKIP_ON ${_skip} SCHEDULE tile_c=4 tile_k=4 threads_c=16 threads_k=8 max_splits=512 stage=1
                fuse_taps=1 tile_s=3 unroll_q=${uq} vec=4)
endforeach ()
foreach (t IN ITEMS "4;b2;1056" "7;bh;264" "2;bh;264")
    list(GET t 0 uq)
    list(GET t 1 btag)
    list(GET t 2 blocks)
    conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT nchw STRIDE s1 FILTER k3 ON gpu TAG c4k4fst3u${uq}v${btag} BASELINE
                SKIP_ON opencl amdgpu SCHEDULE tile_c=4 tile_k=4 threads_c=16 threads_k=8 max_splits=512
                split_blocks=${blocks} stage=1 fuse_taps=1 tile_s=3 unroll_q=${uq} vec=4)
endforeach ()
# Pointwise: one column per iteration (48 registers; NCHW's default), 4 (80), and an 8x8 tile.
foreach (s IN ITEMS s1 s2)
    conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT nhwc STRIDE ${s} FILTER k1 ON gpu TAG c4k4svb4 BASELINE
                SKIP_ON opencl amdgpu SCHEDULE tile_c=4 tile_k=4 threads_c=16 threads_k=8 max_splits=512
                split_blocks=2112 stage=1 vec=4)
endforeach ()
conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT nchw STRIDE s1 FILTER k1 ON gpu TAG c4k4su4vb4 BASELINE
            SKIP_ON opencl amdgpu SCHEDULE tile_c=4 tile_k=4 threads_c=16 threads_k=8 max_splits=512
            split_blocks=2112 stage=1 unroll_q=4 vec=4)
conv_kernel(DIR bwd_weight DTYPE f32 LAYOUT nchw STRIDE s1 FILTER k1 ON gpu TAG c8k8svb4 BASELINE
            SKIP_ON opencl amdgpu SCHEDULE tile_c=8 tile_k=8 threads_c=16 threads_k=8 max_splits=512
            split_blocks=2112 stage=1 vec=4)
