// The kernel manifest (schedules/kernels.manifest): one record per compiled kernel, as data.
//
//   <family> <dtype> <layout> <stride> <filter> <device> <role> <order> [knob=value ...]
//
// family: a generator with a schedule space (schedules/spaces.h); role: default (dispatched in
// order), candidate (run by name or by a tuning-database record), baseline (comparison only);
// order: dispatch priority among the defaults of one (direction, device, dtype, layout), lower
// first. Knobs left out take their family's defaults; compile-time knobs make the kernel (and its
// tag), launch-time knobs are this kernel's launch defaults. '#' starts a comment.
// Read by tools/manifest (CMake's kernel list) and by the tests; every error names the file, the
// line and the field.
#pragma once

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "spaces.h"

namespace convbwd {


struct ManifestRecord {
    int line = 0;
    const Family *family = nullptr;
    KernelClass cls{};
    Role role = Role::Default;
    int order = 0;
    KnobValues knobs;
    std::string name;  // derived: kernel_name(class, kernel_tag(knobs))
};

namespace manifest_detail {
template <class E>
bool lookup(const std::string &s, const std::vector<std::pair<const char *, E>> &table, E *out) {
    for (auto &[n, v] : table)
        if (s == n) {
            *out = v;
            return true;
        }
    return false;
}
template <class E>
std::string choices(const std::vector<std::pair<const char *, E>> &table) {
    std::string out;
    for (auto &[n, v] : table) out += (out.empty() ? "" : "|") + std::string(n);
    return out;
}
}  // namespace manifest_detail

// Parses the manifest text; returns "" or the first error as "<file>:<line>: <field>: <why>".
// Checks each record against its family's space (knob names, domains, valid()) and that no two
// records derive the same kernel name.
inline std::string parse_manifest(const std::string &text, const std::string &file, std::vector<ManifestRecord> *out) {
    using namespace manifest_detail;
    static const std::vector<std::pair<const char *, DType>> kD = {{"f32", DType::F32}, {"f16", DType::F16}, {"bf16", DType::BF16}};
    static const std::vector<std::pair<const char *, Layout>> kL = {{"nchw", Layout::NCHW}, {"nhwc", Layout::NHWC}};
    static const std::vector<std::pair<const char *, StrideClass>> kS = {
        {"s1", StrideClass::S1}, {"s2", StrideClass::S2}, {"any", StrideClass::Any}};
    static const std::vector<std::pair<const char *, FilterClass>> kF = {
        {"k1", FilterClass::K1}, {"k3", FilterClass::K3}, {"k5", FilterClass::K5}, {"any", FilterClass::Any}};
    static const std::vector<std::pair<const char *, Device>> kDev = {
        {"host", Device::Host}, {"cuda", Device::Cuda}, {"opencl", Device::OpenCL}, {"amdgpu", Device::AmdGpu}};
    static const std::vector<std::pair<const char *, Role>> kR = {
        {"default", Role::Default}, {"candidate", Role::Candidate}, {"baseline", Role::Baseline}};
    std::istringstream in(text);
    std::map<std::string, int> seen;
    int lineno = 0;
    for (std::string line; std::getline(in, line);) {
        ++lineno;
        const size_t hash = line.find('#');
        if (hash != std::string::npos) line.resize(hash);
        std::istringstream fields(line);
        std::vector<std::string> f;
        for (std::string t; fields >> t;) f.push_back(t);
        if (f.empty()) continue;
        auto err = [&](const std::string &field, const std::string &why) {
            return file + ":" + std::to_string(lineno) + ": " + field + ": " + why;
        };
        if (f.size() < 8)
            return err("record", "expected <family> <dtype> <layout> <stride> <filter> <device> <role> <order> [knob=value ...], got " +
                                     std::to_string(f.size()) + " fields");
        ManifestRecord r;
        r.line = lineno;
        r.family = find_family(f[0]);
        if (!r.family) {
            std::string names;
            for (const Family &fam : families()) names += (names.empty() ? "" : "|") + std::string(fam.name);
            return err("family", "'" + f[0] + "' is not a family (" + names + ")");
        }
        r.cls.dir = r.family->dir;
        if (!lookup(f[1], kD, &r.cls.dtype)) return err("dtype", "'" + f[1] + "' is not " + choices(kD));
        if (!lookup(f[2], kL, &r.cls.layout)) return err("layout", "'" + f[2] + "' is not " + choices(kL));
        if (!lookup(f[3], kS, &r.cls.stride)) return err("stride", "'" + f[3] + "' is not " + choices(kS));
        if (!lookup(f[4], kF, &r.cls.filter)) return err("filter", "'" + f[4] + "' is not " + choices(kF));
        if (!lookup(f[5], kDev, &r.cls.device)) return err("device", "'" + f[5] + "' is not " + choices(kDev));
        if (!lookup(f[6], kR, &r.role)) return err("role", "'" + f[6] + "' is not " + choices(kR));
        char *end = nullptr;
        const long order = std::strtol(f[7].c_str(), &end, 10);
        if (!end || *end || order < 0 || order > 1000000) return err("order", "'" + f[7] + "' is not an integer in [0, 1000000]");
        r.order = (int)order;
        r.knobs = default_values(*r.family);
        std::string knobs;
        for (size_t i = 8; i < f.size(); i++) knobs += (knobs.empty() ? "" : " ") + f[i];
        if (std::string e = parse_knobs(knobs, &r.knobs); !e.empty()) return err("knobs", e);
        if (std::string e = valid(r.knobs, r.cls); !e.empty()) return err("knobs", "not valid: " + e);
        r.name = kernel_name(r.cls.dir, r.cls.dtype, r.cls.layout, r.cls.stride, r.cls.filter, r.cls.device,
                             kernel_tag(r.knobs));
        if (auto it = seen.find(r.name); it != seen.end())
            return err("knobs", "derives the kernel name " + r.name + " of line " + std::to_string(it->second) +
                                    " (records differ in compile-time knobs; launch-time values go in a tuning database)");
        seen[r.name] = lineno;
        out->push_back(std::move(r));
    }
    // Dispatch order: by order, then file order.
    std::stable_sort(out->begin(), out->end(), [](const ManifestRecord &a, const ManifestRecord &b) { return a.order < b.order; });
    return {};
}

inline std::string read_manifest(const std::string &path, std::vector<ManifestRecord> *out) {
    std::ifstream f(path);
    if (!f) return path + ": cannot be read";
    std::stringstream ss;
    ss << f.rdbuf();
    return parse_manifest(ss.str(), path, out);
}

}  // namespace convbwd
