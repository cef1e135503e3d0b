// hsaco_info: prints what runtime/src/amdgpu/code_object.h reads from AMDGPU code objects —
// per kernel: registers, LDS, scratch, kernarg layout, and the occupancy estimate.
//
//   hsaco_info [--block N] [--lds BYTES] file.hsaco...
//
// --block: work-items per group for the LDS/work-group part of the estimate (default: the
// kernel's .max_flat_workgroup_size); --lds: dynamic LDS bytes per group (default 0).
// Exit status 1 if a file cannot be read or parsed, or any kernel uses scratch (spills).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "runtime/src/amdgpu/code_object.h"

using namespace convbwd::amdgpu;

int main(int argc, char **argv) {
    uint32_t block = 0, lds = 0;
    std::vector<std::string> files;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--block") && i + 1 < argc) {
            block = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 0));
        } else if (!std::strcmp(argv[i], "--lds") && i + 1 < argc) {
            lds = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 0));
        } else if (argv[i][0] == '-') {
            std::fprintf(stderr, "usage: %s [--block N] [--lds BYTES] file.hsaco...\n", argv[0]);
            return 2;
        } else {
            files.push_back(argv[i]);
        }
    }
    if (files.empty()) {
        std::fprintf(stderr, "usage: %s [--block N] [--lds BYTES] file.hsaco...\n", argv[0]);
        return 2;
    }
    int rc = 0;
    for (const std::string &f : files) {
        std::ifstream in(f, std::ios::binary);
        std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (!in.good() && !in.eof()) {
            std::fprintf(stderr, "%s: cannot read\n", f.c_str());
            rc = 1;
            continue;
        }
        CodeObjectInfo info;
        Status s = parse_code_object(bytes.data(), bytes.size(), &info);
        if (!s.ok()) {
            std::fprintf(stderr, "%s: %s\n", f.c_str(), s.message.c_str());
            rc = 1;
            continue;
        }
        ArchLimits limits;
        const bool have_limits = arch_limits(info.processor, &limits);
        std::printf("%s: %s, code object v%u, metadata %u.%u, %zu kernels\n", f.c_str(), info.target.c_str(),
                    info.code_object_version, info.metadata_version[0], info.metadata_version[1],
                    info.kernels.size());
        for (const KernelInfo &k : info.kernels) {
            std::printf("  %s (%s)\n", k.name.c_str(), k.symbol.c_str());
            std::printf("    vgpr %u%s sgpr %u  spills v%u s%u  scratch %u B  static LDS %u B  wave%u  max block %u\n",
                        k.vgpr_count, k.has_agpr_count ? (" agpr " + std::to_string(k.agpr_count)).c_str() : "",
                        k.sgpr_count, k.vgpr_spill_count, k.sgpr_spill_count, k.private_segment_fixed_size,
                        k.group_segment_fixed_size, k.wavefront_size, k.max_flat_workgroup_size);
            if (have_limits) {
                const uint32_t b = block ? block : k.max_flat_workgroup_size;
                const Occupancy o = estimate_occupancy(k, limits, b, k.dynamic_shared_arg() >= 0 ? lds : 0);
                std::printf("    occupancy (block %u, dynamic LDS %u B): %u waves/SIMD, limited by %s "
                            "(vgpr %u, sgpr %u, lds %u, groups %u)\n",
                            b, k.dynamic_shared_arg() >= 0 ? lds : 0, o.waves_per_simd, o.limiter, o.by_vgpr,
                            o.by_sgpr, o.by_lds, o.by_workgroups);
            }
            std::printf("    kernarg %u B (align %u):\n", k.kernarg_segment_size, k.kernarg_segment_align);
            for (size_t j = 0; j < k.args.size(); j++) {
                const KernelArgInfo &a = k.args[j];
                std::printf("      [%zu] @%-4u %2u B  %-24s %s%s%s\n", j, a.offset, a.size, a.value_kind.c_str(),
                            a.name.c_str(), a.type_name.empty() ? "" : (" : " + a.type_name).c_str(),
                            a.pointee_align ? (" (pointee align " + std::to_string(a.pointee_align) + ")").c_str()
                                            : "");
            }
            if (k.private_segment_fixed_size != 0) rc = 1;
        }
    }
    return rc;
}
