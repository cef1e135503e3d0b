#include "apps/driver/cli.h"

#include <cctype>
#include <cstdlib>
#include <cstring>

#include "common/tensor.h"

namespace convbwd::driver {

const char *kUsage =
    "usage: convbwd-driver [MIOpenDriver] conv|convfp16|convbfp16 [MIOpenDriver flags] [options]\n"
    "       convbwd-driver [conv|convfp16|convbfp16] --shapes FILE [flags that override every line] [options]\n"
    "       convbwd-driver --list-kernels [--target T] [--json]    --list-spaces [--json]\n"
    "MIOpenDriver flags (short or long names; -c and -k are totals over the -g groups):\n"
    "  -n batch  -c in channels  -H/-W in height/width  -k out channels  -y/-x filter height/width\n"
    "  -p/-q padding  -u/-v stride  -l/-j dilation  -g groups\n"
    "  -F 2 bwd data | 4 bwd weight | 6 or 0 both     -I/-f/-O NCHW|NHWC (all the same)\n"
    "  -t 0|1 time  -i ITER (median of ITER runs)  -V 0|1 verify  -m conv  --spatial_dim 2\n"
    "  -w, -P, -s 0, -o 0, -S -1, -z default, ... are accepted at values that ask for nothing we lack\n"
    "  flags left out are 1 (padding 0), not MIOpenDriver's defaults (-n 100 -c 3 -H 32 ...): logged lines give all\n"
    "options:\n"
    "  --target host|opencl|cuda|amdgpu   where to run (kernels of that target must be built in)\n"
    "  --kernel 'NAME [knob=value ...]'  force one kernel (--list-kernels), optionally with launch-time\n"
    "                     knob values (--list-spaces); refused if it cannot run the problem\n"
    "  --tuning-db FILE   a tuning database (<problem_key> <kernel> [knob=value ...] per line), consulted\n"
    "                     before the defaults; refused whole, naming the line, if malformed\n"
    "  --shapes FILE      one MIOpenDriver line per problem (shapes/*.txt); a flag that is not\n"
    "                     MIOpenDriver's, or one refused here, is refused there too (file:line)\n"
    "  --compare onednn|cudnn|scatter  run a peer on the same data beside convbwd: oneDNN (host),\n"
    "                     cuDNN (cuda, TF32 off for f32), or the scatter-then-conv baseline kernel\n"
    "  --json             one JSON object per (problem, direction) on stdout (with its problem_key)\n"
    "  --load-dir DIR     inputs from DIR/x.npy, w.npy, dy.npy (layout order; bf16 as float32)\n"
    "  --save-dir DIR     outputs to DIR/dx.npy, dw.npy\n"
    "  --warmup N (3)  --seed N (1)  --pad_bottom N  --pad_right N (asymmetric padding)\n";

namespace {

using Kind = FlagKind;
using Flag = DriverFlag;

// The driver's own options; MIOpenDriver's flags are common/shapes.h's table.
const Flag kOwnFlags[] = {
    {"--target", nullptr, Kind::Option, nullptr, nullptr},
    {"--kernel", nullptr, Kind::Option, nullptr, nullptr},
    {"--shapes", nullptr, Kind::Option, nullptr, nullptr},
    {"--compare", nullptr, Kind::Option, nullptr, nullptr},
    {"--load-dir", nullptr, Kind::Option, nullptr, nullptr},
    {"--save-dir", nullptr, Kind::Option, nullptr, nullptr},
    {"--warmup", nullptr, Kind::Option, nullptr, nullptr},
    {"--seed", nullptr, Kind::Option, nullptr, nullptr},
    {"--tuning-db", nullptr, Kind::Option, nullptr, nullptr},
    {"--json", nullptr, Kind::Bool, nullptr, nullptr},
    {"--list-kernels", nullptr, Kind::Bool, nullptr, nullptr},
    {"--list-spaces", nullptr, Kind::Bool, nullptr, nullptr},
    {"--help", "-h", Kind::Bool, nullptr, nullptr},
};

const Flag *find_flag(const std::string &name) {
    if (const Flag *f = find_miopen_flag(name)) return f;
    for (const Flag &f : kOwnFlags)
        if (name == f.name || (f.alias && name == f.alias)) return &f;
    return nullptr;
}

bool is_value(const std::string &s) {
    if (s.empty()) return true;
    if (s[0] != '-') return true;
    return s.size() > 1 && (std::isdigit((unsigned char)s[1]) || s[1] == '.');  // a negative number
}

bool parse_int(const std::string &s, long lo, long hi, long *v) {
    if (s.empty()) return false;
    char *end = nullptr;
    long x = std::strtol(s.c_str(), &end, 10);
    if (*end != 0 || x < lo || x > hi) return false;
    *v = x;
    return true;
}

bool check_op(const std::string &op, std::string *error) {
    if (op == "conv" || op == "convfp16" || op == "convbfp16") return true;
    if (op == "convint8" || op == "convfp8" || op == "convbfp8" || op == "convfp64" || op.rfind("conv", 0) == 0) {
        const char *what = op == "convint8" ? "int8" : op == "convfp8" ? "fp8" : op == "convbfp8" ? "bf8"
                         : op == "convfp64" ? "fp64" : "this";
        *error = "operation '" + op + "': " + what +
                 " convolution is not supported by convbwd (conv = f32, convfp16 = f16, convbfp16 = bf16)";
    } else {
        *error = "operation '" + op + "' is not a convolution; convbwd-driver runs conv, convfp16 and convbfp16";
    }
    return false;
}

}  // namespace

std::string valid_flags() {
    std::string s;
    auto add = [&](const Flag &f) {
        if (f.kind == Kind::Refused) return;
        s += (s.empty() ? "" : " ") + std::string(f.name);
        if (f.alias) s += std::string("|") + f.alias;
    };
    for (const Flag &f : miopen_flags()) add(f);
    for (const Flag &f : kOwnFlags) add(f);
    return s;
}

bool parse_command_line(const std::vector<std::string> &args, Options *o, std::string *error, bool *show_flags) {
    *o = Options{};
    *show_flags = false;
    size_t i = 0;
    // A logged MIOpen command line pasted whole: "MIOpenDriver conv ..." (as shape files take it).
    if (!args.empty() && is_miopen_driver_word(args[0])) i = 1;
    if (i < args.size() && !args[i].empty() && args[i][0] != '-') {
        if (!check_op(args[i], error)) return false;
        o->op = args[i];
        i++;
    }
    o->problem_flags.op = o->op;
    while (i < args.size()) {
        const std::string &t = args[i];
        if (t.size() < 2 || t[0] != '-') {
            *error = "unexpected argument '" + t + "' (flags start with '-'; the operation comes first)";
            *show_flags = true;
            return false;
        }
        std::string name = t, value;
        bool inline_value = false;
        size_t eq = t.find('=');
        if (t.rfind("--", 0) == 0 && eq != std::string::npos) {
            name = t.substr(0, eq), value = t.substr(eq + 1), inline_value = true;
        }
        const Flag *f = find_flag(name);
        if (!f) {
            *error = "unknown flag " + name;
            *show_flags = true;
            return false;
        }
        if (f->kind == Kind::Bool) {
            if (inline_value) {
                *error = "flag " + name + " takes no value";
                return false;
            }
            i++;
        } else if (inline_value) {
            i++;
        } else if (i + 1 < args.size() && is_value(args[i + 1])) {
            value = args[i + 1];
            i += 2;
        } else {
            *error = "flag " + name + " needs a value";
            return false;
        }
        const std::string canon = f->name;
        long n = 0;
        switch (f->kind) {
        case Kind::Refused:
            *error = "MIOpenDriver flag " + name + " is not supported by convbwd: " + f->reason;
            return false;
        case Kind::DefaultOnly:
            if (!flag_accepts(*f, value)) {
                *error = "MIOpenDriver flag " + name + " " + value + " is not supported by convbwd: " + f->reason;
                return false;
            }
            break;
        case Kind::Problem:
            o->problem_flags.flags[canon] = value;
            if (canon == "-F") o->explicit_directions = true;
            break;
        case Kind::Bool:
            if (canon == "--json") o->json = true;
            if (canon == "--list-kernels") o->list_kernels = true;
            if (canon == "--list-spaces") o->list_spaces = true;
            if (canon == "--help") o->help = true;
            break;
        case Kind::Option:
            if (canon == "-t" || canon == "-V") {
                if (value != "0" && value != "1") {
                    *error = "flag " + name + " needs 0 or 1, got '" + value + "'";
                    return false;
                }
                (canon == "-t" ? o->time : o->verify) = value == "1";
            } else if (canon == "-i" || canon == "--warmup" || canon == "--seed") {
                long lo = canon == "-i" ? 1 : 0;
                if (!parse_int(value, lo, 1000000000L, &n)) {
                    *error = "flag " + name + " needs an integer >= " + std::to_string(lo) + ", got '" + value + "'";
                    return false;
                }
                if (canon == "-i") o->iters = (int)n;
                if (canon == "--warmup") o->warmup = (int)n;
                if (canon == "--seed") o->seed = (unsigned)n;
            } else if (canon == "--target") {
                const char *names[] = {"host", "opencl", "cuda", "amdgpu"};
                int k = 0;
                while (k < 4 && value != names[k]) k++;
                if (k == 4) {
                    *error = "--target " + value + ": unknown target (host, opencl, cuda, amdgpu)";
                    return false;
                }
                o->target = value, o->explicit_target = true;
                o->target_enum = (convbwd_target)k;  // CONVBWD_TARGET_HOST .. _AMDGPU, in this order
            } else if (canon == "--compare") {
                if (value != "onednn" && value != "cudnn" && value != "scatter") {
                    *error = "--compare " + value + ": peers are onednn, cudnn and scatter";
                    return false;
                }
                o->compare = value;
            } else if (value.empty()) {
                *error = "flag " + name + " needs a value";
                return false;
            } else if (canon == "--kernel") {
                o->kernel = value;
            } else if (canon == "--shapes") {
                o->shapes = value;
            } else if (canon == "--tuning-db") {
                o->tuning_db = value;
            } else if (canon == "--load-dir") {
                o->load_dir = value;
            } else if (canon == "--save-dir") {
                o->save_dir = value;
            }
            break;
        }
    }
    // Each peer runs where it can: oneDNN beside host kernels, cuDNN beside cuda kernels and
    // beside opencl ones on the same NVIDIA GPU (its own CUDA copies of the inputs).
    if (o->compare == "onednn" && o->target_enum != CONVBWD_TARGET_HOST) {
        *error = "--compare onednn runs beside --target host only";
        return false;
    }
    if (o->compare == "cudnn" && o->target_enum != CONVBWD_TARGET_CUDA && o->target_enum != CONVBWD_TARGET_OPENCL) {
        *error = "--compare cudnn runs beside --target cuda or opencl only (with --target host, use --compare onednn)";
        return false;
    }
    return true;
}

DriverLine overlay(const DriverLine &file_line, const Options &o) {
    DriverLine line = file_line;
    if (!o.op.empty()) line.op = o.op;
    const char *layout_flags[] = {"-I", "-f", "-O", "--in_layout", "--fil_layout", "--out_layout"};
    bool layout_given = false;
    for (const char *f : layout_flags) layout_given |= o.problem_flags.flags.count(f) > 0;
    if (layout_given)
        for (const char *f : layout_flags) line.flags.erase(f);
    for (const auto &kv : o.problem_flags.flags) line.flags[kv.first] = kv.second;
    return line;
}

bool problem_of(const DriverLine &line_in, ConvProblem *p, int *directions, std::string *error) {
    DriverLine line = line_in;
    // Long layout names (shape files may use them) to short; all given layouts must agree.
    const std::pair<const char *, const char *> names[] = {
        {"--in_layout", "-I"}, {"--fil_layout", "-f"}, {"--out_layout", "-O"}};
    for (const auto &n : names) {
        auto it = line.flags.find(n.first);
        if (it != line.flags.end()) {
            line.flags[n.second] = it->second;
            line.flags.erase(it);
        }
    }
    std::string layout, first;
    for (const char *f : {"-I", "-f", "-O"}) {
        auto it = line.flags.find(f);
        if (it == line.flags.end()) continue;
        if (layout.empty()) {
            layout = it->second, first = f;
        } else if (it->second != layout) {
            *error = first + " " + layout + " with " + f + " " + it->second +
                     ": mixed layouts are not supported (NCHW activations with KCYX filters, or NHWC with KYXC)";
            return false;
        }
    }
    if (!layout.empty()) line.flags["-I"] = layout;
    if (!problem_from_line(line, p, directions, error)) return false;
    // Geometry and sizes: ask the library (any kernel query validates the problem first, in
    // 64 bits, before anything is allocated), for each direction the line runs. P and Q go in
    // derived: the library names the field at fault (a stride of 0, a filter that does not
    // fit, a size that overflows), and they fit int once it accepts the problem.
    convbwd_problem cp = to_c(*p);
    cp.p = cp.q = 0;
    for (convbwd_direction d : {CONVBWD_BWD_DATA, CONVBWD_BWD_WEIGHT}) {
        if (!(*directions & d)) continue;
        const char *name = nullptr;
        convbwd_status s = convbwd_select_kernel(&cp, d, to_c(p->dtype), to_c(p->layout), nullptr, &name);
        if (s == CONVBWD_BAD_PARAM || s == CONVBWD_NULL_POINTER || s == CONVBWD_NOT_SUPPORTED) {
            *error = std::string("invalid problem: ") + convbwd_last_error();
            return false;
        }
    }
    return true;
}

}  // namespace convbwd::driver
