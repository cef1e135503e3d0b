# _conv_kernel(): one AOT kernel. Called only from generated/kernels.cmake, which
# tools/manifest writes from the kernel manifest (schedules/kernels.manifest) at configure time:
#
#   _conv_kernel(NAME <name> FAMILY <generator> DIR .. DTYPE .. LAYOUT .. STRIDE .. FILTER .. ON <device>
#                ROLE default|candidate|baseline ORDER <n> LINE <manifest line>
#                SCHEDULE <compile-time knob=value ...> LAUNCH "<launch-time knob=value ...>" [FRAGMENTS])
# FRAGMENTS: the family calls matrix fragments (schedules/spaces.h, calls_fragments): its OpenCL C
# gets a prelude (amdgpu: at build time; opencl: at load time); its PTX (cuda) is rewritten at load.
#
# The name is derived by the manifest tool from the fields and the compile-time knobs
# (schedules/spaces.h: kernel_tag). Calls come in dispatch order. Kernels whose name does not
# match CONVBWD_KERNELS, or whose role is not in CONVBWD_ROLES, are skipped, except the generic defaults (stride and filter any), which
# are always built so every problem has a kernel.

set(CONVBWD_GENERATED_DIR ${CMAKE_BINARY_DIR}/generated)

macro(convbwd_kernels_begin)
    set(CONVBWD_KERNEL_TARGETS "")
    set(CONVBWD_AMDGPU_KERNEL_TARGETS "")
    set(_convbwd_amdgpu_list "")
    set(_convbwd_amdgpu_headers "")
    set(_convbwd_list "")
    set(_convbwd_headers "")
endmacro()

function(_conv_kernel)
    cmake_parse_arguments(K "FRAGMENTS" "NAME;FAMILY;DIR;DTYPE;LAYOUT;STRIDE;FILTER;ON;ROLE;ORDER;LINE;LAUNCH" "SCHEDULE" ${ARGN})
    if (K_DIR STREQUAL "bwd_data")
        set(dir_enum BwdData)
    else ()
        set(dir_enum BwdWeight)
    endif ()
    set(name ${K_NAME})
    string(REPLACE "*" ".*" regex "^${CONVBWD_KERNELS}$")
    string(REPLACE "?" "." regex "${regex}")
    set(generic FALSE)
    if (K_STRIDE STREQUAL "any" AND K_FILTER STREQUAL "any" AND K_ROLE STREQUAL "default")
        set(generic TRUE)
    endif ()
    if ((NOT name MATCHES "${regex}" OR NOT K_ROLE IN_LIST CONVBWD_ROLES) AND NOT generic)
        return()
    endif ()
    # The registry row's fields (kernel_list.inc), for every target.
    string(TOUPPER ${K_DTYPE} dt)
    string(TOUPPER ${K_LAYOUT} lay)
    string(TOUPPER ${K_STRIDE} st)
    string(TOUPPER ${K_FILTER} fi)
    string(REPLACE "ANY" "Any" st ${st})
    string(REPLACE "ANY" "Any" fi ${fi})
    string(JOIN " " sched ${K_SCHEDULE})
    set(role Baseline)
    if (K_ROLE STREQUAL "default")
        set(role Default)
    elseif (K_ROLE STREQUAL "candidate")
        set(role Candidate)
    endif ()
    # Registry row: name, class, device, family, role, compile-time and launch-time knobs.
    set(row_tail "\"${K_FAMILY}\", ${role}, \"${sched}\", \"${K_LAUNCH}\"")
    set(features user_context-c_plus_plus_name_mangling)
    if (K_ON STREQUAL "host")
        # A kernel of 16-lane f32 vectors (vec=16) is dispatched only where the host runs AVX-512
        # (runtime/src/dispatch.cpp, host_f32_lanes); elsewhere it runs only when named. So it gets
        # the AVX-512 variants and the baseline (which still runs it anywhere), not the AVX2 one:
        # each variant costs about a third of the kernel's generation time, and these kernels take
        # two thirds of the host kernels' build time.
        set(host_targets ${CONVBWD_HOST_TARGETS})
        if ("vec=16" IN_LIST K_SCHEDULE AND CONVBWD_HOST_TARGETS MATCHES "avx512")
            set(host_targets "")
            foreach (t IN LISTS CONVBWD_HOST_TARGETS)
                if (t MATCHES "avx512" OR t STREQUAL CONVBWD_HOST_BASELINE)
                    list(APPEND host_targets ${t})
                endif ()
            endforeach ()
        endif ()
        list(TRANSFORM host_targets APPEND "-${features}" OUTPUT_VARIABLE target)
        set(on Host)
    elseif (K_ON STREQUAL "cuda" AND K_FRAGMENTS)
        _conv_kernel_fragments(cuda)
        return()
    elseif (K_ON STREQUAL "cuda")
        set(target ${CONVBWD_HOST_BASELINE}-cuda-cuda_capability_${CONVBWD_CUDA_CAPABILITY}-${features})
        set(on Cuda)
    elseif (K_ON STREQUAL "opencl" AND K_FRAGMENTS)
        _conv_kernel_fragments(opencl)
        return()
    elseif (K_ON STREQUAL "opencl")
        set(target ${CONVBWD_HOST_BASELINE}-opencl-${features})
        set(on OpenCL)
    elseif (K_ON STREQUAL "amdgpu")
        _conv_kernel_amdgpu()
        return()
    else ()
        message(FATAL_ERROR "conv_kernel: ON must be host or gpu (got ${K_ON})")
    endif ()
    set(exe gpu)
    if (K_ON STREQUAL "host")
        set(exe host)
    endif ()
    # The Halide stmt beside each kernel (HL's `stmt` output), where one target gives one file: a
    # multi-target library writes one per target while add_halide_library declares ${name}.stmt,
    # which never appears, so ninja would regenerate every host kernel on every build. For a host
    # kernel's stmt, run its generator command (`ninja -t commands NAME`) with `-e stmt`.
    set(stmt_arg "")
    list(LENGTH target n_targets)
    if (n_targets EQUAL 1)
        set(stmt_arg STMT ${name}_STMT)
    endif ()
    add_halide_library(${name} FROM convbwd_${exe}.generator
                       GENERATOR ${K_FAMILY}
                       NAMESPACE convbwd::kernels
                       TARGETS ${target}
                       USE_RUNTIME convbwd.runtime
                       ${stmt_arg}
                       FUNCTION_INFO_HEADER ${name}_INFO
                       PARAMS dtype=${K_DTYPE} layout=${K_LAYOUT} stride_class=${K_STRIDE}
                              filter_class=${K_FILTER} ${K_SCHEDULE})
    set(_convbwd_list "${_convbwd_list}CONVBWD_KERNEL(${name}, ${dir_enum}, ${dt}, ${lay}, ${st}, ${fi}, ${on}, ${row_tail})\n" PARENT_SCOPE)
    set(_convbwd_headers "${_convbwd_headers}#include \"${name}.h\"\n" PARENT_SCOPE)
    set(CONVBWD_KERNEL_TARGETS ${CONVBWD_KERNEL_TARGETS} ${name} PARENT_SCOPE)
endfunction()

# AMDGPU: one generator run per kernel for target <host>-opencl-cl_half (the same compile gives
# both outputs, so the kernel names agree by construction):
#   c_source -> the OpenCL C (extracted), compiled by clang into one code object per
#               CONVBWD_AMDGPU_ARCHS and embedded in the library;
#   object   -> Halide's host pipeline (bounds, copies, launches), whose OpenCL runtime entry
#               points are renamed by tools/amdgpu/route_to_hip.cmake (objcopy --redefine-sym) to
#               convbwd_hip_* (runtime/src/amdgpu/halide_glue.cpp), which launch the code objects
#               through HIP. The build fails if any halide_opencl_* reference is left.
# Registered like every other kernel (Device::AmdGpu), and listed in amdgpu_kernels.inc.
macro(_conv_kernel_amdgpu)
    set(gen_dir ${CMAKE_BINARY_DIR}/amdgpu_src)
    set(cl ${gen_dir}/${name}.cl)
    set(generator ${K_FAMILY})
    string(MAKE_C_IDENTIFIER "${name}" ident)
    set(host_obj ${gen_dir}/${name}.o)
    set(hip_obj ${gen_dir}/${name}.hip.o)
    # Kernels that call matrix fragments (generators/fragments.h) get the MFMA prelude first.
    set(prelude "")
    if (K_FRAGMENTS)
        set(prelude ${PROJECT_SOURCE_DIR}/generators/fragments/amdgpu.cl)
    endif ()
    add_custom_command(OUTPUT ${cl} ${gen_dir}/${name}.h ${hip_obj}
        COMMAND ${CMAKE_COMMAND} -E make_directory ${gen_dir}
        COMMAND convbwd_gpu.generator -g ${generator} -f convbwd::kernels::${name} -n ${name} -o ${gen_dir}
                -e c_source,object,h
                target=${CONVBWD_HOST_BASELINE}-opencl-cl_half-user_context-c_plus_plus_name_mangling-no_runtime
                dtype=${K_DTYPE} layout=${K_LAYOUT} stride_class=${K_STRIDE} filter_class=${K_FILTER} ${K_SCHEDULE}
        COMMAND convbwd_extract_opencl ${gen_dir}/${name}.halide_generated.cpp ${cl} ${prelude}
        COMMAND ${CMAKE_COMMAND} -DOBJCOPY=${CMAKE_OBJCOPY} -DNM=${CMAKE_NM} -DIN=${host_obj} -DOUT=${hip_obj}
                -DIDENT=${ident} -P ${PROJECT_SOURCE_DIR}/tools/amdgpu/route_to_hip.cmake
        DEPENDS convbwd_gpu.generator convbwd_extract_opencl ${PROJECT_SOURCE_DIR}/tools/amdgpu/route_to_hip.cmake ${prelude}
        BYPRODUCTS ${host_obj} ${gen_dir}/${name}.halide_generated.cpp
        COMMENT "Halide ${name}: OpenCL C + host pipeline routed to HIP"
        VERBATIM)
    convbwd_amdgpu_code_objects(TARGET ${name} SOURCE ${cl} ARCHS ${CONVBWD_AMDGPU_ARCHS} OUT_VAR co DEPENDS ${cl})
    if (prelude)  # the disassembly check of its MFMA instructions (test/CMakeLists.txt)
        set(frags 1)
        foreach (knob IN ITEMS tile_m tile_n)
            if ("${K_SCHEDULE}" MATCHES "${knob}=([0-9]+)")
                math(EXPR frags "${frags} * ${CMAKE_MATCH_1}")
            endif ()
        endforeach ()
        string(REPLACE ";" "," hsacos "${co_HSACO}")
        set_property(GLOBAL APPEND PROPERTY CONVBWD_MFMA_KERNELS "${name}|${hsacos}|${frags}")
    endif ()
    # The per-kernel entry point the renamed halide_opencl_initialize_kernels calls: it names this
    # kernel's code objects.
    file(CONFIGURE OUTPUT ${gen_dir}/${name}_hip_glue.cpp CONTENT
"// Generated by cmake/ConvbwdKernels.cmake: do not edit.
#include \"${name}_code_objects.h\"
#include \"runtime/src/amdgpu/halide_glue.h\"
extern \"C\" int convbwd_hip_initialize_kernels_${ident}(void *user_context, void **state_ptr, const char *, int) {
    return convbwd_hip_initialize_kernels(user_context, state_ptr, &${co_SYMBOL});
}
")
    set_source_files_properties(${hip_obj} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
    target_sources(${name} PRIVATE ${hip_obj} ${gen_dir}/${name}.h ${gen_dir}/${name}_hip_glue.cpp)
    target_include_directories(${name} PUBLIC ${gen_dir} PRIVATE ${PROJECT_SOURCE_DIR}/runtime/include)
    target_link_libraries(${name} PRIVATE Halide::Runtime)
    set(_convbwd_list "${_convbwd_list}CONVBWD_KERNEL(${name}, ${dir_enum}, ${dt}, ${lay}, ${st}, ${fi}, AmdGpu, ${row_tail})\n" PARENT_SCOPE)
    set(_convbwd_headers "${_convbwd_headers}#include \"${name}.h\"\n" PARENT_SCOPE)
    set(_convbwd_amdgpu_list "${_convbwd_amdgpu_list}CONVBWD_AMDGPU_KERNEL(${name}, ${co_SYMBOL}, \"${sched}\")\n" PARENT_SCOPE)
    set(_convbwd_amdgpu_headers "${_convbwd_amdgpu_headers}#include \"${name}_code_objects.h\"\n" PARENT_SCOPE)
    set(CONVBWD_AMDGPU_KERNEL_TARGETS ${CONVBWD_AMDGPU_KERNEL_TARGETS} ${name} PARENT_SCOPE)
endmacro()

# OpenCL and CUDA kernels that call matrix fragments (generators/fragments.h): Halide's device
# code calls an extern that the compiler must see defined, so the host pipeline's call of
# halide_<api>_initialize_kernels is renamed to convbwd_<api>_fragments_initialize_kernels, which
# puts the definitions in and calls Halide's: opencl, the preludes in front of the OpenCL C
# (runtime/src/opencl_fragments.cpp); cuda, each call rewritten into mma.sync in the PTX
# (runtime/src/cuda_fragments.cpp). Otherwise as any kernel of the api (Halide's runtime launches it).
macro(_conv_kernel_fragments api)
    if ("${api}" STREQUAL "opencl")
        set(frag_target ${CONVBWD_HOST_BASELINE}-opencl)
        set(frag_device OpenCL)
        set(frag_comment "OpenCL with matrix fragments (preludes at load)")
    else ()
        set(frag_target ${CONVBWD_HOST_BASELINE}-cuda-cuda_capability_${CONVBWD_CUDA_CAPABILITY})
        set(frag_device Cuda)
        set(frag_comment "CUDA with matrix fragments (mma.sync put into the PTX at load)")
    endif ()
    set(gen_dir ${CMAKE_BINARY_DIR}/${api}_src)
    set(host_obj ${gen_dir}/${name}.o)
    set(frag_obj ${gen_dir}/${name}.frag.o)
    add_custom_command(OUTPUT ${gen_dir}/${name}.h ${frag_obj}
        COMMAND ${CMAKE_COMMAND} -E make_directory ${gen_dir}
        COMMAND convbwd_gpu.generator -g ${K_FAMILY} -f convbwd::kernels::${name} -n ${name} -o ${gen_dir}
                -e object,h target=${frag_target}-user_context-c_plus_plus_name_mangling-no_runtime
                dtype=${K_DTYPE} layout=${K_LAYOUT} stride_class=${K_STRIDE} filter_class=${K_FILTER} ${K_SCHEDULE}
        COMMAND ${CMAKE_OBJCOPY} --redefine-sym halide_${api}_initialize_kernels=convbwd_${api}_fragments_initialize_kernels
                ${host_obj} ${frag_obj}
        DEPENDS convbwd_gpu.generator
        BYPRODUCTS ${host_obj}
        COMMENT "Halide ${name}: ${frag_comment}"
        VERBATIM)
    set_source_files_properties(${frag_obj} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
    add_library(${name} STATIC ${frag_obj} ${gen_dir}/${name}.h)
    set_target_properties(${name} PROPERTIES LINKER_LANGUAGE CXX)
    target_include_directories(${name} PUBLIC ${gen_dir})
    set(_convbwd_list "${_convbwd_list}CONVBWD_KERNEL(${name}, ${dir_enum}, ${dt}, ${lay}, ${st}, ${fi}, ${frag_device}, ${row_tail})\n" PARENT_SCOPE)
    set(_convbwd_headers "${_convbwd_headers}#include \"${name}.h\"\n" PARENT_SCOPE)
    set(CONVBWD_KERNEL_TARGETS ${CONVBWD_KERNEL_TARGETS} ${name} PARENT_SCOPE)
endmacro()

macro(convbwd_kernels_end)
    set(_hdr "// Generated by cmake/ConvbwdKernels.cmake from schedules/kernels.manifest: do not edit.\n")
    file(CONFIGURE OUTPUT ${CONVBWD_GENERATED_DIR}/kernel_list.inc CONTENT "${_hdr}${_convbwd_list}" @ONLY)
    file(CONFIGURE OUTPUT ${CONVBWD_GENERATED_DIR}/all_kernels.h CONTENT "${_hdr}#pragma once\n${_convbwd_headers}" @ONLY)
    file(CONFIGURE OUTPUT ${CONVBWD_GENERATED_DIR}/amdgpu_kernels.inc
         CONTENT "${_hdr}${_convbwd_amdgpu_headers}#ifdef CONVBWD_AMDGPU_KERNEL\n${_convbwd_amdgpu_list}#endif\n" @ONLY)
    add_custom_target(convbwd_kernel_list)
    list(LENGTH CONVBWD_KERNEL_TARGETS _n)
    message(STATUS "convbwd: ${_n} kernels (CONVBWD_KERNELS='${CONVBWD_KERNELS}')")
endmacro()

# Merges static libraries into one archive with an ar MRI script; exposes convbwd::convbwd.
function(convbwd_merge_archives out)
    set(merged ${CMAKE_BINARY_DIR}/lib${out}.a)
    set(script "create ${merged}\n")
    set(deps "")
    foreach (lib IN LISTS ARGN)
        string(APPEND script "addlib $<TARGET_FILE:${lib}>\n")
        list(APPEND deps ${lib})
    endforeach ()
    string(APPEND script "save\nend\n")
    file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/${out}.mri CONTENT "${script}")
    add_custom_command(OUTPUT ${merged}
                       COMMAND ${CMAKE_COMMAND} -E rm -f ${merged}
                       COMMAND ${CMAKE_AR} -M < ${CMAKE_BINARY_DIR}/${out}.mri
                       DEPENDS ${deps} ${CMAKE_BINARY_DIR}/${out}.mri
                       COMMENT "Merging lib${out}.a")
    add_custom_target(${out}_merged ALL DEPENDS ${merged})
    add_library(${out}::${out} STATIC IMPORTED GLOBAL)
    set_target_properties(${out}::${out} PROPERTIES IMPORTED_LOCATION ${merged}
        INTERFACE_INCLUDE_DIRECTORIES ${CMAKE_CURRENT_SOURCE_DIR}/runtime/include
        INTERFACE_LINK_LIBRARIES "Threads::Threads;${CMAKE_DL_LIBS}"
        # Kernel modules (convbwd/convbwd_module.h) carry no Halide runtime: they use this one
        # (and the matrix fragments' load steps, runtime/src/{opencl,cuda}_fragments.cpp).
        INTERFACE_LINK_OPTIONS "LINKER:--export-dynamic-symbol=halide_*;LINKER:--export-dynamic-symbol=convbwd_opencl_fragments_*;LINKER:--export-dynamic-symbol=convbwd_cuda_fragments_*")
    add_dependencies(${out}::${out} ${out}_merged)
    set(CONVBWD_MERGED_LIB ${merged} PARENT_SCOPE)
endfunction()

# libconvbwd.so from the merged archive of convbwd_merge_archives(<archive>): every member linked
# (--whole-archive), libstdc++/libgcc inside, exports limited by a version script, references bound
# inside the object (-Bsymbolic), nothing left undefined. Exposes <archive>::shared.
function(convbwd_shared_library target archive version_script) # ARGN: the archive's targets
    set(merged ${CMAKE_BINARY_DIR}/lib${archive}.a)
    file(CONFIGURE OUTPUT ${CONVBWD_GENERATED_DIR}/${target}.c
         CONTENT "/* Generated by cmake/ConvbwdKernels.cmake: libconvbwd.so is libconvbwd.a linked whole. */\n")
    add_library(${target} SHARED ${CONVBWD_GENERATED_DIR}/${target}.c)
    set_target_properties(${target} PROPERTIES OUTPUT_NAME ${archive} LINKER_LANGUAGE CXX
                          LINK_DEPENDS "${version_script};${merged}")
    target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc LINKER:--version-script=${version_script}
                        LINKER:-Bsymbolic LINKER:--no-undefined)
    target_link_libraries(${target} PRIVATE -Wl,--whole-archive ${merged} -Wl,--no-whole-archive
                          Threads::Threads ${CMAKE_DL_LIBS} m)
    add_dependencies(${target} ${archive}_merged)
    # The archive's members compiled here must be position-independent (Halide's objects are).
    foreach (lib IN LISTS ARGN)
        set_property(TARGET ${lib} PROPERTY POSITION_INDEPENDENT_CODE ON)
    endforeach ()
    add_library(${archive}::shared ALIAS ${target})
    target_include_directories(${target} INTERFACE $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/runtime/include>)
endfunction()
