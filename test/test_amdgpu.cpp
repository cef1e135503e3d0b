// AMDGPU path: code objects compiled by clang from Halide-style OpenCL C (tools/amdgpu/testdata),
// their metadata (no spills, occupancy), kernarg packing against a recording HIP fake, and the
// real HIP binding on a machine without an AMD GPU (a clean device error).
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "convbwd_amdgpu_mfma_probe_code_objects.h"
#include "convbwd_amdgpu_test_kernels_code_objects.h"
#include "convbwd_amdgpu_test_kernels_v5_code_objects.h"
#include "runtime/src/amdgpu/code_object.h"
#include "runtime/src/amdgpu/hip_launcher.h"
#include "runtime/src/amdgpu/recording_hip_api.h"

using namespace convbwd::amdgpu;
namespace emb = convbwd::amdgpu::embedded;

namespace {

const char *const kDx = "_kernel_dx_s0_x_xo_block_id_x";
const char *const kDw = "_kernel_dw_partials_s0_r_ro_block_id_x";
const char *const kAxpby = "_kernel_axpby_s0_x";
const char *const kWide = "_kernel_wide_s0_x_block_id_x";
const char *const kTile16 = "_kernel_tile16_s0_y_yo_block_id_y";

CodeObjectInfo parse_or_fail(const EmbeddedCodeObject &o) {
    CodeObjectInfo info;
    Status s = parse_code_object(o.data, o.size, &info);
    INFO(o.arch, ": ", s.message);
    REQUIRE(s.ok());
    return info;
}

const EmbeddedCodeObject &object_for(const EmbeddedCodeObjectSet &set, const std::string &arch) {
    for (size_t j = 0; j < set.count; j++)
        if (arch == set.objects[j].arch) return set.objects[j];
    FAIL("no embedded code object for " << arch);
    return set.objects[0];
}

uint64_t read_le(const std::vector<uint8_t> &b, uint32_t offset, uint32_t size) {
    REQUIRE(uint64_t{offset} + size <= b.size());
    uint64_t v = 0;
    for (uint32_t k = 0; k < size && k < 8; k++) v |= uint64_t{b[offset + k]} << (8 * k);
    return v;
}

template <typename T>
uint64_t bits_of(T v) {
    uint64_t u = 0;
    std::memcpy(&u, &v, sizeof(T));
    return u;
}

uint32_t align_up(uint32_t x, uint32_t a) { return a <= 1 ? x : (x + a - 1) / a * a; }

// What the test passed for each explicit argument, to compare with the recorded kernarg bytes.
struct Expected {
    enum Kind { Buffer, Scalar, Local } kind;
    uint64_t value = 0;
    uint32_t size = 0;
};

struct LaunchCase {
    std::string kernel;
    LaunchDims dims;
    std::vector<LaunchArg> args;
    std::vector<Expected> expected;
    hipStream_t stream;
};

void add_buffer(LaunchCase &c, uintptr_t address) {
    c.args.push_back(LaunchArg::buffer(reinterpret_cast<const void *>(address)));
    c.expected.push_back({Expected::Buffer, address, 8});
}
template <typename T>
void add_scalar(LaunchCase &c, T v) {
    c.args.push_back(LaunchArg::scalar(v));
    c.expected.push_back({Expected::Scalar, bits_of(v), sizeof(T)});
}
void add_local(LaunchCase &c) {
    c.args.push_back(LaunchArg::dynamic_local());
    c.expected.push_back({Expected::Local, 0, 0});
}

LaunchDims dims(uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by, uint32_t bz, uint32_t lds) {
    LaunchDims d;
    d.grid[0] = gx, d.grid[1] = gy, d.grid[2] = gz;
    d.block[0] = bx, d.block[1] = by, d.block[2] = bz;
    d.dynamic_lds_bytes = lds;
    return d;
}

// A varied set of launches over the three test kernels.
std::vector<LaunchCase> launch_cases() {
    std::vector<LaunchCase> cases;
    int serial = 0;
    auto stream = [&]() { return reinterpret_cast<hipStream_t>(static_cast<uintptr_t>(0x5000 + 16 * ++serial)); };
    const int rs[] = {1, 3, 5, 7};
    for (int t = 0; t < 4; t++) {  // dx: (tiles, batch) x 64, tile + halo of LDS
        LaunchCase c{kDx, dims(7 + t * 13, 2 + t, 1, 64, 1, 1, (64 + rs[t] - 1) * 4), {}, {}, stream()};
        add_buffer(c, 0x7f0000001000ull + 0x100 * t);
        add_buffer(c, 0x7f0000200000ull + 0x40 * t);
        add_buffer(c, 0x7f0000300000ull + 8 * t);
        add_scalar(c, int32_t(500 + 97 * t));   // dx_extent_0
        add_scalar(c, int32_t(512 + 128 * t));  // dx_stride_1
        add_scalar(c, int32_t(-3 - t));         // dy_extent_0 (any bits)
        add_scalar(c, int32_t(0x12345678 + t));  // dy_stride_1
        add_scalar(c, int32_t(rs[t]));          // R
        add_scalar(c, int32_t(rs[t] / 2));      // pad
        add_scalar(c, 1.5f + t);                // alpha
        add_scalar(c, t == 2 ? -0.0f : 0.25f * t);  // beta
        add_local(c);
        cases.push_back(c);
    }
    const uint32_t dw_blocks[] = {32, 64, 128, 256};
    for (int t = 0; t < 4; t++) {  // dw: split reduction, one float per lane of LDS
        const uint32_t b = dw_blocks[t];
        LaunchCase c{kDw, dims(3 + 5 * t, 1, 1, b, 1, 1, b * 4 + 4 * t), {}, {}, t == 3 ? nullptr : stream()};
        add_buffer(c, 0x7e0000000000ull + 0x1000 * t);
        add_buffer(c, 0x7e0000100000ull);
        add_buffer(c, 0x7e0000200000ull - 0x100 * t);
        add_scalar(c, int32_t(1000 + t));
        add_scalar(c, int32_t(4096 >> t));
        add_scalar(c, int32_t(3 + 2 * t));
        add_scalar(c, int32_t(t));
        add_scalar(c, 1.0f / (1 + t));
        add_local(c);
        cases.push_back(c);
    }
    for (int t = 0; t < 3; t++) {  // axpby: 1-, 2- and 3-D grids, no LDS
        LaunchCase c{kAxpby, dims(1000 + t, t >= 1 ? 3 : 1, t >= 2 ? 2 : 1, 256 >> t, t >= 1 ? 2 : 1, 1, 0), {}, {}, stream()};
        add_buffer(c, 0x7d0000000000ull + 4 * t);
        add_buffer(c, 0x7d0000100000ull);
        add_scalar(c, int32_t(1 << (10 + t)));
        add_scalar(c, -2.5f * t);
        add_scalar(c, 3.0f + t);
        cases.push_back(c);
    }
    for (int t = 0; t < 2; t++) {  // wide: 1024-work-item blocks (amdgpu_flat_work_group_size)
        LaunchCase c{kWide, dims(9 + t, 1, 1, 1024, 1, 1, 4096), {}, {}, stream()};
        add_buffer(c, 0x7c0000000000ull + 0x10 * t);
        add_scalar(c, int32_t(9000 + t));
        add_local(c);
        cases.push_back(c);
    }
    {  // tile16: the required 16x16 block
        LaunchCase c{kTile16, dims(4, 5, 1, 16, 16, 1, 0), {}, {}, stream()};
        add_buffer(c, 0x7b0000000000ull);
        add_scalar(c, int32_t(64));
        cases.push_back(c);
    }
    return cases;
}

// Checks one recorded launch against its case and the kernel metadata: grid, block, dynamic LDS,
// stream, and every kernarg byte (explicit args at their offsets, hidden args, zero elsewhere).
void check_recorded(const RecordingHipApi::Launch &rec, const LaunchCase &c, const KernelInfo &k) {
    INFO("kernel ", k.name, " (", k.arch, ")");
    CHECK(rec.function == c.kernel);
    for (int j = 0; j < 3; j++) {
        CHECK(rec.grid[j] == c.dims.grid[j]);
        CHECK(rec.block[j] == c.dims.block[j]);
    }
    CHECK(rec.shared_mem_bytes == c.dims.dynamic_lds_bytes);
    CHECK(rec.stream == c.stream);
    REQUIRE(rec.via_extra);
    REQUIRE(rec.extra_size == k.kernarg_segment_size);
    REQUIRE(rec.kernargs.size() == k.kernarg_segment_size);
    CHECK(rec.buffer_address % std::max<uint32_t>(k.kernarg_segment_align, 16) == 0);

    std::vector<bool> covered(rec.kernargs.size(), false);
    size_t e = 0;
    for (size_t j = 0; j < k.args.size(); j++) {
        const KernelArgInfo &m = k.args[j];
        INFO("metadata argument ", j, " ", m.value_kind, " @", m.offset, " size ", m.size);
        const uint64_t got = read_le(rec.kernargs, m.offset, m.size);
        for (uint32_t b = 0; b < m.size; b++) covered[m.offset + b] = true;
        if (!m.is_hidden()) {
            REQUIRE(e < c.expected.size());
            const Expected &x = c.expected[e++];
            switch (x.kind) {
                case Expected::Buffer:
                    CHECK(m.value_kind == "global_buffer");
                    CHECK(m.size == 8);
                    CHECK(got == x.value);
                    break;
                case Expected::Scalar:
                    CHECK(m.value_kind == "by_value");
                    CHECK(m.size == x.size);
                    CHECK(got == x.value);
                    break;
                case Expected::Local: {
                    CHECK(m.value_kind == "dynamic_shared_pointer");
                    CHECK(m.address_space == "local");
                    // Dynamic LDS starts after the static LDS, aligned to the pointee.
                    CHECK(got == align_up(k.group_segment_fixed_size, std::max<uint32_t>(m.pointee_align, 1)));
                    break;
                }
            }
            continue;
        }
        uint64_t want = 0;
        const std::string &v = m.value_kind;
        if (v == "hidden_block_count_x") want = c.dims.grid[0];
        if (v == "hidden_block_count_y") want = c.dims.grid[1];
        if (v == "hidden_block_count_z") want = c.dims.grid[2];
        if (v == "hidden_group_size_x") want = c.dims.block[0];
        if (v == "hidden_group_size_y") want = c.dims.block[1];
        if (v == "hidden_group_size_z") want = c.dims.block[2];
        if (v == "hidden_grid_dims") want = 3;
        if (v == "hidden_dynamic_lds_size") want = c.dims.dynamic_lds_bytes;
        CHECK(got == want);  // global offsets, remainders, runtime pointers, hidden_none: 0
    }
    CHECK(e == c.expected.size());
    for (size_t b = 0; b < covered.size(); b++)
        if (!covered[b]) CHECK_MESSAGE(rec.kernargs[b] == 0, "padding byte ", b, " is not zero");
}

std::shared_ptr<RecordingHipApi> fake_device(const std::string &arch) {
    auto api = std::make_shared<RecordingHipApi>();
    api->arch = arch;
    return api;
}

std::vector<uint8_t> msgpack_bytes(std::initializer_list<int> v) {
    std::vector<uint8_t> b;
    for (int x : v) b.push_back(static_cast<uint8_t>(x));
    return b;
}

}  // namespace

TEST_SUITE("amdgpu") {
TEST_CASE("msgpack decoder reads the types AMDGPU metadata uses and refuses corrupt input") {
    // {"a": [1, -1, 300, -200, 70000, 2^40], "b": true, "c": 1.5f, "d": 2.25, "e": nil,
    //  "s": "xy" (str8), "m": {"k": false}}
    std::vector<uint8_t> b = msgpack_bytes({0x87, 0xa1, 'a', 0x96, 0x01, 0xff, 0xcd, 0x01, 0x2c, 0xd1, 0xff, 0x38,
                                            0xce, 0x00, 0x01, 0x11, 0x70, 0xcf, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
                                            0x00, 0x00, 0xa1, 'b', 0xc3, 0xa1, 'c', 0xca, 0x3f, 0xc0, 0x00, 0x00,
                                            0xa1, 'd', 0xcb, 0x40, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xa1,
                                            'e', 0xc0, 0xa1, 's', 0xd9, 0x02, 'x', 'y', 0xa1, 'm', 0x81, 0xa1, 'k',
                                            0xc2});
    MsgValue v;
    Status s = decode_msgpack(b.data(), b.size(), &v);
    REQUIRE_MESSAGE(s.ok(), s.message);
    const MsgValue *a = v.find("a");
    REQUIRE(a != nullptr);
    REQUIRE(a->array.size() == 6);
    uint64_t u;
    CHECK((a->array[0].as_u64(&u) && u == 1));
    CHECK((a->array[1].type == MsgValue::Type::Int && a->array[1].i == -1));
    CHECK((a->array[2].as_u64(&u) && u == 300));
    CHECK((a->array[3].type == MsgValue::Type::Int && a->array[3].i == -200));
    CHECK((a->array[4].as_u64(&u) && u == 70000));
    CHECK((a->array[5].as_u64(&u) && u == (uint64_t{1} << 40)));
    CHECK(v.find("b")->b);
    CHECK(v.find("c")->f == 1.5);
    CHECK(v.find("d")->f == 2.25);
    CHECK(v.find("e")->type == MsgValue::Type::Nil);
    CHECK(v.find("s")->s == "xy");
    CHECK(v.find("m")->find("k")->type == MsgValue::Type::Bool);
    CHECK(v.find("zz") == nullptr);

    for (size_t n = 0; n < b.size(); n++) {  // every truncation is refused
        MsgValue t;
        CHECK_FALSE(decode_msgpack(b.data(), n, &t).ok());
    }
    b.push_back(0x00);
    CHECK_FALSE(decode_msgpack(b.data(), b.size(), &v).ok());  // trailing byte
    CHECK(decode_msgpack(b.data(), b.size(), &v, true).ok());

    std::vector<uint8_t> huge = msgpack_bytes({0xdd, 0x7f, 0xff, 0xff, 0xff, 0x01});  // array of 2^31 elements
    CHECK(decode_msgpack(huge.data(), huge.size(), &v).message.find("exceeds") != std::string::npos);
    std::vector<uint8_t> deep(100, 0x91);  // [[[[...]]]] 100 levels
    deep.push_back(0x01);
    CHECK(decode_msgpack(deep.data(), deep.size(), &v).message.find("nesting") != std::string::npos);
    std::vector<uint8_t> reserved = msgpack_bytes({0xc1});
    CHECK_FALSE(decode_msgpack(reserved.data(), reserved.size(), &v).ok());
}

TEST_CASE("target ids: processor, features and device compatibility") {
    std::string p, f;
    split_target_id("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", &p, &f);
    CHECK(p == "gfx90a");
    CHECK(f == ":sramecc+:xnack-");
    split_target_id("gfx940", &p, &f);
    CHECK(p == "gfx940");
    CHECK(f.empty());
    CHECK(target_compatible("amdgcn-amd-amdhsa--gfx90a", "gfx90a:sramecc+:xnack-"));
    CHECK(target_compatible("amdgcn-amd-amdhsa--gfx90a:xnack-", "gfx90a:sramecc+:xnack-"));
    CHECK_FALSE(target_compatible("amdgcn-amd-amdhsa--gfx90a:xnack+", "gfx90a:sramecc+:xnack-"));
    CHECK_FALSE(target_compatible("amdgcn-amd-amdhsa--gfx908", "gfx90a"));
    CHECK_FALSE(target_compatible("amdgcn-amd-amdhsa--gfx90a", "gfx90"));
}

TEST_CASE("embedded code objects parse: one per arch, kernels and arguments as compiled") {
    const EmbeddedCodeObjectSet &set = emb::convbwd_amdgpu_test_kernels;
    REQUIRE(set.count == 3);
    const char *archs[] = {"gfx908", "gfx90a", "gfx940"};
    for (size_t j = 0; j < set.count; j++) {
        CHECK(std::string(set.objects[j].arch) == archs[j]);
        const CodeObjectInfo info = parse_or_fail(set.objects[j]);
        INFO("arch ", set.objects[j].arch);
        CHECK(info.processor == set.objects[j].arch);
        CHECK(info.target == std::string("amdgcn-amd-amdhsa--") + set.objects[j].arch);
        CHECK(info.code_object_version == 4);  // clang-15 default
        CHECK(info.metadata_version[0] == 1);
        REQUIRE(info.kernels.size() == 6);
        for (const char *name : {"_at_least_one_kernel", kDx, kDw, kAxpby, kWide, kTile16}) {
            const KernelInfo *k = info.find(name);
            REQUIRE_MESSAGE(k != nullptr, name);
            CHECK(k->symbol == std::string(name) + ".kd");
            CHECK(k->arch == info.target);
            CHECK(k->wavefront_size == 64);
            CHECK(k->kernarg_segment_align >= 4);
            // clang's OpenCL default is 256 unless the kernel says otherwise.
            CHECK(k->max_flat_workgroup_size == (name == kWide ? 1024u : 256u));
            CHECK(k->has_agpr_count);  // MFMA processors report it
        }
        const KernelInfo &t16 = *info.find(kTile16);
        CHECK(t16.reqd_workgroup_size[0] == 16);
        CHECK(t16.reqd_workgroup_size[1] == 16);
        CHECK(t16.reqd_workgroup_size[2] == 1);
        CHECK(info.find(kDx)->reqd_workgroup_size[0] == 0);
        const KernelInfo &dx = *info.find(kDx);
        const std::vector<size_t> ex = dx.explicit_args();
        REQUIRE(ex.size() == 12);
        CHECK(dx.args[ex[0]].name == "_dx");
        CHECK(dx.args[ex[0]].value_kind == "global_buffer");
        CHECK(dx.args[ex[0]].address_space == "global");
        CHECK(dx.args[ex[3]].value_kind == "by_value");
        CHECK(dx.args[ex[3]].type_name == "int");
        CHECK(dx.args[ex[10]].type_name == "float");
        CHECK(dx.args[ex[11]].value_kind == "dynamic_shared_pointer");
        CHECK(dx.args[ex[11]].pointee_align == 4);
        CHECK(dx.dynamic_shared_arg() == static_cast<int>(ex[11]));
        CHECK(dx.group_segment_fixed_size == 0);
        const KernelInfo &dw = *info.find(kDw);
        CHECK(dw.group_segment_fixed_size >= 132);  // the static __local float[33]
        CHECK(dw.args[dw.dynamic_shared_arg()].pointee_align == 64);  // __local int16*
        CHECK(dynamic_lds_offset(dw) == align_up(dw.group_segment_fixed_size, 64));
        const KernelInfo &ax = *info.find(kAxpby);
        CHECK(ax.dynamic_shared_arg() == -1);
        CHECK(ax.explicit_args().size() == 5);
        CHECK(ax.args.size() > 5);  // get_global_id needs hidden global offsets
    }
    const EmbeddedCodeObjectSet &v5 = emb::convbwd_amdgpu_test_kernels_v5;
    REQUIRE(v5.count == 1);
    const CodeObjectInfo info5 = parse_or_fail(v5.objects[0]);
    CHECK(info5.code_object_version == 5);
    CHECK(info5.metadata_version[1] == 2);
    bool block_count = false;
    for (const auto &a : info5.find(kAxpby)->args) block_count |= a.value_kind == "hidden_block_count_x";
    CHECK(block_count);
}

TEST_CASE("every test kernel: no scratch/spills and >= 4 waves per SIMD on gfx90a") {
    ArchLimits gfx90a;
    REQUIRE(arch_limits("gfx90a", &gfx90a));
    for (const EmbeddedCodeObjectSet *set :
         {&emb::convbwd_amdgpu_test_kernels, &emb::convbwd_amdgpu_test_kernels_v5, &emb::convbwd_amdgpu_mfma_probe}) {
        for (size_t j = 0; j < set->count; j++) {
            const CodeObjectInfo info = parse_or_fail(set->objects[j]);
            ArchLimits own;
            REQUIRE(arch_limits(info.processor, &own));
            for (const KernelInfo &k : info.kernels) {
                const std::string who = std::string(set->name) + " " + info.processor + " kernel " + k.name;
                CHECK_MESSAGE(k.private_segment_fixed_size == 0,
                              who, ": ", k.private_segment_fixed_size, " bytes of scratch per work-item (spills)");
                CHECK_MESSAGE(k.vgpr_spill_count == 0, who, ": ", k.vgpr_spill_count, " VGPR spills");
                CHECK_MESSAGE(k.sgpr_spill_count == 0, who, ": ", k.sgpr_spill_count, " SGPR spills");
                CHECK_MESSAGE(!k.uses_dynamic_stack, who, ": uses a dynamic stack");
                const uint32_t w90a = waves_per_simd_by_vgpr(gfx90a, k.vgpr_count);
                CHECK_MESSAGE(w90a >= 4, who, ": ", k.vgpr_count, " VGPRs allow only ", w90a, " waves/SIMD on gfx90a");
                const uint32_t w = waves_per_simd_by_vgpr(own, k.vgpr_count);
                CHECK_MESSAGE(w >= 4, who, ": ", k.vgpr_count, " VGPRs allow only ", w, " waves/SIMD on ", info.processor);
            }
        }
    }
}

TEST_CASE("occupancy rule: VGPR granules, SGPRs, LDS per CU") {
    ArchLimits a, b;
    REQUIRE(arch_limits("gfx90a:sramecc+:xnack-", &a));
    REQUIRE(arch_limits("gfx908", &b));
    CHECK_FALSE(arch_limits("gfx1100", &b) == true);
    REQUIRE(arch_limits("gfx908", &b));
    // gfx90a: 512 per lane, granule 8, max 8 waves.
    CHECK(waves_per_simd_by_vgpr(a, 0) == 8);
    CHECK(waves_per_simd_by_vgpr(a, 64) == 8);
    CHECK(waves_per_simd_by_vgpr(a, 65) == 7);   // 72
    CHECK(waves_per_simd_by_vgpr(a, 128) == 4);
    CHECK(waves_per_simd_by_vgpr(a, 129) == 3);  // 136
    CHECK(waves_per_simd_by_vgpr(a, 256) == 2);
    CHECK(waves_per_simd_by_vgpr(a, 512) == 1);
    // gfx908: 256 per lane, granule 4, max 10 waves.
    CHECK(waves_per_simd_by_vgpr(b, 24) == 10);
    CHECK(waves_per_simd_by_vgpr(b, 64) == 4);
    CHECK(waves_per_simd_by_vgpr(b, 65) == 3);  // 68
    CHECK(waves_per_simd_by_sgpr(b, 80) == 10);
    CHECK(waves_per_simd_by_sgpr(b, 101) == 7);
    CHECK(waves_per_simd_by_sgpr(a, 80) == 8);

    KernelInfo k;
    k.name = "lds";
    k.vgpr_count = 32;
    k.sgpr_count = 20;
    k.wavefront_size = 64;
    k.group_segment_fixed_size = 100;
    KernelArgInfo dyn;
    dyn.value_kind = "dynamic_shared_pointer";
    dyn.size = 4;
    dyn.pointee_align = 64;
    k.args.push_back(dyn);
    CHECK(dynamic_lds_offset(k) == 128);
    CHECK(lds_bytes_per_group(k, 16384 - 128) == 16384);
    Occupancy o = estimate_occupancy(k, a, 256, 16384 - 128);  // 4 groups x 4 waves over 4 SIMDs
    CHECK(o.by_lds == 4);
    CHECK(o.waves_per_simd == 4);
    CHECK(std::string(o.limiter) == "lds");
    o = estimate_occupancy(k, a, 256, 0);  // 100 B: 655 groups -> capped
    CHECK(o.by_lds == 8);
    CHECK(o.waves_per_simd == 8);
    k.vgpr_count = 130;
    o = estimate_occupancy(k, a, 64, 0);
    CHECK(o.waves_per_simd == 3);
    CHECK(std::string(o.limiter) == "vgpr");
}

TEST_CASE("AccVGPRs: gfx90a .vgpr_count is the unified total, gfx908 keeps them apart") {
    const EmbeddedCodeObjectSet &set = emb::convbwd_amdgpu_mfma_probe;
    const CodeObjectInfo i908 = parse_or_fail(object_for(set, "gfx908"));
    const CodeObjectInfo i90a = parse_or_fail(object_for(set, "gfx90a"));
    const KernelInfo *k908 = i908.find("_kernel_mfma_probe");
    const KernelInfo *k90a = i90a.find("_kernel_mfma_probe");
    REQUIRE(k908);
    REQUIRE(k90a);
    REQUIRE(k90a->has_agpr_count);
    CHECK(k908->agpr_count >= 32);
    CHECK(k90a->agpr_count >= 32);
    CHECK(k90a->vgpr_count >= k90a->agpr_count + 4);  // align4(arch) + agpr
    CHECK(k908->vgpr_count < k908->agpr_count + 4);   // max(arch, agpr) there
    MESSAGE("mfma probe: gfx908 vgpr ", k908->vgpr_count, " agpr ", k908->agpr_count, "; gfx90a vgpr ",
            k90a->vgpr_count, " agpr ", k90a->agpr_count);
}

TEST_CASE("corrupt or truncated code objects give an error, never a crash") {
    const EmbeddedCodeObject &o = object_for(emb::convbwd_amdgpu_test_kernels, "gfx90a");
    std::vector<uint8_t> img(o.data, o.data + o.size);
    const size_t n_kernels = parse_or_fail(o).kernels.size();
    CodeObjectInfo info;
    CHECK(parse_code_object(img.data(), 0, &info).message.find("not an ELF") != std::string::npos);
    CHECK(parse_code_object(nullptr, 10, &info).code == CONVBWD_NULL_POINTER);
    for (size_t n = 0; n < img.size(); n += (n < 4096 ? 1 : 61)) {
        Status s = parse_code_object(img.data(), n, &info);
        if (s.ok()) CHECK(info.kernels.size() <= n_kernels);
        else CHECK_FALSE(s.message.empty());
    }
    uint32_t state = 12345;  // deterministic byte corruption over the whole image
    for (int trial = 0; trial < 3000; trial++) {
        std::vector<uint8_t> bad = img;
        for (int f = 0; f < 1 + trial % 4; f++) {
            state = state * 1664525u + 1013904223u;
            const size_t at = (trial < 1500 ? (state >> 8) % std::min<size_t>(bad.size(), 0x1000) : (state >> 8) % bad.size());
            bad[at] ^= static_cast<uint8_t>(1u << ((state >> 4) % 8));
        }
        Status s = parse_code_object(bad.data(), bad.size(), &info);
        if (!s.ok()) CHECK_FALSE(s.message.empty());
    }
    std::vector<uint8_t> other = img;
    other[18] = 62;  // EM_X86_64
    CHECK(parse_code_object(other.data(), other.size(), &info).message.find("EM_AMDGPU") != std::string::npos);
}

TEST_CASE("launcher picks the code object of the device's arch and loads it once") {
    const EmbeddedCodeObjectSet &set = emb::convbwd_amdgpu_test_kernels;
    for (const char *dev : {"gfx908:sramecc+:xnack-", "gfx90a:sramecc+:xnack-", "gfx940:sramecc+:xnack-", "gfx90a"}) {
        auto api = fake_device(dev);
        std::unique_ptr<Launcher> l;
        Status s = Launcher::create(api, set, &l);
        REQUIRE_MESSAGE(s.ok(), s.message);
        std::string proc, features;
        split_target_id(dev, &proc, &features);
        CHECK(l->image_arch() == proc);
        CHECK(l->device_arch() == dev);
        CHECK(l->code_object().processor == proc);
        CHECK(api->loads == 1);
        CHECK(api->loaded_image == object_for(set, proc).data);
        l.reset();
        CHECK(api->unloads == 1);
    }
    auto api = fake_device("gfx1100");
    std::unique_ptr<Launcher> l;
    Status s = Launcher::create(api, set, &l);
    CHECK(s.code == CONVBWD_NOT_SUPPORTED);
    CHECK(s.message.find("gfx1100") != std::string::npos);
    CHECK(s.message.find("gfx908, gfx90a, gfx940") != std::string::npos);
    CHECK(api->loads == 0);
    CHECK(l == nullptr);

    api = fake_device("gfx90a");
    api->device_count = 0;
    s = Launcher::create(api, set, &l);
    CHECK(s.code == CONVBWD_DEVICE_ERROR);
    CHECK(s.message.find("no AMD GPU") != std::string::npos);
    CHECK(s.message.find("hipErrorNoDevice") != std::string::npos);

    api = fake_device("gfx90a");
    api->fail_load = kHipErrorInvalidImage;
    s = Launcher::create(api, set, &l);
    CHECK(s.code == CONVBWD_DEVICE_ERROR);
    CHECK(s.message.find("hipModuleLoadData") != std::string::npos);
    CHECK(s.message.find("hipErrorInvalidImage") != std::string::npos);
}

TEST_CASE("recorded launches: grid, block, dynamic LDS and kernarg bytes match metadata and values") {
    for (const EmbeddedCodeObjectSet *set : {&emb::convbwd_amdgpu_test_kernels, &emb::convbwd_amdgpu_test_kernels_v5}) {
        for (size_t j = 0; j < set->count; j++) {
            const std::string arch = set->objects[j].arch;
            INFO(set->name, " on ", arch);
            auto api = fake_device(arch + ":sramecc+:xnack-");
            std::unique_ptr<Launcher> l;
            Status s = Launcher::create(api, *set, &l);
            REQUIRE_MESSAGE(s.ok(), s.message);
            const std::vector<LaunchCase> cases = launch_cases();
            for (const LaunchCase &c : cases) {
                s = l->launch(c.kernel, c.dims.grid, c.dims.block, c.dims.dynamic_lds_bytes, c.args, c.stream);
                REQUIRE_MESSAGE(s.ok(), c.kernel, ": ", s.message);
            }
            REQUIRE(api->launches.size() == cases.size());
            for (size_t n = 0; n < cases.size(); n++) check_recorded(api->launches[n], cases[n], *l->kernel(cases[n].kernel));
            CHECK(api->loads == 1);
            CHECK(api->functions_requested.size() == 5);  // one lookup per kernel
        }
    }
}

TEST_CASE("launches from several threads are all recorded with their own kernargs") {
    auto api = fake_device("gfx90a");
    std::unique_ptr<Launcher> l;
    REQUIRE(Launcher::create(api, emb::convbwd_amdgpu_test_kernels, &l).ok());
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 50; i++) {
                LaunchDims d = dims(1 + i, 1, 1, 64, 1, 1, 0);
                std::vector<LaunchArg> a = {LaunchArg::buffer_address(0x1000 * (t + 1)), LaunchArg::buffer_address(0x10),
                                            LaunchArg::scalar(int32_t(t * 1000 + i)), LaunchArg::scalar(1.0f),
                                            LaunchArg::scalar(2.0f)};
                if (!l->launch(kAxpby, d, a, nullptr).ok()) failures++;
            }
        });
    for (auto &th : threads) th.join();
    CHECK(failures == 0);
    const auto launches = api->launches_copy();
    REQUIRE(launches.size() == 200);
    const KernelInfo &k = *l->kernel(kAxpby);
    const uint32_t n_off = k.args[k.explicit_args()[2]].offset;
    const uint32_t y_off = k.args[k.explicit_args()[0]].offset;
    std::vector<int> seen(4000, 0);
    for (const auto &r : launches) {
        const uint64_t n = read_le(r.kernargs, n_off, 4);
        const uint64_t t = n / 1000;
        REQUIRE(t < 4);
        CHECK(read_le(r.kernargs, y_off, 8) == 0x1000 * (t + 1));
        CHECK(r.grid[0] == 1 + n % 1000);
        seen[n]++;
    }
    for (int t = 0; t < 4; t++)
        for (int i = 0; i < 50; i++) CHECK(seen[t * 1000 + i] == 1);
    CHECK(api->functions_requested.size() == 1);
}

TEST_CASE("wrong arguments and launch shapes are refused with a message naming kernel and argument") {
    auto api = fake_device("gfx90a");
    std::unique_ptr<Launcher> l;
    REQUIRE(Launcher::create(api, emb::convbwd_amdgpu_test_kernels, &l).ok());
    const std::vector<LaunchCase> cases = launch_cases();
    const LaunchCase &dx = cases[0];
    auto case_of = [&](const char *kernel) -> const LaunchCase & {
        for (const LaunchCase &c : cases)
            if (c.kernel == kernel) return c;
        FAIL("no case for " << kernel);
        return cases[0];
    };
    const LaunchCase &ax = case_of(kAxpby);

    auto refused = [&](const LaunchCase &c, const LaunchDims &d, const std::vector<LaunchArg> &a,
                       std::initializer_list<const char *> needles) {
        const size_t before = api->launches.size();
        Status s = l->launch(c.kernel, d, a, c.stream);
        CHECK_FALSE(s.ok());
        CHECK(s.code == CONVBWD_BAD_PARAM);
        for (const char *n : needles) CHECK_MESSAGE(s.message.find(n) != std::string::npos, "'", n, "' not in: ", s.message);
        CHECK(api->launches.size() == before);  // nothing reached HIP
    };

    std::vector<LaunchArg> a = dx.args;
    a.pop_back();
    refused(dx, dx.dims, a, {kDx, "11 arguments given", "lists 12"});
    a = dx.args;
    a.push_back(LaunchArg::scalar(1));
    refused(dx, dx.dims, a, {kDx, "13 arguments given"});
    a = dx.args;
    a[3] = LaunchArg::scalar(int64_t(5));
    refused(dx, dx.dims, a, {kDx, "argument 3", "'_dx_extent_0'", "4 bytes", "got 8 bytes"});
    a = dx.args;
    a[10] = LaunchArg::scalar(1.0);  // double for float beta
    refused(dx, dx.dims, a, {"argument 10", "'_beta'", "got 8 bytes"});
    a = dx.args;
    a[1] = LaunchArg::scalar(int32_t(0));
    refused(dx, dx.dims, a, {"argument 1", "global_buffer", "got a scalar"});
    a = dx.args;
    a[5] = LaunchArg::buffer(nullptr);
    refused(dx, dx.dims, a, {"argument 5", "by_value", "got a buffer"});
    a = dx.args;
    a[11] = LaunchArg::scalar(int32_t(256));
    refused(dx, dx.dims, a, {"argument 11", "dynamic_shared_pointer", "got a scalar"});
    a = dx.args;
    std::vector<uint8_t> big(17, 0);
    a[4] = LaunchArg::scalar_bytes(big.data(), big.size());
    refused(dx, dx.dims, a, {"argument 4", "got 0 bytes"});

    LaunchDims d = dx.dims;
    d.block[0] = 512;
    refused(dx, d, dx.args, {kDx, "512", "max_flat_workgroup_size 256"});
    d = dx.dims;
    d.block[0] = 64, d.block[1] = 2, d.block[2] = 4;
    refused(dx, d, dx.args, {"512 work-items"});
    d = dx.dims;
    d.grid[2] = 0;
    refused(dx, d, dx.args, {"grid.z is 0"});
    d = dx.dims;
    d.grid[0] = 1u << 31;
    d.block[0] = 4;
    refused(dx, d, dx.args, {"exceeds 2^32-1"});
    d = dx.dims;
    d.dynamic_lds_bytes = 65536 - 4 + 1;  // + 4-byte runtime slot
    refused(dx, d, dx.args, {"LDS per work-group", "exceeds 65536"});
    d.dynamic_lds_bytes = 65536 - 4;  // exactly 64 KiB with the slot: accepted
    CHECK(l->launch(dx.kernel, d, dx.args, dx.stream).ok());
    d = ax.dims;
    d.dynamic_lds_bytes = 16;
    refused(ax, d, ax.args, {kAxpby, "no dynamic_shared_pointer"});
    const LaunchCase &wide = case_of(kWide);
    d = wide.dims;
    d.block[0] = 2048;
    refused(wide, d, wide.args, {kWide, "max_flat_workgroup_size 1024"});
    const LaunchCase &t16 = case_of(kTile16);
    d = t16.dims;
    d.block[0] = 32, d.block[1] = 8;
    refused(t16, d, t16.args, {kTile16, "block 32x8x1 differs from .reqd_workgroup_size 16x16x1"});

    Status s = l->launch("_kernel_missing", dx.dims, dx.args, nullptr);
    CHECK(s.code == CONVBWD_BAD_PARAM);
    CHECK(s.message.find("_kernel_missing") != std::string::npos);
    CHECK(s.message.find(kAxpby) != std::string::npos);  // lists what exists

    api->fail_launch = kHipErrorLaunchFailure;
    s = l->launch(ax.kernel, ax.dims, ax.args, ax.stream);
    CHECK(s.code == CONVBWD_DEVICE_ERROR);
    CHECK(s.message.find("hipModuleLaunchKernel") != std::string::npos);
    CHECK(s.message.find("hipErrorLaunchFailure") != std::string::npos);
    CHECK(s.message.find(kAxpby) != std::string::npos);
}

TEST_CASE("real HIP (libamdhip64) without an AMD GPU: a clear device error") {
    Status load;
    std::shared_ptr<HipApi> api = make_real_hip_api(&load);
    if (!api) {
        CHECK(load.code == CONVBWD_DEVICE_ERROR);
        MESSAGE("[SKIP] ", load.message);
        return;
    }
    std::unique_ptr<Launcher> l;
    Status s = Launcher::create(api, emb::convbwd_amdgpu_test_kernels, &l);
    if (s.ok()) {
        // An AMD GPU of an embedded arch is present: run axpby for real.
        const int n = 1000;
        std::vector<float> x(n), y(n), out(n);
        for (int i = 0; i < n; i++) x[i] = float(i), y[i] = float(2 * i);
        void *dx = nullptr, *dy = nullptr;
        REQUIRE(api->memAlloc(&dx, n * sizeof(float)) == kHipSuccess);
        REQUIRE(api->memAlloc(&dy, n * sizeof(float)) == kHipSuccess);
        REQUIRE(api->memcpyHtoD(dx, x.data(), n * sizeof(float)) == kHipSuccess);
        REQUIRE(api->memcpyHtoD(dy, y.data(), n * sizeof(float)) == kHipSuccess);
        s = l->launch(kAxpby, dims((n + 255) / 256, 1, 1, 256, 1, 1, 0),
                      {LaunchArg::buffer(dy), LaunchArg::buffer(dx), LaunchArg::scalar(n), LaunchArg::scalar(3.0f),
                       LaunchArg::scalar(0.5f)},
                      nullptr);
        REQUIRE_MESSAGE(s.ok(), s.message);
        REQUIRE(api->streamSynchronize(nullptr) == kHipSuccess);
        REQUIRE(api->memcpyDtoH(out.data(), dy, n * sizeof(float)) == kHipSuccess);
        for (int i = 0; i < n; i++) CHECK(out[i] == 3.0f * x[i] + 0.5f * y[i]);
        api->memFree(dx);
        api->memFree(dy);
        MESSAGE("ran on an AMD GPU: ", l->device_arch());
        return;
    }
    MESSAGE("real HIP: ", s.message);
    CHECK(l == nullptr);
    CHECK((s.code == CONVBWD_DEVICE_ERROR || s.code == CONVBWD_NOT_SUPPORTED));
    if (s.code == CONVBWD_DEVICE_ERROR) {
        CHECK(s.message.find("convbwd_amdgpu_test_kernels") != std::string::npos);
        CHECK(s.message.find("hip") != std::string::npos);
    }
    // Direct calls without a device fail cleanly too.
    hipModule_t m = nullptr;
    const EmbeddedCodeObject &o = object_for(emb::convbwd_amdgpu_test_kernels, "gfx90a");
    const int e = api->moduleLoadData(&m, o.data);
    if (e != kHipSuccess) {
        CHECK_FALSE(api->errorString(e).empty());
    } else {
        api->moduleUnload(m);
    }
}
}
