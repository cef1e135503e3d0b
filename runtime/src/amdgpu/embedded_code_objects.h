// Code objects embedded in the library by convbwd_amdgpu_code_objects() (cmake/AmdGpu.cmake):
// one AMDGPU ELF (.hsaco) per target processor, all built from the same OpenCL C source.
// The generated source defines one EmbeddedCodeObjectSet per CMake call; its header declares it.
// Plain aggregates only, so the generated tables are constant-initialised (no static-init order).
#pragma once

#include <cstddef>

namespace convbwd::amdgpu {

struct EmbeddedCodeObject {
    const char *arch;           // processor as given to clang -mcpu, e.g. "gfx90a"
    const unsigned char *data;  // the ELF image (8-byte aligned)
    std::size_t size;           // bytes
};

struct EmbeddedCodeObjectSet {
    const char *name;                   // the TARGET of the CMake call
    const char *source;                 // the OpenCL C file it was compiled from (for messages)
    const EmbeddedCodeObject *objects;  // one per arch, in ARCHS order
    std::size_t count;
};

}  // namespace convbwd::amdgpu
