#include "common/shapes.h"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace convbwd {

namespace {
bool parse_int(const std::string &s, int *v) {
    if (s.empty()) return false;
    char *end = nullptr;
    long x = std::strtol(s.c_str(), &end, 10);
    if (*end != 0 || x < -1000000000L || x > 1000000000L) return false;
    *v = (int)x;
    return true;
}
std::string trim(const std::string &s) {
    size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
    return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}
}  // namespace

const std::vector<DriverFlag> &miopen_flags() {
    using K = FlagKind;
    static const std::vector<DriverFlag> flags = {
        // MIOpenDriver's convolution flags.
        {"-n", "--batchsize", K::Problem, nullptr, nullptr},
        {"-c", "--in_channels", K::Problem, nullptr, nullptr},
        {"-H", "--in_h", K::Problem, nullptr, nullptr},
        {"-W", "--in_w", K::Problem, nullptr, nullptr},
        {"-k", "--out_channels", K::Problem, nullptr, nullptr},
        {"-y", "--fil_h", K::Problem, nullptr, nullptr},
        {"-x", "--fil_w", K::Problem, nullptr, nullptr},
        {"-p", "--pad_h", K::Problem, nullptr, nullptr},
        {"-q", "--pad_w", K::Problem, nullptr, nullptr},
        {"-u", "--conv_stride_h", K::Problem, nullptr, nullptr},
        {"-v", "--conv_stride_w", K::Problem, nullptr, nullptr},
        {"-l", "--dilation_h", K::Problem, nullptr, nullptr},
        {"-j", "--dilation_w", K::Problem, nullptr, nullptr},
        {"-g", "--group_count", K::Problem, nullptr, nullptr},
        {"-F", "--forw", K::Problem, nullptr, nullptr},
        {"-I", "--in_layout", K::Problem, nullptr, nullptr},
        {"-f", "--fil_layout", K::Problem, nullptr, nullptr},
        {"-O", "--out_layout", K::Problem, nullptr, nullptr},
        {"-m", "--mode", K::Problem, nullptr, nullptr},
        {"--spatial_dim", "-_", K::Problem, nullptr, nullptr},
        {"-t", "--time", K::Option, nullptr, nullptr},
        {"-i", "--iter", K::Option, nullptr, nullptr},
        {"-V", "--verify", K::Option, nullptr, nullptr},
        {"-w", "--wall", K::DefaultOnly, "0|1", "times are always wall-clock"},
        {"-P", "--printconv", K::DefaultOnly, "0|1", "the problem line is always printed"},
        {"-s", "--search", K::DefaultOnly, "0",
         "search/find mode is not supported: convbwd dispatches by problem class; --kernel NAME forces a kernel"},
        {"-o", "--dump_output", K::DefaultOnly, "0", "raw dumps are not supported: use --save-dir DIR (.npy)"},
        {"-S", "--solution", K::DefaultOnly, "-1", "MIOpen solution ids do not apply: use --kernel NAME"},
        {"-z", "--pad_mode", K::DefaultOnly, "default", "only the default padding mode (give -p/-q) is supported"},
        {"-r", "--pad_val", K::DefaultOnly, "0", "only zero padding is supported"},
        {"-Y", "--trans_output_pad_h", K::DefaultOnly, "0", "transposed convolution is not supported"},
        {"-X", "--trans_output_pad_w", K::DefaultOnly, "0", "transposed convolution is not supported"},
        {"-Z", "--tensor_vect", K::DefaultOnly, "0", "vectorised tensors are not supported"},
        {"-L", "--vector_length", K::DefaultOnly, "1", "vectorised tensors are not supported"},
        {"-~", "--gpubuffer_check", K::DefaultOnly, "0", "GPU buffer checks are not supported"},
        {"-A", "--gpualloc", K::DefaultOnly, "0", "buffers are always allocated on the target"},
        {"-d", "--in_data", K::Refused, nullptr, "raw input files are not supported: use --load-dir DIR (x.npy)"},
        {"-e", "--weights", K::Refused, nullptr, "raw weight files are not supported: use --load-dir DIR (w.npy)"},
        {"-D", "--dout_data", K::Refused, nullptr, "raw dout files are not supported: use --load-dir DIR (dy.npy)"},
        {"-b", "--bias", K::Refused, nullptr, "bias is not supported (convbwd computes dx and dw only)"},
        {"-a", "--in_bias", K::Refused, nullptr, "bias is not supported (convbwd computes dx and dw only)"},
        {"-C", "--verification_cache", K::Refused, nullptr,
         "the verification cache is not supported (the reference runs every time)"},
        {"-R", "--in_cast_type", K::Refused, nullptr, "cast types (fp8) are not supported"},
        {"-T", "--wei_cast_type", K::Refused, nullptr, "cast types (fp8) are not supported"},
        {"-U", "--out_cast_type", K::Refused, nullptr, "cast types (fp8) are not supported"},
        {"-!", "--in_d", K::Refused, nullptr, "3-D convolution is not supported (--spatial_dim 2 only)"},
        {"-@", "--fil_d", K::Refused, nullptr, "3-D convolution is not supported (--spatial_dim 2 only)"},
        {"-#", "--conv_stride_d", K::Refused, nullptr, "3-D convolution is not supported (--spatial_dim 2 only)"},
        {"-$", "--pad_d", K::Refused, nullptr, "3-D convolution is not supported (--spatial_dim 2 only)"},
        {"-^", "--dilation_d", K::Refused, nullptr, "3-D convolution is not supported (--spatial_dim 2 only)"},
        {"-%", "--trans_output_pad_d", K::Refused, nullptr, "3-D convolution is not supported (--spatial_dim 2 only)"},
        // convbwd extensions of the problem.
        {"--pad_bottom", nullptr, K::Problem, nullptr, nullptr},
        {"--pad_right", nullptr, K::Problem, nullptr, nullptr},
    };
    return flags;
}

const DriverFlag *find_miopen_flag(const std::string &name) {
    // MIOpenDriver's older spellings of a few long names.
    static const struct {
        const char *old_name, *name;
    } old_names[] = {{"--conv_stride_0", "-u"}, {"--conv_stride_1", "-v"}};
    for (const DriverFlag &f : miopen_flags())
        if (name == f.name || (f.alias && name == f.alias)) return &f;
    for (const auto &o : old_names)
        if (name == o.old_name) return find_miopen_flag(o.name);
    return nullptr;
}

bool flag_accepts(const DriverFlag &f, const std::string &v) {
    const std::string l = f.accepted ? f.accepted : "";
    size_t a = 0;
    while (true) {
        size_t b = l.find('|', a);
        if (l.substr(a, b == std::string::npos ? std::string::npos : b - a) == v) return true;
        if (b == std::string::npos) return false;
        a = b + 1;
    }
}

bool is_miopen_driver_word(const std::string &w) {
    return w == "MIOpenDriver" || (w.size() > 13 && w.substr(w.size() - 13) == "/MIOpenDriver");
}

size_t comment_start(const std::string &line) {
    for (size_t i = 0; i < line.size(); i++)
        if (line[i] == '#' && (i == 0 || std::isspace((unsigned char)line[i - 1]))) return i;
    return std::string::npos;
}

bool tokenize_driver_line(const std::string &line_in, DriverLine *out, std::string *error) {
    *out = DriverLine{};
    std::string line = line_in;
    size_t hash = comment_start(line);
    if (hash != std::string::npos) {
        out->comment = trim(line.substr(hash + 1));
        line = line.substr(0, hash);
    }
    std::istringstream in(line);
    std::vector<std::string> tok;
    for (std::string t; in >> t;) tok.push_back(t);
    size_t i = 0;
    if (i < tok.size() && is_miopen_driver_word(tok[i])) i++;
    if (i == tok.size()) return true;  // blank or comment only
    out->op = tok[i++];
    if (out->op != "conv" && out->op != "convfp16" && out->op != "convbfp16") {
        *error = "unknown operation '" + out->op + "' (expected conv, convfp16 or convbfp16)";
        return false;
    }
    while (i < tok.size()) {
        const std::string &t = tok[i];
        if (t.size() < 2 || t[0] != '-') {
            *error = "expected a flag, got '" + t + "'";
            return false;
        }
        std::string value;
        bool is_long = t.rfind("--", 0) == 0;
        size_t eq = t.find('=');
        auto canonical = [](const std::string &name) {
            const DriverFlag *f = find_miopen_flag(name);
            return f ? std::string(f->name) : name;
        };
        if (is_long && eq != std::string::npos) {
            out->flags[canonical(t.substr(0, eq))] = t.substr(eq + 1);
            i++;
            continue;
        }
        // A flag takes the next token as its value unless that token is itself a flag (a
        // negative number is a value).
        if (i + 1 < tok.size() && (tok[i + 1][0] != '-' || (tok[i + 1].size() > 1 && isdigit((unsigned char)tok[i + 1][1])))) {
            value = tok[i + 1];
            i += 2;
        } else {
            i += 1;
        }
        out->flags[canonical(t)] = value;
    }
    return true;
}

bool problem_from_line(const DriverLine &line, ConvProblem *p, int *directions, std::string *error) {
    ConvProblem q;
    q.dtype = line.op == "convfp16" ? DType::F16 : line.op == "convbfp16" ? DType::BF16 : DType::F32;
    int pad_h = 0, pad_w = 0;
    int *pad_bottom = nullptr, *pad_right = nullptr;
    int pb = -1, pr = -1;
    struct {
        const char *flag;
        int *dst;
    } ints[] = {{"-n", &q.N},          {"-c", &q.C},          {"-H", &q.H},          {"-W", &q.W},
                {"-k", &q.K},          {"-y", &q.R},          {"-x", &q.S},          {"-p", &pad_h},
                {"-q", &pad_w},        {"-u", &q.stride_h},   {"-v", &q.stride_w},   {"-l", &q.dilation_h},
                {"-j", &q.dilation_w}, {"-g", &q.G},          {"--pad_bottom", &pb}, {"--pad_right", &pr}};
    (void)pad_bottom, (void)pad_right;
    *directions = 0;
    for (const auto &kv : line.flags) {
        const DriverFlag *def = find_miopen_flag(kv.first);
        if (!def) {
            *error = "unknown flag " + kv.first + " (not a MIOpenDriver convolution flag)";
            return false;
        }
        const std::string f = def->name, &v = kv.second;
        const std::string spelled = def->alias ? f + " (" + def->alias + ")" : f;
        if (def->kind == FlagKind::Refused) {
            *error = "MIOpenDriver flag " + spelled + " is not supported by convbwd: " + def->reason;
            return false;
        }
        if (def->kind == FlagKind::DefaultOnly) {
            if (!flag_accepts(*def, v)) {
                *error = "MIOpenDriver flag " + spelled + " " + v + " is not supported by convbwd: " + def->reason;
                return false;
            }
            continue;
        }
        if (def->kind != FlagKind::Problem) continue;  // -t, -i, -V: the caller's
        bool handled = false;
        for (auto &e : ints)
            if (f == e.flag) {
                if (!parse_int(v, e.dst)) {
                    *error = "flag " + f + " needs an integer, got '" + v + "'";
                    return false;
                }
                handled = true;
            }
        if (handled) continue;
        if (f == "-F") {
            if (!parse_int(v, directions) || *directions < 0 || *directions > 7) {
                *error = "flag -F needs a direction mask in [0, 7], got '" + v + "'";
                return false;
            }
            if (*directions & 1) {
                *error = "-F " + v + ": forward convolution (bit 1) is not supported; convbwd has backward-data (2) "
                         "and backward-weight (4)";
                return false;
            }
        } else if (f == "-I" || f == "-f" || f == "-O") {
            if (v != "NCHW" && v != "NHWC") {
                *error = "flag " + f + " = '" + v + "': only NCHW and NHWC are supported";
                return false;
            }
            if (f == "-I") q.layout = v == "NCHW" ? Layout::NCHW : Layout::NHWC;
        } else if (f == "-m") {
            if (v != "conv") {
                *error = "flag -m " + v + ": only -m conv is supported (transposed convolution is not)";
                return false;
            }
        } else if (f == "--spatial_dim") {
            if (v != "2") {
                *error = "flag " + f + " " + v + ": only 2 spatial dims are supported (1D: use -H 1)";
                return false;
            }
        }
    }
    q.pad_top = pad_h, q.pad_bottom = pb >= 0 ? pb : pad_h;
    q.pad_left = pad_w, q.pad_right = pr >= 0 ? pr : pad_w;
    if (*directions == 0) *directions = 6;
    *p = with_derived_output(q);
    return true;
}

std::vector<ShapeEntry> load_shapes(const std::string &path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open shape file " + path);
    std::vector<ShapeEntry> out;
    std::string line;
    for (int no = 1; std::getline(in, line); no++) {
        DriverLine d;
        std::string err;
        if (!tokenize_driver_line(line, &d, &err))
            throw std::runtime_error(path + ":" + std::to_string(no) + ": " + err);
        if (d.op.empty()) continue;
        ShapeEntry e;
        if (!problem_from_line(d, &e.problem, &e.directions, &err))
            throw std::runtime_error(path + ":" + std::to_string(no) + ": " + err);
        e.text = trim(line.substr(0, comment_start(line)));
        e.comment = d.comment;
        e.line_no = no;
        out.push_back(e);
    }
    return out;
}

std::string to_driver_line(const ConvProblem &p, int directions) {
    std::ostringstream s;
    s << (p.dtype == DType::F32 ? "conv" : p.dtype == DType::F16 ? "convfp16" : "convbfp16") << " -n " << p.N
      << " -c " << p.C << " -H " << p.H << " -W " << p.W << " -k " << p.K << " -y " << p.R << " -x " << p.S
      << " -p " << p.pad_top << " -q " << p.pad_left << " -u " << p.stride_h << " -v " << p.stride_w << " -l "
      << p.dilation_h << " -j " << p.dilation_w << " -g " << p.G << " -F " << directions;
    if (p.layout == Layout::NHWC) s << " -I NHWC -f NHWC -O NHWC";
    if (p.pad_bottom != p.pad_top) s << " --pad_bottom " << p.pad_bottom;
    if (p.pad_right != p.pad_left) s << " --pad_right " << p.pad_right;
    return s.str();
}

std::string shapes_dir() {
    if (const char *e = std::getenv("CONVBWD_SHAPES_DIR")) return e;
#ifdef CONVBWD_SHAPES_DIR
    return CONVBWD_SHAPES_DIR;
#else
    return "shapes";
#endif
}

}  // namespace convbwd
