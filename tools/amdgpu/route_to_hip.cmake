# cmake -DOBJCOPY=objcopy -DNM=nm -DIN=k.o -DOUT=k.hip.o -DIDENT=<C identifier of the kernel>
#       -P route_to_hip.cmake
#
# Routes the host pipeline of an amdgpu kernel (Halide object file for an OpenCL target) to
# convbwd's HIP glue (runtime/src/amdgpu/halide_glue.h) by renaming the OpenCL runtime entry
# points it calls:
#   halide_opencl_initialize_kernels -> convbwd_hip_initialize_kernels_<IDENT>  (per kernel: picks
#                                       that kernel's embedded code objects)
#   halide_opencl_run                -> convbwd_hip_run
#   halide_opencl_finalize_kernels   -> convbwd_hip_finalize_kernels
#   halide_opencl_device_interface   -> convbwd_hip_device_interface
# Then fails if the result still references any halide_opencl_* symbol (a Halide version whose
# host code calls another OpenCL runtime function must be looked at, not linked to the real
# OpenCL runtime by accident), or lacks any of the four renamed references.
foreach (v IN ITEMS OBJCOPY NM IN OUT IDENT)
    if (NOT DEFINED ${v})
        message(FATAL_ERROR "route_to_hip.cmake: -D${v}= is required")
    endif ()
endforeach ()
set(renames
    "halide_opencl_initialize_kernels=convbwd_hip_initialize_kernels_${IDENT}"
    "halide_opencl_run=convbwd_hip_run"
    "halide_opencl_finalize_kernels=convbwd_hip_finalize_kernels"
    "halide_opencl_device_interface=convbwd_hip_device_interface")
set(args "")
foreach (r IN LISTS renames)
    list(APPEND args --redefine-sym "${r}")
endforeach ()
execute_process(COMMAND "${OBJCOPY}" ${args} "${IN}" "${OUT}.tmp" RESULT_VARIABLE rc ERROR_VARIABLE err)
if (NOT rc EQUAL 0)
    message(FATAL_ERROR "route_to_hip.cmake: ${OBJCOPY} failed on ${IN}: ${err}")
endif ()
execute_process(COMMAND "${NM}" -u "${OUT}.tmp" OUTPUT_VARIABLE undefined RESULT_VARIABLE rc ERROR_VARIABLE err)
if (NOT rc EQUAL 0)
    message(FATAL_ERROR "route_to_hip.cmake: ${NM} failed on ${OUT}.tmp: ${err}")
endif ()
string(REGEX MATCHALL "halide_opencl_[A-Za-z0-9_]*" left "${undefined}")
if (left)
    list(REMOVE_DUPLICATES left)
    file(REMOVE "${OUT}.tmp")
    message(FATAL_ERROR "route_to_hip.cmake: ${IN} still calls ${left} after renaming: extend "
                        "tools/amdgpu/route_to_hip.cmake and runtime/src/amdgpu/halide_glue.cpp")
endif ()
foreach (r IN LISTS renames)
    string(REGEX REPLACE "^[^=]*=" "" new "${r}")
    if (NOT undefined MATCHES "[ \t]${new}\n")
        file(REMOVE "${OUT}.tmp")
        message(FATAL_ERROR "route_to_hip.cmake: ${IN} does not call ${new} after renaming (Halide's host "
                            "code changed?): nothing of it would run through HIP")
    endif ()
endforeach ()
file(RENAME "${OUT}.tmp" "${OUT}")
