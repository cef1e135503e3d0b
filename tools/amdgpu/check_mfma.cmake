# cmake -DOBJDUMP=llvm-objdump-15 -DKERNEL=<name> -DHSACOS="<a.hsaco;...>" -DFRAGMENTS=<tile_m*tile_n>
#       -P check_mfma.cmake
# A matrix-fragment kernel's code objects (generators/fragments.h) hold what the schedule asked
# for: in every kernel entry, exactly one MFMA per fragment of the wave's tile per k-block (the
# 16 per-element fragment calls merged into one instruction; gfx908's bf16 is two 32x32x4 ones);
# backward-weight's second kernel (its entries _kernel_out_*, the sum over the workspace's
# splits) none, nor the vec=4 kernels' copies (backward-data's of w, _kernel_wt_*; backward-weight's
# of dy and x, _kernel_dyt_* and _kernel_xs_*, and its table of k-block starts, _kernel_kinfo_*);
# stride-2 backward-data one per
# phase where the phase loop is unrolled, 3x3 (class k3) one per tap where a filter row's loop of 3
# taps is (each copy has its own k-block loop).
# Prints each entry's count. (Scratch, VGPRs and occupancy of every code object: ctest amdgpu.)
foreach (v IN ITEMS OBJDUMP KERNEL HSACOS FRAGMENTS)
    if (NOT DEFINED ${v})
        message(FATAL_ERROR "check_mfma.cmake: -D${v}= is required")
    endif ()
endforeach ()
set(failed "")
foreach (hsaco IN LISTS HSACOS)
    string(REGEX MATCH "\\.(gfx[0-9a-f]+)[^.]*\\.hsaco$" _ "${hsaco}")
    set(arch "${CMAKE_MATCH_1}")
    set(per_fragment 1)
    if (arch STREQUAL "gfx908" AND KERNEL MATCHES "_bf16_")
        set(per_fragment 2)
    endif ()
    math(EXPR want "${FRAGMENTS} * ${per_fragment}")
    execute_process(COMMAND "${OBJDUMP}" -d --no-show-raw-insn "${hsaco}" OUTPUT_VARIABLE dis RESULT_VARIABLE rc)
    if (NOT rc EQUAL 0)
        message(FATAL_ERROR "${OBJDUMP} failed on ${hsaco}")
    endif ()
    # Split the disassembly at each entry's label "<addr> <name>:".
    string(REGEX REPLACE "\n[0-9a-f]+ <([A-Za-z0-9_]+)>:" "\n@@ENTRY \\1\n" dis "${dis}")
    string(REPLACE ";" "," dis "${dis}")
    string(REPLACE "@@ENTRY " ";" parts "${dis}")
    list(POP_FRONT parts)
    set(entries 0)
    foreach (part IN LISTS parts)
        string(REGEX MATCH "^[A-Za-z0-9_]+" entry "${part}")
        if (entry MATCHES "_at_least_one_kernel")
            continue()
        endif ()
        math(EXPR entries "${entries} + 1")
        set(want_here ${want})
        if ((KERNEL MATCHES "^bwdw_" AND entry MATCHES "^_kernel_out_") OR entry MATCHES "^_kernel_(wt|dyt|xs|kinfo)_")
            set(want_here 0)
        endif ()
        string(REGEX MATCHALL "v_mfma_[a-z0-9_]+" mfmas "${part}")
        list(LENGTH mfmas n)
        list(REMOVE_DUPLICATES mfmas)
        message(STATUS "${KERNEL} ${arch} ${entry}: ${n} MFMA (${mfmas}), want ${want_here}")
        # Stride 2 (class s2): a block computes two column phases in a loop of two, which the
        # compiler may unroll (one MFMA per fragment per k-block in each phase's copy).
        math(EXPR twice "${want_here} * 2")
        math(EXPR thrice "${want_here} * 3")
        if (NOT n EQUAL want_here AND NOT (KERNEL MATCHES "_s2_" AND n EQUAL twice)
            AND NOT (KERNEL MATCHES "_k3_" AND n EQUAL thrice))
            list(APPEND failed "${arch} ${entry}: ${n} MFMA instructions, want ${want_here}")
        endif ()
    endforeach ()
    if (entries EQUAL 0)
        list(APPEND failed "${arch}: no kernel entry in ${hsaco}")
    endif ()
endforeach ()
if (failed)
    string(REPLACE ";" "\n  " failed "${failed}")
    message(FATAL_ERROR "${KERNEL}:\n  ${failed}")
endif ()
