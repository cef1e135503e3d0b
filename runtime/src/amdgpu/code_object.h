// Reading an AMDGPU code object (ELF64, EM_AMDGPU, code object v3/v4/v5) held in memory: the
// NT_AMDGPU_METADATA note (owner "AMDGPU") carries MessagePack metadata ("amdhsa.kernels",
// "amdhsa.target", "amdhsa.version"), decoded here without LLVM, plus a register/LDS occupancy
// estimate per SIMD.
//
// Reference: LLVM AMDGPUUsage, "Code Object V3 Metadata" and later (kernel and kernel-argument
// metadata maps). Every read is bounds-checked: a truncated or corrupt image gives a Status,
// never a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/src/amdgpu/status.h"

namespace convbwd::amdgpu {

// ------------------------------------------------------------------------------------------
// MessagePack (the subset that AMDGPU metadata uses, decoded fully so unknown keys are skipped)
// ------------------------------------------------------------------------------------------
struct MsgValue {
    enum class Type { Nil, Bool, Int, UInt, Float, Str, Bin, Array, Map, Ext };
    Type type = Type::Nil;
    bool b = false;
    int64_t i = 0;   // Int (negative or signed encodings)
    uint64_t u = 0;  // UInt
    double f = 0;
    std::string s;  // Str / Bin / Ext payload
    std::vector<MsgValue> array;
    std::vector<std::pair<MsgValue, MsgValue>> map;

    bool is_int() const { return type == Type::Int || type == Type::UInt; }
    // Integer value if it is a non-negative integer that fits; false otherwise.
    bool as_u64(uint64_t *out) const;
    // Map lookup by string key; nullptr if absent or not a map.
    const MsgValue *find(std::string_view key) const;
};

// Decodes exactly one MessagePack object from [data, data+size). Trailing bytes are an error
// unless allow_trailing. Nesting deeper than 64 levels is refused.
Status decode_msgpack(const uint8_t *data, size_t size, MsgValue *out, bool allow_trailing = false);

// ------------------------------------------------------------------------------------------
// Code object metadata
// ------------------------------------------------------------------------------------------
struct KernelArgInfo {
    std::string name;        // ".name" (present when compiled with -cl-kernel-arg-info), may be empty
    std::string type_name;   // ".type_name", may be empty
    uint32_t offset = 0;     // ".offset" in the kernarg segment
    uint32_t size = 0;       // ".size"
    std::string value_kind;  // ".value_kind": by_value, global_buffer, dynamic_shared_pointer, hidden_*, ...
    std::string address_space;  // ".address_space": global, constant, local, ... (may be empty)
    uint32_t pointee_align = 0;  // ".pointee_align" (dynamic_shared_pointer), 0 if absent
    bool is_hidden() const { return value_kind.compare(0, 7, "hidden_") == 0; }
};

struct KernelInfo {
    std::string name;    // ".name"
    std::string symbol;  // ".symbol", e.g. "name.kd" (the kernel descriptor)
    std::string arch;    // the code object's "amdhsa.target", e.g. "amdgcn-amd-amdhsa--gfx90a"
    uint32_t vgpr_count = 0;
    bool has_agpr_count = false;
    uint32_t agpr_count = 0;
    uint32_t sgpr_count = 0;
    uint32_t vgpr_spill_count = 0;  // 0 if absent
    uint32_t sgpr_spill_count = 0;  // 0 if absent
    uint32_t group_segment_fixed_size = 0;    // static LDS bytes
    uint32_t private_segment_fixed_size = 0;  // scratch bytes per work-item (spills, private arrays)
    uint32_t kernarg_segment_size = 0;
    uint32_t kernarg_segment_align = 0;
    uint32_t wavefront_size = 0;
    uint32_t max_flat_workgroup_size = 0;
    bool uses_dynamic_stack = false;
    uint32_t reqd_workgroup_size[3] = {0, 0, 0};  // ".reqd_workgroup_size", zeros if absent
    std::vector<KernelArgInfo> args;              // all arguments, explicit then hidden, metadata order

    // Indices into args of the explicit (non-hidden) arguments, in order: what a caller passes.
    std::vector<size_t> explicit_args() const;
    // Index of the dynamic_shared_pointer argument, or -1.
    int dynamic_shared_arg() const;
};

struct CodeObjectInfo {
    std::string target;     // "amdhsa.target", e.g. "amdgcn-amd-amdhsa--gfx90a:xnack-"
    std::string processor;  // "gfx90a" (target id without triple and features)
    std::string features;   // ":sramecc+:xnack-" part of the target id, possibly empty
    uint32_t metadata_version[2] = {0, 0};  // "amdhsa.version"
    uint32_t code_object_version = 0;       // 3, 4, 5, 6 from the ELF ABI version; 0 if unknown
    std::vector<KernelInfo> kernels;

    const KernelInfo *find(std::string_view kernel_name) const;
};

// Parses an in-memory code object. The image must stay valid only during the call.
Status parse_code_object(const void *image, size_t size, CodeObjectInfo *out);

// "amdgcn-amd-amdhsa--gfx90a:xnack-" -> processor "gfx90a", features ":xnack-".
// Also accepts a bare target id ("gfx90a:sramecc+:xnack-", what HIP's gcnArchName reports).
void split_target_id(std::string_view target, std::string *processor, std::string *features);

// Whether a code object built for target id `code` can run on a device reporting `device`
// (both target ids, e.g. "gfx90a" and "gfx90a:sramecc+:xnack-"): same processor, and every
// feature the code object pins (xnack+/-, sramecc+/-) is not contradicted by the device.
bool target_compatible(std::string_view code, std::string_view device);

// ------------------------------------------------------------------------------------------
// Occupancy
// ------------------------------------------------------------------------------------------
// Per-processor resource limits used by the estimate (values of LLVM's AMDGPUBaseInfo for GFX9).
struct ArchLimits {
    std::string processor;
    uint32_t simds_per_cu = 4;
    uint32_t max_waves_per_simd = 0;
    uint32_t vgprs_per_simd_lane = 0;  // registers a SIMD's register file holds per lane
    uint32_t vgpr_granule = 0;         // allocation granule, in registers
    uint32_t max_sgprs_per_wave = 0;   // addressable SGPRs
    uint32_t lds_bytes_per_cu = 65536;
    uint32_t max_workgroups_per_cu = 16;  // for work-groups of more than one wave
};

// Limits for gfx9 data-centre processors (gfx908, gfx90a, gfx940/941/942) and other gfx9.
// False for processors this estimate does not model (gfx10+, unknown).
bool arch_limits(std::string_view processor, ArchLimits *out);

// Waves one SIMD can hold, limited by the VGPR file alone.
//
// Rule (LLVM AMDGPUBaseInfo getNumWavesPerEUWithNumVGPRs, AMDGPUUsage compute_pgm_rsrc1
// GRANULATED_WORKITEM_VGPR_COUNT):
//   waves = min(max_waves_per_simd, vgprs_per_simd_lane / align_up(vgpr_count, granule))
// gfx90a/gfx940: 512 registers per lane per SIMD shared by ArchVGPRs and AccVGPRs (unified file),
// granule 8, at most 8 waves per SIMD. For these the metadata ".vgpr_count" already is the unified
// total, align_up(arch_vgprs, 4) + agprs (checked: a kernel with 36 ArchVGPRs and 32 AGPRs
// reports .vgpr_count 68 / .agpr_count 32 on gfx90a), so agpr_count is not added again.
// gfx908: 256 ArchVGPRs per lane (AGPRs are a separate 256-register file), granule 4, 10 waves;
// ".vgpr_count" there is max(arch, agpr).
uint32_t waves_per_simd_by_vgpr(const ArchLimits &limits, uint32_t vgpr_count);

// Waves per SIMD limited by SGPRs (GFX8/GFX9 table of LLVM getOccupancyWithNumSGPRs).
uint32_t waves_per_simd_by_sgpr(const ArchLimits &limits, uint32_t sgpr_count);

struct Occupancy {
    uint32_t by_vgpr = 0;
    uint32_t by_sgpr = 0;
    uint32_t by_lds = 0;  // max_waves_per_simd when the kernel uses no LDS
    uint32_t by_workgroups = 0;
    uint32_t waves_per_simd = 0;  // the minimum of the above
    const char *limiter = "";     // "vgpr", "sgpr", "lds", "workgroups" or "max"
};

// Estimated waves per SIMD of one kernel launched with `block_threads` work-items per group and
// `dynamic_lds_bytes` of dynamic LDS. LDS rule: a CU has lds_bytes_per_cu (64 KiB) shared by its
// resident work-groups, so floor(64 KiB / LDS per group) groups fit, and their waves spread over
// the CU's 4 SIMDs: waves = ceil(groups * waves_per_group / 4).
Occupancy estimate_occupancy(const KernelInfo &kernel, const ArchLimits &limits, uint32_t block_threads,
                             uint32_t dynamic_lds_bytes);

// LDS a group of `kernel` occupies with `dynamic_lds_bytes` of dynamic LDS: the static segment,
// padded to the dynamic pointer's alignment, plus the dynamic bytes.
uint64_t lds_bytes_per_group(const KernelInfo &kernel, uint32_t dynamic_lds_bytes);
// Offset (group-segment address) at which the dynamic LDS of `kernel` starts.
uint32_t dynamic_lds_offset(const KernelInfo &kernel);

}  // namespace convbwd::amdgpu
