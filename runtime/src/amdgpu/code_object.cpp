// AMDGPU code object reader: ELF64 notes -> MessagePack -> KernelInfo. See code_object.h.
#include "runtime/src/amdgpu/code_object.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace convbwd::amdgpu {

namespace {

// ------------------------------------------------------------------------------------------
// Little-endian readers over a bounds-checked byte range.
// ------------------------------------------------------------------------------------------
struct Bytes {
    const uint8_t *data = nullptr;
    size_t size = 0;

    bool has(uint64_t offset, uint64_t len) const { return offset <= size && len <= size - offset; }
    template <typename T>
    T le(uint64_t offset) const {  // caller checked has(offset, sizeof(T))
        T v = 0;
        for (size_t k = 0; k < sizeof(T); k++) v |= static_cast<T>(data[offset + k]) << (8 * k);
        return v;
    }
};

uint64_t be_read(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int k = 0; k < n; k++) v = (v << 8) | p[k];
    return v;
}

// ------------------------------------------------------------------------------------------
// MessagePack decoder
// ------------------------------------------------------------------------------------------
constexpr int kMaxDepth = 64;

struct MsgReader {
    const uint8_t *p;
    const uint8_t *end;
    std::string error;

    bool fail(const std::string &what) {
        if (error.empty()) error = what;
        return false;
    }
    size_t left() const { return static_cast<size_t>(end - p); }
    bool take(size_t n, const uint8_t **out) {
        if (left() < n) return fail("msgpack: truncated (need " + std::to_string(n) + " bytes, have " +
                                    std::to_string(left()) + ")");
        *out = p;
        p += n;
        return true;
    }
    bool uint_be(int n, uint64_t *v) {
        const uint8_t *q;
        if (!take(static_cast<size_t>(n), &q)) return false;
        *v = be_read(q, n);
        return true;
    }
    bool bytes(size_t n, std::string *s) {
        const uint8_t *q;
        if (!take(n, &q)) return false;
        s->assign(reinterpret_cast<const char *>(q), n);
        return true;
    }
    // Every element takes at least one byte: a count above the bytes left is corrupt (and would
    // otherwise make us reserve huge vectors).
    bool count_ok(uint64_t n, uint64_t min_bytes_each) {
        if (n > left() / min_bytes_each) return fail("msgpack: container count " + std::to_string(n) + " exceeds data");
        return true;
    }

    bool value(MsgValue *v, int depth) {
        if (depth > kMaxDepth) return fail("msgpack: nesting deeper than " + std::to_string(kMaxDepth));
        const uint8_t *q;
        if (!take(1, &q)) return false;
        const uint8_t t = *q;
        uint64_t n = 0;
        if (t <= 0x7f) {
            v->type = MsgValue::Type::UInt;
            v->u = t;
            return true;
        }
        if (t >= 0xe0) {
            v->type = MsgValue::Type::Int;
            v->i = static_cast<int8_t>(t);
            return true;
        }
        if ((t & 0xf0) == 0x80) return map(v, t & 0x0f, depth);
        if ((t & 0xf0) == 0x90) return array(v, t & 0x0f, depth);
        if ((t & 0xe0) == 0xa0) {
            v->type = MsgValue::Type::Str;
            return bytes(t & 0x1f, &v->s);
        }
        switch (t) {
            case 0xc0: v->type = MsgValue::Type::Nil; return true;
            case 0xc2: v->type = MsgValue::Type::Bool; v->b = false; return true;
            case 0xc3: v->type = MsgValue::Type::Bool; v->b = true; return true;
            case 0xc4: case 0xc5: case 0xc6:  // bin 8/16/32
                if (!uint_be(1 << (t - 0xc4), &n)) return false;
                v->type = MsgValue::Type::Bin;
                return bytes(static_cast<size_t>(n), &v->s);
            case 0xc7: case 0xc8: case 0xc9: {  // ext 8/16/32: length, type byte, payload
                if (!uint_be(1 << (t - 0xc7), &n)) return false;
                const uint8_t *ty;
                if (!take(1, &ty)) return false;
                v->type = MsgValue::Type::Ext;
                return bytes(static_cast<size_t>(n), &v->s);
            }
            case 0xca: {
                if (!uint_be(4, &n)) return false;
                uint32_t bits = static_cast<uint32_t>(n);
                float f;
                std::memcpy(&f, &bits, 4);
                v->type = MsgValue::Type::Float;
                v->f = f;
                return true;
            }
            case 0xcb: {
                if (!uint_be(8, &n)) return false;
                double d;
                std::memcpy(&d, &n, 8);
                v->type = MsgValue::Type::Float;
                v->f = d;
                return true;
            }
            case 0xcc: case 0xcd: case 0xce: case 0xcf:  // uint 8/16/32/64
                if (!uint_be(1 << (t - 0xcc), &n)) return false;
                v->type = MsgValue::Type::UInt;
                v->u = n;
                return true;
            case 0xd0: case 0xd1: case 0xd2: case 0xd3: {  // int 8/16/32/64
                const int w = 1 << (t - 0xd0);
                if (!uint_be(w, &n)) return false;
                int64_t s;
                if (w == 8) {
                    std::memcpy(&s, &n, 8);
                } else {
                    const uint64_t sign = uint64_t{1} << (8 * w - 1);
                    s = static_cast<int64_t>(n ^ sign) - static_cast<int64_t>(sign);
                }
                if (s >= 0) {
                    v->type = MsgValue::Type::UInt;
                    v->u = static_cast<uint64_t>(s);
                } else {
                    v->type = MsgValue::Type::Int;
                    v->i = s;
                }
                return true;
            }
            case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8: {  // fixext 1/2/4/8/16
                const uint8_t *ty;
                if (!take(1, &ty)) return false;
                v->type = MsgValue::Type::Ext;
                return bytes(size_t{1} << (t - 0xd4), &v->s);
            }
            case 0xd9: case 0xda: case 0xdb:  // str 8/16/32
                if (!uint_be(1 << (t - 0xd9), &n)) return false;
                v->type = MsgValue::Type::Str;
                return bytes(static_cast<size_t>(n), &v->s);
            case 0xdc: case 0xdd:  // array 16/32
                if (!uint_be(t == 0xdc ? 2 : 4, &n)) return false;
                return array(v, n, depth);
            case 0xde: case 0xdf:  // map 16/32
                if (!uint_be(t == 0xde ? 2 : 4, &n)) return false;
                return map(v, n, depth);
            default:
                return fail("msgpack: reserved type byte 0xc1");
        }
    }
    bool array(MsgValue *v, uint64_t n, int depth) {
        if (!count_ok(n, 1)) return false;
        v->type = MsgValue::Type::Array;
        v->array.resize(static_cast<size_t>(n));
        for (auto &e : v->array)
            if (!value(&e, depth + 1)) return false;
        return true;
    }
    bool map(MsgValue *v, uint64_t n, int depth) {
        if (!count_ok(n, 2)) return false;
        v->type = MsgValue::Type::Map;
        v->map.resize(static_cast<size_t>(n));
        for (auto &kv : v->map)
            if (!value(&kv.first, depth + 1) || !value(&kv.second, depth + 1)) return false;
        return true;
    }
};

// ------------------------------------------------------------------------------------------
// ELF
// ------------------------------------------------------------------------------------------
constexpr uint16_t kEmAmdgpu = 224;
constexpr uint8_t kOsAbiAmdgpuHsa = 64;
constexpr uint32_t kPtNote = 4;
constexpr uint32_t kShtNote = 7;
constexpr uint32_t kNtAmdgpuMetadata = 32;

// Scans one note area; sets *found to the NT_AMDGPU_METADATA descriptor.
Status scan_notes(const Bytes &elf, uint64_t offset, uint64_t size, uint64_t align, Bytes *found, bool *have) {
    if (!elf.has(offset, size)) return error(CONVBWD_BAD_PARAM, "code object: note area outside the image");
    const uint64_t a = align == 8 ? 8 : 4;  // gABI: 4 for ELF32-style notes; 8 if the area says so
    uint64_t pos = offset;
    const uint64_t end = offset + size;
    while (pos + 12 <= end) {
        const uint32_t namesz = elf.le<uint32_t>(pos);
        const uint32_t descsz = elf.le<uint32_t>(pos + 4);
        const uint32_t type = elf.le<uint32_t>(pos + 8);
        const uint64_t name_at = pos + 12;
        const uint64_t desc_at = name_at + ((uint64_t{namesz} + a - 1) / a) * a;
        const uint64_t next = desc_at + ((uint64_t{descsz} + a - 1) / a) * a;
        if (desc_at > end || desc_at + descsz > end)
            return error(CONVBWD_BAD_PARAM, "code object: note entry runs past its area");
        const bool owner_amdgpu = namesz >= 6 && std::memcmp(elf.data + name_at, "AMDGPU", 6) == 0 &&
                                  (namesz == 6 || elf.data[name_at + 6] == 0);
        if (owner_amdgpu && type == kNtAmdgpuMetadata) {
            found->data = elf.data + desc_at;
            found->size = descsz;
            *have = true;
            return ok_status();
        }
        if (next <= pos) break;
        pos = next;
    }
    return ok_status();
}

Status find_metadata_note(const Bytes &elf, Bytes *note, uint32_t *co_version) {
    if (elf.size < 64 || std::memcmp(elf.data, "\x7f" "ELF", 4) != 0)
        return error(CONVBWD_BAD_PARAM, "code object: not an ELF image");
    if (elf.data[4] != 2 || elf.data[5] != 1)
        return error(CONVBWD_BAD_PARAM, "code object: not a little-endian ELF64 image");
    if (elf.le<uint16_t>(18) != kEmAmdgpu)
        return error(CONVBWD_BAD_PARAM, "code object: ELF machine " + std::to_string(elf.le<uint16_t>(18)) +
                                            " is not EM_AMDGPU (224)");
    *co_version = 0;
    if (elf.data[7] == kOsAbiAmdgpuHsa) {
        // ELFABIVERSION_AMDGPU_HSA_V3 = 1 ... V6 = 4
        const uint8_t abi = elf.data[8];
        if (abi >= 1 && abi <= 4) *co_version = abi + 2u;
    }
    bool have = false;
    const uint64_t phoff = elf.le<uint64_t>(32);
    const uint16_t phentsize = elf.le<uint16_t>(54);
    const uint16_t phnum = elf.le<uint16_t>(56);
    if (phoff != 0 && phnum != 0) {
        if (phentsize < 56 || !elf.has(phoff, uint64_t{phentsize} * phnum))
            return error(CONVBWD_BAD_PARAM, "code object: program headers outside the image");
        for (uint16_t k = 0; k < phnum && !have; k++) {
            const uint64_t ph = phoff + uint64_t{k} * phentsize;
            if (elf.le<uint32_t>(ph) != kPtNote) continue;
            Status s = scan_notes(elf, elf.le<uint64_t>(ph + 8), elf.le<uint64_t>(ph + 32), elf.le<uint64_t>(ph + 48),
                                  note, &have);
            if (!s.ok()) return s;
        }
    }
    const uint64_t shoff = elf.le<uint64_t>(40);
    const uint16_t shentsize = elf.le<uint16_t>(58);
    const uint16_t shnum = elf.le<uint16_t>(60);
    if (!have && shoff != 0 && shnum != 0) {
        if (shentsize < 64 || !elf.has(shoff, uint64_t{shentsize} * shnum))
            return error(CONVBWD_BAD_PARAM, "code object: section headers outside the image");
        for (uint16_t k = 0; k < shnum && !have; k++) {
            const uint64_t sh = shoff + uint64_t{k} * shentsize;
            if (elf.le<uint32_t>(sh + 4) != kShtNote) continue;
            Status s = scan_notes(elf, elf.le<uint64_t>(sh + 24), elf.le<uint64_t>(sh + 32), elf.le<uint64_t>(sh + 48),
                                  note, &have);
            if (!s.ok()) return s;
        }
    }
    if (!have)
        return error(CONVBWD_BAD_PARAM,
                     "code object: no NT_AMDGPU_METADATA note (code object v2 or not an HSA code object)");
    return ok_status();
}

// ------------------------------------------------------------------------------------------
// Metadata -> KernelInfo
// ------------------------------------------------------------------------------------------
struct FieldReader {
    const MsgValue &map;
    std::string where;  // "kernel 'k'" or "kernel 'k' argument 3"
    Status status;

    bool u32(const char *key, uint32_t *out, bool required) {
        const MsgValue *v = map.find(key);
        if (!v) {
            if (required && status.ok())
                status = error(CONVBWD_BAD_PARAM, "code object metadata: " + where + " lacks required key " + key);
            return false;
        }
        uint64_t x;
        if (!v->as_u64(&x) || x > std::numeric_limits<uint32_t>::max()) {
            if (status.ok())
                status = error(CONVBWD_BAD_PARAM,
                               "code object metadata: " + where + " key " + key + " is not a 32-bit unsigned integer");
            return false;
        }
        *out = static_cast<uint32_t>(x);
        return true;
    }
    bool str(const char *key, std::string *out, bool required) {
        const MsgValue *v = map.find(key);
        if (!v) {
            if (required && status.ok())
                status = error(CONVBWD_BAD_PARAM, "code object metadata: " + where + " lacks required key " + key);
            return false;
        }
        if (v->type != MsgValue::Type::Str) {
            if (status.ok())
                status = error(CONVBWD_BAD_PARAM, "code object metadata: " + where + " key " + key + " is not a string");
            return false;
        }
        *out = v->s;
        return true;
    }
    void boolean(const char *key, bool *out) {
        const MsgValue *v = map.find(key);
        if (v && v->type == MsgValue::Type::Bool) *out = v->b;
    }
};

bool is_pow2(uint32_t x) { return x != 0 && (x & (x - 1)) == 0; }

Status parse_kernel(const MsgValue &km, const std::string &target, size_t index, KernelInfo *k) {
    if (km.type != MsgValue::Type::Map)
        return error(CONVBWD_BAD_PARAM, "code object metadata: amdhsa.kernels[" + std::to_string(index) + "] is not a map");
    FieldReader r{km, "amdhsa.kernels[" + std::to_string(index) + "]", {}};
    r.str(".name", &k->name, true);
    if (!r.status.ok()) return r.status;
    r.where = "kernel '" + k->name + "'";
    k->arch = target;
    r.str(".symbol", &k->symbol, true);
    r.u32(".vgpr_count", &k->vgpr_count, true);
    k->has_agpr_count = r.u32(".agpr_count", &k->agpr_count, false);
    r.u32(".sgpr_count", &k->sgpr_count, true);
    r.u32(".vgpr_spill_count", &k->vgpr_spill_count, false);
    r.u32(".sgpr_spill_count", &k->sgpr_spill_count, false);
    r.u32(".group_segment_fixed_size", &k->group_segment_fixed_size, true);
    r.u32(".private_segment_fixed_size", &k->private_segment_fixed_size, true);
    r.u32(".kernarg_segment_size", &k->kernarg_segment_size, true);
    r.u32(".kernarg_segment_align", &k->kernarg_segment_align, true);
    r.u32(".wavefront_size", &k->wavefront_size, true);
    r.u32(".max_flat_workgroup_size", &k->max_flat_workgroup_size, true);
    r.boolean(".uses_dynamic_stack", &k->uses_dynamic_stack);
    if (!r.status.ok()) return r.status;
    if (!is_pow2(k->kernarg_segment_align))
        return error(CONVBWD_BAD_PARAM, "code object metadata: " + r.where + " .kernarg_segment_align " +
                                            std::to_string(k->kernarg_segment_align) + " is not a power of 2");
    if (k->wavefront_size != 32 && k->wavefront_size != 64)
        return error(CONVBWD_BAD_PARAM, "code object metadata: " + r.where + " .wavefront_size " +
                                            std::to_string(k->wavefront_size) + " is neither 32 nor 64");
    if (const MsgValue *rw = km.find(".reqd_workgroup_size")) {
        uint64_t d[3];
        if (rw->type != MsgValue::Type::Array || rw->array.size() != 3 || !rw->array[0].as_u64(&d[0]) ||
            !rw->array[1].as_u64(&d[1]) || !rw->array[2].as_u64(&d[2]) || d[0] > 1024 || d[1] > 1024 || d[2] > 1024)
            return error(CONVBWD_BAD_PARAM, "code object metadata: " + r.where + " .reqd_workgroup_size is malformed");
        for (int j = 0; j < 3; j++) k->reqd_workgroup_size[j] = static_cast<uint32_t>(d[j]);
    }
    const MsgValue *args = km.find(".args");
    if (args && args->type != MsgValue::Type::Array)
        return error(CONVBWD_BAD_PARAM, "code object metadata: " + r.where + " .args is not an array");
    if (args) {
        k->args.resize(args->array.size());
        for (size_t j = 0; j < args->array.size(); j++) {
            const MsgValue &am = args->array[j];
            const std::string awhere = r.where + " argument " + std::to_string(j);
            if (am.type != MsgValue::Type::Map)
                return error(CONVBWD_BAD_PARAM, "code object metadata: " + awhere + " is not a map");
            KernelArgInfo &a = k->args[j];
            FieldReader ar{am, awhere, {}};
            ar.str(".name", &a.name, false);
            ar.str(".type_name", &a.type_name, false);
            ar.u32(".offset", &a.offset, true);
            ar.u32(".size", &a.size, true);
            ar.str(".value_kind", &a.value_kind, true);
            ar.str(".address_space", &a.address_space, false);
            ar.u32(".pointee_align", &a.pointee_align, false);
            if (!ar.status.ok()) return ar.status;
            if (uint64_t{a.offset} + a.size > k->kernarg_segment_size)
                return error(CONVBWD_BAD_PARAM, "code object metadata: " + awhere + " (offset " + std::to_string(a.offset) +
                                                    ", size " + std::to_string(a.size) +
                                                    ") lies outside .kernarg_segment_size " +
                                                    std::to_string(k->kernarg_segment_size));
            if (a.pointee_align != 0 && !is_pow2(a.pointee_align))
                return error(CONVBWD_BAD_PARAM, "code object metadata: " + awhere + " .pointee_align is not a power of 2");
        }
    }
    return ok_status();
}

uint32_t align_up(uint32_t x, uint32_t a) { return a <= 1 ? x : (x + a - 1) / a * a; }

}  // namespace

// ------------------------------------------------------------------------------------------
// Public API
// ------------------------------------------------------------------------------------------
bool MsgValue::as_u64(uint64_t *out) const {
    if (type == Type::UInt) {
        *out = u;
        return true;
    }
    if (type == Type::Int && i >= 0) {
        *out = static_cast<uint64_t>(i);
        return true;
    }
    return false;
}

const MsgValue *MsgValue::find(std::string_view key) const {
    if (type != Type::Map) return nullptr;
    for (const auto &kv : map)
        if (kv.first.type == Type::Str && kv.first.s == key) return &kv.second;
    return nullptr;
}

Status decode_msgpack(const uint8_t *data, size_t size, MsgValue *out, bool allow_trailing) {
    MsgReader r{data, data + size, {}};
    *out = MsgValue{};
    if (!r.value(out, 0)) return error(CONVBWD_BAD_PARAM, r.error);
    if (!allow_trailing && r.p != r.end)
        return error(CONVBWD_BAD_PARAM, "msgpack: " + std::to_string(r.left()) + " trailing bytes after the object");
    return ok_status();
}

std::vector<size_t> KernelInfo::explicit_args() const {
    std::vector<size_t> idx;
    for (size_t j = 0; j < args.size(); j++)
        if (!args[j].is_hidden()) idx.push_back(j);
    return idx;
}

int KernelInfo::dynamic_shared_arg() const {
    for (size_t j = 0; j < args.size(); j++)
        if (args[j].value_kind == "dynamic_shared_pointer") return static_cast<int>(j);
    return -1;
}

const KernelInfo *CodeObjectInfo::find(std::string_view kernel_name) const {
    for (const auto &k : kernels)
        if (k.name == kernel_name) return &k;
    return nullptr;
}

void split_target_id(std::string_view target, std::string *processor, std::string *features) {
    std::string_view id = target;
    const size_t dd = id.rfind("--");
    if (dd != std::string_view::npos) id = id.substr(dd + 2);
    const size_t colon = id.find(':');
    *processor = std::string(id.substr(0, colon));
    *features = colon == std::string_view::npos ? std::string() : std::string(id.substr(colon));
}

bool target_compatible(std::string_view code, std::string_view device) {
    std::string cp, cf, dp, df;
    split_target_id(code, &cp, &cf);
    split_target_id(device, &dp, &df);
    if (cp.empty() || cp != dp) return false;
    // Features look like ":sramecc+:xnack-". A pinned +/- in the code object must not be the
    // opposite of the device's setting; a feature the code object leaves out means "any".
    auto sign_of = [](const std::string &features, const std::string &name) -> char {
        size_t pos = 0;
        while ((pos = features.find(':', pos)) != std::string::npos) {
            const size_t start = pos + 1;
            size_t stop = features.find(':', start);
            if (stop == std::string::npos) stop = features.size();
            const std::string f = features.substr(start, stop - start);
            if (!f.empty() && (f.back() == '+' || f.back() == '-') && f.compare(0, f.size() - 1, name) == 0)
                return f.back();
            pos = stop;
        }
        return 0;
    };
    size_t pos = 0;
    while ((pos = cf.find(':', pos)) != std::string::npos) {
        const size_t start = pos + 1;
        size_t stop = cf.find(':', start);
        if (stop == std::string::npos) stop = cf.size();
        const std::string f = cf.substr(start, stop - start);
        if (!f.empty() && (f.back() == '+' || f.back() == '-')) {
            const char dev = sign_of(df, f.substr(0, f.size() - 1));
            if (dev != 0 && dev != f.back()) return false;
        }
        pos = stop;
    }
    return true;
}

Status parse_code_object(const void *image, size_t size, CodeObjectInfo *out) {
    *out = CodeObjectInfo{};
    if (image == nullptr) return error(CONVBWD_NULL_POINTER, "code object: image is NULL");
    const Bytes elf{static_cast<const uint8_t *>(image), size};
    Bytes note;
    Status s = find_metadata_note(elf, &note, &out->code_object_version);
    if (!s.ok()) return s;
    MsgValue md;
    s = decode_msgpack(note.data, note.size, &md, /*allow_trailing=*/true);  // descriptor may be padded
    if (!s.ok()) return error(s.code, "code object metadata: " + s.message);
    if (md.type != MsgValue::Type::Map) return error(CONVBWD_BAD_PARAM, "code object metadata: top level is not a map");

    const MsgValue *target = md.find("amdhsa.target");
    if (!target || target->type != MsgValue::Type::Str)
        return error(CONVBWD_BAD_PARAM, "code object metadata: no amdhsa.target string");
    out->target = target->s;
    split_target_id(out->target, &out->processor, &out->features);
    if (const MsgValue *ver = md.find("amdhsa.version")) {
        uint64_t a, b;
        if (ver->type == MsgValue::Type::Array && ver->array.size() == 2 && ver->array[0].as_u64(&a) &&
            ver->array[1].as_u64(&b) && a < 1000 && b < 1000) {
            out->metadata_version[0] = static_cast<uint32_t>(a);
            out->metadata_version[1] = static_cast<uint32_t>(b);
        }
    }
    const MsgValue *kernels = md.find("amdhsa.kernels");
    if (!kernels || kernels->type != MsgValue::Type::Array)
        return error(CONVBWD_BAD_PARAM, "code object metadata: no amdhsa.kernels array");
    out->kernels.resize(kernels->array.size());
    for (size_t j = 0; j < kernels->array.size(); j++) {
        s = parse_kernel(kernels->array[j], out->target, j, &out->kernels[j]);
        if (!s.ok()) {
            out->kernels.clear();
            return s;
        }
    }
    return ok_status();
}

// ------------------------------------------------------------------------------------------
// Occupancy
// ------------------------------------------------------------------------------------------
bool arch_limits(std::string_view processor_or_target, ArchLimits *out) {
    std::string p, f;
    split_target_id(processor_or_target, &p, &f);
    ArchLimits l;
    l.processor = p;
    if (p == "gfx90a" || p == "gfx940" || p == "gfx941" || p == "gfx942") {
        // FeatureGFX90AInsts: unified 512-entry VGPR file (ArchVGPRs + AccVGPRs), granule 8,
        // max 8 waves per SIMD (LLVM AMDGPUBaseInfo getTotalNumVGPRs/getVGPRAllocGranule/
        // getMaxWavesPerEU).
        l.max_waves_per_simd = 8;
        l.vgprs_per_simd_lane = 512;
        l.vgpr_granule = 8;
    } else if (p.size() == 6 && p.compare(0, 4, "gfx9") == 0) {
        // Other GFX9 (gfx900, gfx906, gfx908, gfx90c, ...): 256 ArchVGPRs, granule 4, 10 waves.
        l.max_waves_per_simd = 10;
        l.vgprs_per_simd_lane = 256;
        l.vgpr_granule = 4;
    } else {
        return false;
    }
    l.max_sgprs_per_wave = 102;
    *out = l;
    return true;
}

uint32_t waves_per_simd_by_vgpr(const ArchLimits &l, uint32_t vgpr_count) {
    if (l.vgpr_granule == 0) return 0;
    if (vgpr_count < l.vgpr_granule) return l.max_waves_per_simd;
    const uint32_t rounded = align_up(vgpr_count, l.vgpr_granule);
    if (rounded > l.vgprs_per_simd_lane) return 0;  // cannot be resident at all
    return std::min(l.vgprs_per_simd_lane / rounded, l.max_waves_per_simd);
}

uint32_t waves_per_simd_by_sgpr(const ArchLimits &l, uint32_t sgpr_count) {
    uint32_t w;
    if (sgpr_count <= 80)
        w = 10;
    else if (sgpr_count <= 88)
        w = 9;
    else if (sgpr_count <= 100)
        w = 8;
    else
        w = 7;
    return std::min(w, l.max_waves_per_simd);
}

uint32_t dynamic_lds_offset(const KernelInfo &k) {
    const int d = k.dynamic_shared_arg();
    const uint32_t a = d >= 0 ? std::max<uint32_t>(k.args[d].pointee_align, 1) : 1;
    return align_up(k.group_segment_fixed_size, a);
}

uint64_t lds_bytes_per_group(const KernelInfo &k, uint32_t dynamic_lds_bytes) {
    if (dynamic_lds_bytes == 0) return k.group_segment_fixed_size;
    return uint64_t{dynamic_lds_offset(k)} + dynamic_lds_bytes;
}

Occupancy estimate_occupancy(const KernelInfo &k, const ArchLimits &l, uint32_t block_threads,
                             uint32_t dynamic_lds_bytes) {
    Occupancy o;
    o.by_vgpr = waves_per_simd_by_vgpr(l, k.vgpr_count);
    o.by_sgpr = waves_per_simd_by_sgpr(l, k.sgpr_count);
    const uint32_t wave = k.wavefront_size ? k.wavefront_size : 64;
    const uint32_t waves_per_group = std::max<uint32_t>(1, (block_threads + wave - 1) / wave);
    const uint64_t lds = lds_bytes_per_group(k, dynamic_lds_bytes);
    if (lds == 0) {
        o.by_lds = l.max_waves_per_simd;
    } else {
        const uint64_t groups = l.lds_bytes_per_cu / lds;
        const uint64_t waves = (groups * waves_per_group + l.simds_per_cu - 1) / l.simds_per_cu;
        o.by_lds = static_cast<uint32_t>(std::min<uint64_t>(waves, l.max_waves_per_simd));
    }
    // Work-groups resident per CU: single-wave groups are limited by the wave slots only.
    const uint64_t groups_cap = waves_per_group == 1 ? uint64_t{l.max_waves_per_simd} * l.simds_per_cu
                                                     : l.max_workgroups_per_cu;
    o.by_workgroups = static_cast<uint32_t>(std::min<uint64_t>(
        (groups_cap * waves_per_group + l.simds_per_cu - 1) / l.simds_per_cu, l.max_waves_per_simd));
    o.waves_per_simd = l.max_waves_per_simd;
    o.limiter = "max";
    auto lower = [&](uint32_t w, const char *why) {
        if (w < o.waves_per_simd) {
            o.waves_per_simd = w;
            o.limiter = why;
        }
    };
    lower(o.by_vgpr, "vgpr");
    lower(o.by_sgpr, "sgpr");
    lower(o.by_lds, "lds");
    lower(o.by_workgroups, "workgroups");
    return o;
}

}  // namespace convbwd::amdgpu
