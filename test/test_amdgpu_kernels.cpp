// Every AMDGPU code object of every conv kernel (CONVBWD_TARGETS has amdgpu): no scratch (no
// spills, no private arrays), and VGPRs that keep at least 4 waves per SIMD on gfx90a.
// Failures name the kernel, the arch and the entry point. (No AMD GPU exists here: this checks
// what was compiled; nothing is launched.)
#include <doctest/doctest.h>

#include <string>

#include "amdgpu_kernels.inc"
#include "runtime/src/amdgpu/code_object.h"

using namespace convbwd::amdgpu;

namespace {
struct Entry {
    const char *name;
    const EmbeddedCodeObjectSet *set;
};
const Entry kAmdKernels[] = {
#define CONVBWD_AMDGPU_KERNEL(name, symbol, sched) {#name, &symbol},
#include "amdgpu_kernels.inc"
#undef CONVBWD_AMDGPU_KERNEL
};
}  // namespace

TEST_SUITE("amdgpu") {
TEST_CASE("conv kernels' code objects: no scratch, >= 4 waves per SIMD on gfx90a") {
    int kernels = 0, objects = 0;
    for (const Entry &e : kAmdKernels) {
        for (size_t i = 0; i < e.set->count; i++) {
            const EmbeddedCodeObject &co = e.set->objects[i];
            CodeObjectInfo info;
            Status s = parse_code_object(co.data, co.size, &info);
            CAPTURE(std::string(e.name) + " " + co.arch);
            REQUIRE_MESSAGE(s.ok(), s.message);
            CHECK(!info.kernels.empty());
            ArchLimits limits;
            REQUIRE(arch_limits(info.processor, &limits));
            for (const KernelInfo &k : info.kernels) {
                CAPTURE(k.name);
                CHECK_MESSAGE(k.private_segment_fixed_size == 0, "scratch ", k.private_segment_fixed_size, " B");
                CHECK(k.vgpr_spill_count == 0);
                CHECK(k.sgpr_spill_count == 0);
                if (info.processor == "gfx90a")
                    CHECK_MESSAGE(waves_per_simd_by_vgpr(limits, k.vgpr_count) >= 4, k.vgpr_count, " VGPRs");
                kernels++;
            }
            objects++;
        }
    }
    MESSAGE(objects, " code objects, ", kernels, " kernel entry points checked");
    CHECK(objects > 0);
}
}
