# cmake -DIN=<name>.halide_generated.cpp -DOUT=<name>.cl -P extract_opencl.cmake
# Pulls the OpenCL C of all kernels of a Halide pipeline out of its C++ output (c_source), where
# Halide keeps it as a raw string literal, and drops the trailing NUL byte.
file(READ "${IN}" text)
string(FIND "${text}" "R\"BUFCHARSOURCE(" begin)
string(FIND "${text}" ")BUFCHARSOURCE\"" end)
if (begin EQUAL -1 OR end EQUAL -1)
    message(FATAL_ERROR "extract_opencl: no OpenCL source in ${IN}")
endif ()
math(EXPR begin "${begin} + 16")
math(EXPR len "${end} - ${begin}")
string(SUBSTRING "${text}" ${begin} ${len} source)
string(REPLACE "\\0" "" source "${source}")
file(WRITE "${OUT}.tmp" "// Generated from ${IN} by cmake/extract_opencl.cmake: do not edit.\n${source}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
