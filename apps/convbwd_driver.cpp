// convbwd-driver: MIOpenDriver-style benchmark and verification CLI.
//   convbwd-driver conv -n 32 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -F 6 -t 1 -V 1
//   convbwd-driver --shapes shapes/resnet50.txt -n 4 -t 1 --compare onednn --json
//   convbwd-driver convfp16 -n 2 -c 8 -H 9 -W 9 -k 4 -F 2 --load-dir in/ --save-dir out/
//   convbwd-driver --list-kernels [--json], --list-spaces [--json]
//   convbwd-driver --shapes shapes/mobilenet_v2.txt --tuning-db my.db
// Exit status: 0 every run verified (or -V 0), 1 a run failed, 2 a refused command line or input.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "apps/driver/bench.h"
#include "apps/driver/cli.h"
#include "common/device.h"
#include "apps/driver/json.h"
#include "common/npy.h"
#include "common/shapes.h"
#ifdef CONVBWD_HAVE_AMDGPU_KERNELS
#include "amdgpu_kernels.inc"
#include "runtime/src/amdgpu/code_object.h"
#endif
#include "convbwd/convbwd.h"
#include "schedules/spaces.h"

using namespace convbwd;
using namespace convbwd::driver;

namespace {

const char *const kTargetNames[] = {"host", "opencl", "cuda", "amdgpu"};  // by convbwd_target
const char *const kDtypeNames[] = {"f32", "f16", "bf16"};

const char *target_name(convbwd_target t) { return (unsigned)t < 4 ? kTargetNames[t] : "?"; }

int usage_error(const std::string &msg, bool show_flags = false) {
    std::fprintf(stderr, "convbwd-driver: %s\n", msg.c_str());
    if (show_flags) std::fprintf(stderr, "valid flags: %s\n", valid_flags().c_str());
    std::fprintf(stderr, "(convbwd-driver --help for usage)\n");
    return 2;
}

std::vector<convbwd_kernel_desc> kernels() {
    std::vector<convbwd_kernel_desc> v(convbwd_kernel_count());
    for (int i = 0; i < (int)v.size(); i++) convbwd_kernel_info(i, &v[i]);
    return v;
}

// A family's space as JSON: {knob: {"kind", "default", "domain"}} (schedules/spaces.h).
JsonObject space_json(const Family &f) {
    JsonObject space;
    for (const Knob &k : f.knobs()) {
        std::string dom;
        for (int d : k.domain) dom += (dom.empty() ? "" : ", ") + std::to_string(d);
        JsonObject knob;
        knob.str("kind", k.kind == KnobKind::Compile ? "compile" : "launch").integer("default", k.def);
        knob.raw("domain", "[" + dom + "]").str("doc", k.doc);
        space.object(k.name, knob);
    }
    return space;
}

// --list-spaces: each family's knobs, kinds, defaults and domains.
int list_spaces(const Options &o) {
    for (const Family &f : families()) {
        if (o.json) {
            JsonObject row;
            row.str("family", f.name).str("direction", to_string(f.dir)).str("device", f.kind == ScheduleKind::Host ? "host" : "gpu");
            row.str("doc", f.doc).object("knobs", space_json(f));
            std::printf("%s\n", row.text().c_str());
            continue;
        }
        std::printf("%s (%s, %s): %s\n", f.name, to_string(f.dir), f.kind == ScheduleKind::Host ? "host" : "gpu", f.doc);
        for (const Knob &k : f.knobs()) {
            std::string dom;
            for (int d : k.domain) dom += (dom.empty() ? "" : ",") + std::to_string(d);
            std::printf("  %-13s %-7s default %-4d {%s}\n", k.name, k.kind == KnobKind::Compile ? "compile" : "launch", k.def,
                        dom.c_str());
        }
    }
    return 0;
}

int list_kernels(const Options &o) {
    if (!o.json)
        std::printf("%-40s %-10s %-5s %-6s %-6s %-6s %-6s %-9s %s\n", "kernel", "direction", "dtype", "layout", "target",
                    "stride", "filter", "role", "knobs");
    for (const convbwd_kernel_desc &d : kernels()) {
        if (o.explicit_target && d.target != o.target_enum) continue;
        const char *dir = d.direction == CONVBWD_BWD_DATA ? "bwd_data" : "bwd_weight";
        const char *layout = d.layout == CONVBWD_NCHW ? "nchw" : "nhwc";
        if (o.json) {
            JsonObject row;
            row.str("kernel", d.name).str("direction", dir).str("dtype", kDtypeNames[d.dtype]).str("layout", layout);
            row.str("target", target_name(d.target)).str("stride", d.stride_class).str("filter", d.filter_class);
            row.str("family", d.family).str("role", d.role).str("schedule", d.schedule);
            // Every knob with its value, and the family's space (kinds, defaults, domains).
            JsonObject knobs;
            if (const Family *f = find_family(d.family)) {
                KnobValues kv = default_values(*f);
                parse_knobs(d.schedule, &kv);
                for (size_t i = 0; i < kv.v.size(); i++) knobs.integer(f->knobs()[i].name, kv.v[i]);
                row.object("knobs", knobs).object("space", space_json(*f));
            }
            std::printf("%s\n", row.text().c_str());
        } else {
            std::printf("%-40s %-10s %-5s %-6s %-6s %-6s %-6s %-9s %s\n", d.name, dir, kDtypeNames[d.dtype], layout,
                        target_name(d.target), d.stride_class, d.filter_class, d.role, d.schedule);
        }
    }
#ifdef CONVBWD_HAVE_AMDGPU_KERNELS
    // amdgpu kernels are compiled and embedded but not dispatched (README, "Targets"): list each
    // code object's metadata, the worst entry point per (kernel, arch).
    if (!o.explicit_target || o.target_enum == CONVBWD_TARGET_AMDGPU) {
        struct Amd {
            const char *name;
            const amdgpu::EmbeddedCodeObjectSet *set;
        };
        static const Amd kAmd[] = {
#define CONVBWD_AMDGPU_KERNEL(name, symbol, sched) {#name, &symbol},
#include "amdgpu_kernels.inc"
#undef CONVBWD_AMDGPU_KERNEL
        };
        if (!o.json)
            std::printf("\n%-40s %-7s %7s %5s %5s %5s %8s %9s %12s\n", "amdgpu code object (max over entries)", "arch",
                        "entries", "vgpr", "agpr", "sgpr", "lds B", "scratch B", "waves/SIMD");
        for (const Amd &a : kAmd)
            for (size_t i = 0; i < a.set->count; i++) {
                const amdgpu::EmbeddedCodeObject &co = a.set->objects[i];
                amdgpu::CodeObjectInfo info;
                amdgpu::ArchLimits limits;
                if (!amdgpu::parse_code_object(co.data, co.size, &info).ok() || !amdgpu::arch_limits(info.processor, &limits))
                    continue;
                // vgpr: the metadata's .vgpr_count (gfx90a/gfx940: the unified total with the AGPRs
                // that MFMA accumulators may use; gfx908: the arch VGPRs, AGPRs apart).
                uint32_t vgpr = 0, agpr = 0, sgpr = 0, lds = 0, scratch = 0, waves = 99;
                for (const amdgpu::KernelInfo &k : info.kernels) {
                    if (k.name == "_at_least_one_kernel") continue;  // Halide's placeholder
                    vgpr = std::max(vgpr, k.vgpr_count), sgpr = std::max(sgpr, k.sgpr_count);
                    if (k.has_agpr_count) agpr = std::max(agpr, k.agpr_count);
                    lds = std::max(lds, k.group_segment_fixed_size);
                    scratch = std::max(scratch, k.private_segment_fixed_size);
                    waves = std::min(waves, amdgpu::estimate_occupancy(k, limits, 128, 0).waves_per_simd);
                }
                if (o.json) {
                    JsonObject row;
                    row.str("kernel", a.name).str("target", "amdgpu").str("arch", co.arch);
                    row.integer("entries", (int64_t)info.kernels.size()).integer("vgpr", vgpr).integer("agpr", agpr);
                    row.integer("sgpr", sgpr);
                    row.integer("lds_bytes", lds).integer("scratch_bytes", scratch).integer("waves_per_simd", waves);
                    std::printf("%s\n", row.text().c_str());
                } else {
                    std::printf("%-40s %-7s %7zu %5u %5u %5u %8u %9u %12u\n", a.name, co.arch, info.kernels.size(), vgpr,
                                agpr, sgpr, lds, scratch, waves);
                }
            }
    }
#endif
    return 0;
}

struct Item {
    ConvProblem p;
    int dirs = 6;
    int line_no = 0;
};

// --shapes FILE: as given, else under the shape suites' directory.
std::string find_shapes(const std::string &f) {
    if (std::filesystem::exists(f)) return f;
    std::string alt = shapes_dir() + "/" + f;
    return std::filesystem::exists(alt) ? alt : f;
}

// The inputs the directions need, from DIR/{x,w,dy}.npy. Every bad file is reported.
bool load_inputs(const Options &o, const ConvProblem &p, int dirs, Inputs *in) {
    const bool nhwc = p.layout == Layout::NHWC;
    struct Need {
        const char *name;
        std::array<int64_t, 4> dims;
        const char *axes;
        bool needed;
    } needs[] = {
        {"x", x_dims(p), nhwc ? "N, H, W, C" : "N, C, H, W", (dirs & 4) != 0},
        {"w", w_dims(p), nhwc ? "K, R, S, C/G" : "K, C/G, R, S", (dirs & 2) != 0},
        {"dy", dy_dims(p), nhwc ? "N, P, Q, K" : "N, K, P, Q", true},
    };
    bool ok = true;
    for (const Need &n : needs) {
        if (!n.needed) continue;
        const std::string path = (std::filesystem::path(o.load_dir) / (std::string(n.name) + ".npy")).string();
        HostTensor t(n.dims, p.dtype, p.layout);
        int64_t inexact = 0;
        try {
            npy_load_tensor(path, &t, n.axes, &inexact);
        } catch (const NpyError &e) {
            std::fprintf(stderr, "convbwd-driver: --load-dir: %s\n", e.what());
            ok = false;
            continue;
        }
        if (inexact)
            std::fprintf(stderr, "convbwd-driver: note: %s: %lld values are not bf16 numbers; rounded to nearest even\n",
                         path.c_str(), (long long)inexact);
        (*in)[n.name] = std::move(t);
    }
    return ok;
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        std::fputs(kUsage, stderr);
        return 2;
    }
    Options o;
    std::string err;
    bool show_flags = false;
    if (!parse_command_line(args, &o, &err, &show_flags)) return usage_error(err, show_flags);
    if (o.help) {
        std::fputs(kUsage, stdout);
        return 0;
    }
    if (o.list_kernels) return list_kernels(o);
    if (o.list_spaces) return list_spaces(o);
    if (!o.tuning_db.empty() && convbwd_load_tuning_db(o.tuning_db.c_str()) != CONVBWD_SUCCESS)
        return usage_error(std::string("--tuning-db: ") + convbwd_last_error());

    // Target and kernel: a forced kernel names its target; a target must have kernels built in.
    const std::vector<convbwd_kernel_desc> all = kernels();
    int forced_dir_bit = 0;
    if (!o.kernel.empty()) {
        const convbwd_kernel_desc *k = nullptr;
        const std::string kname = o.kernel.substr(0, o.kernel.find(' '));  // "NAME [knob=value ...]"
        for (const auto &d : all)
            if (kname == d.name) k = &d;
        if (!k) return usage_error("--kernel " + kname + ": no such kernel (convbwd-driver --list-kernels lists them)");
        if (!o.explicit_target) o.target_enum = k->target, o.target = target_name(k->target);
        forced_dir_bit = k->direction == CONVBWD_BWD_DATA ? 2 : 4;
    }
    std::string built;
    int of_target = 0;
    for (int t = 0; t < 4; t++) {
        int n = 0;
        for (const auto &d : all) n += d.target == t;
        if (n) built += std::string(built.empty() ? "" : ", ") + kTargetNames[t];
        if (t == o.target_enum) of_target = n;
    }
    if (of_target == 0)
        return usage_error("--target " + o.target + ": this build has no " + o.target + " kernels (it has: " + built +
                           "); configure with -DCONVBWD_TARGETS=\"host;" + o.target + "\" to build them");

    if (o.op.empty() && o.shapes.empty())
        return usage_error("no problem: give an operation (conv, convfp16, convbfp16) with its flags, or --shapes FILE",
                           false);
    if (!o.shapes.empty() && (!o.load_dir.empty() || !o.save_dir.empty()))
        return usage_error("--load-dir / --save-dir take one problem, not --shapes");

    // The problems.
    std::vector<Item> items;
    if (!o.shapes.empty()) {
        const std::string file = find_shapes(o.shapes);
        std::vector<ShapeEntry> entries;
        try {
            entries = load_shapes(file);
        } catch (const std::exception &e) {
            return usage_error(e.what());
        }
        for (const ShapeEntry &e : entries) {
            DriverLine line;
            tokenize_driver_line(e.text, &line, &err);
            Item it;
            it.line_no = e.line_no;
            if (!problem_of(overlay(line, o), &it.p, &it.dirs, &err))
                return usage_error(file + ":" + std::to_string(e.line_no) + ": " + err);
            items.push_back(it);
        }
        if (items.empty()) return usage_error(file + ": no problem lines");
    } else {
        Item it;
        if (!problem_of(o.problem_flags, &it.p, &it.dirs, &err)) return usage_error(err);
        items.push_back(it);
    }
    if (forced_dir_bit && !o.explicit_directions)
        for (Item &it : items) it.dirs = forced_dir_bit;  // --kernel picks the direction unless -F does

    // Inputs: read and checked before anything runs or is written.
    Inputs inputs;
    if (!o.load_dir.empty() && !load_inputs(o, items[0].p, items[0].dirs, &inputs)) return 2;

    GpuDevice *dev = nullptr;
    if (o.target_enum != CONVBWD_TARGET_HOST && !(dev = gpu_device(device_of(o.target_enum), &err)))
        return usage_error("--target " + o.target + ": no usable " + o.target + " device: " + err);

    int failures = 0, n = 0;
    std::vector<std::pair<std::string, HostTensor>> outputs;
    for (const Item &it : items) {
        ++n;
        if (!o.shapes.empty())
            std::fprintf(stderr, "[%d/%zu] %s\n", n, items.size(), to_driver_line(it.p, it.dirs).c_str());
        for (Direction d : {Direction::BwdData, Direction::BwdWeight}) {
            if (!(it.dirs & (d == Direction::BwdData ? 2 : 4))) continue;
            HostTensor result;
            bool ok = run_one(it.p, d, o, dev, o.load_dir.empty() ? nullptr : &inputs, it.line_no, &result);
            failures += !ok;
            if (!result.storage.empty()) outputs.emplace_back(d == Direction::BwdData ? "dx" : "dw", std::move(result));
        }
    }
    if (!o.save_dir.empty() && failures) {
        std::fprintf(stderr, "convbwd-driver: --save-dir: nothing written (%d of the runs failed)\n", failures);
    } else if (!o.save_dir.empty()) {
        try {
            std::filesystem::create_directories(o.save_dir);
            for (const auto &out : outputs)
                npy_save_tensor((std::filesystem::path(o.save_dir) / (out.first + ".npy")).string(), out.second);
        } catch (const std::exception &e) {
            std::fprintf(stderr, "convbwd-driver: --save-dir: %s\n", e.what());
            return 1;
        }
    }
    if (failures) std::fprintf(stderr, "convbwd-driver: %d of the runs failed\n", failures);
    return failures ? 1 : 0;
}
