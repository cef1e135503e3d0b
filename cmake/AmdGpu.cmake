# AMDGPU code objects from OpenCL C (Halide's OpenCL output), compiled ahead of time by clang and
# embedded in a static library. See tools/amdgpu/README.md.
#
#   convbwd_amdgpu_code_objects(TARGET <name> SOURCE <file.cl> ARCHS gfx908;gfx90a;gfx940
#                               OUT_VAR <var>
#                               [CODE_OBJECT_VERSION 4|5] [FLAGS <clang flags>...] [DEPENDS <files>...])
#
# Per arch, a custom command runs
#   clang-15 -x cl -cl-std=CL1.2 -cl-kernel-arg-info -target amdgcn-amd-amdhsa -mcpu=<arch> -O3
#            --rocm-device-lib-path=<device libs> -c <file.cl> -o <arch>.o
#   ld.lld-15 -shared <arch>.o -o <arch>.hsaco
# (linked with lld-15 explicitly: clang-15 alone calls /usr/bin/ld.lld, which on Debian 12 is
# lld-14 and rejects code object v5). Then tools/amdgpu/embed_code_objects.cmake writes every
# .hsaco into a generated C++ source as byte arrays with their arch names, compiled into the
# STATIC library <name>. The generated header <name>_code_objects.h declares
#   convbwd::amdgpu::embedded::<C identifier of name>   (a const EmbeddedCodeObjectSet)
# Linking <name> gives the include directories for it and for runtime/src/amdgpu/.
#
# Sets in the caller's scope:
#   <var>         the generated C++ source
#   <var>_HEADER  the generated header
#   <var>_SYMBOL  the C++ name of the EmbeddedCodeObjectSet
#   <var>_HSACO   the .hsaco files (one per arch, in ARCHS order)
#
# Cache variables: CONVBWD_AMDGPU_CLANG, CONVBWD_AMDGPU_LLD, CONVBWD_AMDGPU_DEVICE_LIBS,
# CONVBWD_AMDGPU_CLFLAGS. CONVBWD_AMDGPU_TOOLCHAIN_FOUND tells whether all were found.
include_guard(GLOBAL)

get_filename_component(_CONVBWD_AMDGPU_ROOT "${CMAKE_CURRENT_LIST_DIR}/.." REALPATH)

find_program(CONVBWD_AMDGPU_CLANG NAMES clang-15 DOC "clang with the AMDGPU target, for OpenCL C -> AMDGPU")
find_program(CONVBWD_AMDGPU_LLD NAMES ld.lld-15 DOC "lld matching CONVBWD_AMDGPU_CLANG")
find_path(CONVBWD_AMDGPU_DEVICE_LIBS NAMES ocml.bc
          PATHS /usr/lib/x86_64-linux-gnu/amdgcn/bitcode /opt/rocm/amdgcn/bitcode /opt/rocm/lib/amdgcn/bitcode
          NO_DEFAULT_PATH DOC "ROCm device libraries (ocml.bc, oclc_isa_version_*.bc)")
set(CONVBWD_AMDGPU_CLFLAGS "-O3" CACHE STRING "Extra clang flags for AMDGPU OpenCL C code objects")

if (CONVBWD_AMDGPU_CLANG AND CONVBWD_AMDGPU_LLD AND CONVBWD_AMDGPU_DEVICE_LIBS)
    set(CONVBWD_AMDGPU_TOOLCHAIN_FOUND TRUE)
else ()
    set(CONVBWD_AMDGPU_TOOLCHAIN_FOUND FALSE)
endif ()

function(convbwd_amdgpu_code_objects)
    cmake_parse_arguments(PARSE_ARGV 0 ARG "" "TARGET;SOURCE;OUT_VAR;CODE_OBJECT_VERSION" "ARCHS;FLAGS;DEPENDS")
    if (ARG_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR "convbwd_amdgpu_code_objects: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
    endif ()
    foreach (req IN ITEMS TARGET SOURCE OUT_VAR ARCHS)
        if (NOT ARG_${req})
            message(FATAL_ERROR "convbwd_amdgpu_code_objects: ${req} is required")
        endif ()
    endforeach ()
    if (NOT CONVBWD_AMDGPU_TOOLCHAIN_FOUND)
        message(FATAL_ERROR "convbwd_amdgpu_code_objects(${ARG_TARGET}): AMDGPU toolchain incomplete: "
                            "CONVBWD_AMDGPU_CLANG='${CONVBWD_AMDGPU_CLANG}' CONVBWD_AMDGPU_LLD='${CONVBWD_AMDGPU_LLD}' "
                            "CONVBWD_AMDGPU_DEVICE_LIBS='${CONVBWD_AMDGPU_DEVICE_LIBS}' "
                            "(Debian: apt install clang-15 lld-15 rocm-device-libs)")
    endif ()
    get_filename_component(src "${ARG_SOURCE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if (NOT EXISTS "${src}" AND NOT "${src}" IN_LIST ARG_DEPENDS)  # a generated source names itself in DEPENDS
        message(FATAL_ERROR "convbwd_amdgpu_code_objects(${ARG_TARGET}): SOURCE ${src} does not exist")
    endif ()
    set(cov_flag "")
    if (ARG_CODE_OBJECT_VERSION)
        if (NOT ARG_CODE_OBJECT_VERSION MATCHES "^[3-5]$")
            message(FATAL_ERROR "convbwd_amdgpu_code_objects(${ARG_TARGET}): CODE_OBJECT_VERSION must be 3, 4 or 5")
        endif ()
        set(cov_flag "-mcode-object-version=${ARG_CODE_OBJECT_VERSION}")
    endif ()
    separate_arguments(extra_flags UNIX_COMMAND "${CONVBWD_AMDGPU_CLFLAGS}")
    list(APPEND extra_flags ${ARG_FLAGS})

    set(dir "${CMAKE_CURRENT_BINARY_DIR}/amdgpu/${ARG_TARGET}")
    file(MAKE_DIRECTORY "${dir}")
    string(MAKE_C_IDENTIFIER "${ARG_TARGET}" ident)

    set(hsacos "")
    set(archs "")
    foreach (arch IN LISTS ARG_ARCHS)
        # "gfx90a:xnack-" is a valid -mcpu target id; the device library is picked by processor.
        string(REGEX MATCH "^gfx[0-9a-f]+" proc "${arch}")
        if (NOT proc)
            message(FATAL_ERROR "convbwd_amdgpu_code_objects(${ARG_TARGET}): '${arch}' is not a gfx processor")
        endif ()
        string(SUBSTRING "${proc}" 3 -1 isa)
        if (NOT EXISTS "${CONVBWD_AMDGPU_DEVICE_LIBS}/oclc_isa_version_${isa}.bc")
            message(FATAL_ERROR "convbwd_amdgpu_code_objects(${ARG_TARGET}): no device library "
                                "oclc_isa_version_${isa}.bc for ${proc} in ${CONVBWD_AMDGPU_DEVICE_LIBS}")
        endif ()
        string(MAKE_C_IDENTIFIER "${arch}" arch_id)
        set(obj "${dir}/${ARG_TARGET}.${arch_id}.o")
        set(hsaco "${dir}/${ARG_TARGET}.${arch_id}.hsaco")
        add_custom_command(
            OUTPUT "${hsaco}"
            COMMAND "${CONVBWD_AMDGPU_CLANG}" -x cl -cl-std=CL1.2 -cl-kernel-arg-info -target amdgcn-amd-amdhsa
                    -mcpu=${arch} ${cov_flag} --rocm-device-lib-path=${CONVBWD_AMDGPU_DEVICE_LIBS} ${extra_flags}
                    -c "${src}" -o "${obj}"
            COMMAND "${CONVBWD_AMDGPU_LLD}" -shared "${obj}" -o "${hsaco}"
            DEPENDS "${src}" ${ARG_DEPENDS}
            BYPRODUCTS "${obj}"
            COMMENT "AMDGPU code object ${ARG_TARGET} (${arch})"
            VERBATIM)
        list(APPEND hsacos "${hsaco}")
        list(APPEND archs "${arch}")
    endforeach ()

    set(cpp "${dir}/${ARG_TARGET}_code_objects.cpp")
    set(hdr "${dir}/${ARG_TARGET}_code_objects.h")
    set(cfg "${dir}/embed_inputs.cmake")
    file(CONFIGURE OUTPUT "${cfg}" CONTENT
"set(EMBED_NAME [==[${ARG_TARGET}]==])
set(EMBED_IDENT [==[${ident}]==])
set(EMBED_SOURCE [==[${src}]==])
set(EMBED_HEADER [==[${ARG_TARGET}_code_objects.h]==])
set(EMBED_ARCHS [==[${archs}]==])
set(EMBED_FILES [==[${hsacos}]==])
set(EMBED_OUT [==[${cpp}]==])
")
    file(CONFIGURE OUTPUT "${hdr}" CONTENT
"// Generated by cmake/AmdGpu.cmake (convbwd_amdgpu_code_objects). Do not edit.
#pragma once
#include \"runtime/src/amdgpu/embedded_code_objects.h\"
namespace convbwd::amdgpu::embedded {
// AMDGPU code objects of ${ARG_TARGET} (${archs}) from ${src}.
extern const EmbeddedCodeObjectSet ${ident};
}  // namespace convbwd::amdgpu::embedded
")
    add_custom_command(
        OUTPUT "${cpp}"
        COMMAND "${CMAKE_COMMAND}" -DCONFIG=${cfg} -P "${_CONVBWD_AMDGPU_ROOT}/tools/amdgpu/embed_code_objects.cmake"
        DEPENDS ${hsacos} "${cfg}" "${_CONVBWD_AMDGPU_ROOT}/tools/amdgpu/embed_code_objects.cmake"
        COMMENT "Embedding AMDGPU code objects of ${ARG_TARGET}"
        VERBATIM)

    add_library(${ARG_TARGET} STATIC "${cpp}" "${hdr}")
    target_include_directories(${ARG_TARGET} PUBLIC "${dir}" "${_CONVBWD_AMDGPU_ROOT}")
    set_target_properties(${ARG_TARGET} PROPERTIES POSITION_INDEPENDENT_CODE ON)

    set(${ARG_OUT_VAR} "${cpp}" PARENT_SCOPE)
    set(${ARG_OUT_VAR}_HEADER "${hdr}" PARENT_SCOPE)
    set(${ARG_OUT_VAR}_SYMBOL "convbwd::amdgpu::embedded::${ident}" PARENT_SCOPE)
    set(${ARG_OUT_VAR}_HSACO "${hsacos}" PARENT_SCOPE)
endfunction()

# The host-side library: code object reader, kernarg packing, Launcher, HIP binding (dlopen).
# Needs hip/hip_runtime_api.h (Debian: libamdhip64-dev) only for hip_api_real.cpp's declarations.
function(convbwd_amdgpu_add_runtime_library name)
    find_path(CONVBWD_HIP_INCLUDE_DIR NAMES hip/hip_runtime_api.h PATHS /usr/include /opt/rocm/include
              DOC "HIP headers (hip/hip_runtime_api.h)")
    set(dir "${_CONVBWD_AMDGPU_ROOT}/runtime/src/amdgpu")
    add_library(${name} STATIC "${dir}/code_object.cpp" "${dir}/hip_launcher.cpp")
    if (CONVBWD_HIP_INCLUDE_DIR)
        target_sources(${name} PRIVATE "${dir}/hip_api_real.cpp")
        set_source_files_properties("${dir}/hip_api_real.cpp" TARGET_DIRECTORY ${name} PROPERTIES
                                    COMPILE_DEFINITIONS __HIP_PLATFORM_AMD__)
        if (NOT CONVBWD_HIP_INCLUDE_DIR STREQUAL "/usr/include")
            set_source_files_properties("${dir}/hip_api_real.cpp" TARGET_DIRECTORY ${name} PROPERTIES
                                        INCLUDE_DIRECTORIES "${CONVBWD_HIP_INCLUDE_DIR}")
        endif ()
    else ()
        message(WARNING "HIP headers not found: ${name} gets a make_real_hip_api() that always fails")
        target_sources(${name} PRIVATE "${dir}/hip_api_none.cpp")
    endif ()
    target_include_directories(${name} PUBLIC "${_CONVBWD_AMDGPU_ROOT}" "${_CONVBWD_AMDGPU_ROOT}/runtime/include")
    target_link_libraries(${name} PUBLIC ${CMAKE_DL_LIBS})
    set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    # The recording fake of HIP (tests only): kept out of the library users link.
    add_library(${name}_testing STATIC "${dir}/recording_hip_api.cpp")
    target_include_directories(${name}_testing PUBLIC "${_CONVBWD_AMDGPU_ROOT}" "${_CONVBWD_AMDGPU_ROOT}/runtime/include")
endfunction()
