#include "common/shapes.h"

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

bool tokenize_driver_line(const std::string &line_in, DriverLine *out, std::string *error) {
    *out = DriverLine{};
    std::string line = line_in;
    size_t hash = line.find('#');
    if (hash != std::string::npos) {
        out->comment = trim(line.substr(hash + 1));
        line = line.substr(0, hash);
    }
    std::istringstream in(line);
    std::vector<std::string> tok;
    for (std::string t; in >> t;) tok.push_back(t);
    size_t i = 0;
    if (i < tok.size() && (tok[i] == "MIOpenDriver" || (tok[i].size() > 13 && tok[i].substr(tok[i].size() - 13) == "/MIOpenDriver")))
        i++;
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
        if (is_long && eq != std::string::npos) {
            out->flags[t.substr(0, eq)] = t.substr(eq + 1);
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
        out->flags[t] = value;
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
        const std::string &f = kv.first, &v = kv.second;
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
        } else if (f == "-I" || f == "-f" || f == "-O" || f == "--in_layout" || f == "--fil_layout" ||
                   f == "--out_layout") {
            if (v != "NCHW" && v != "NHWC") {
                *error = "flag " + f + " = '" + v + "': only NCHW and NHWC are supported";
                return false;
            }
            if (f == "-I" || f == "--in_layout") q.layout = v == "NCHW" ? Layout::NCHW : Layout::NHWC;
        } else if (f == "-m" || f == "--mode") {
            if (v != "conv") {
                *error = "flag -m " + v + ": only -m conv is supported (transposed convolution is not)";
                return false;
            }
        } else if (f == "--spatial_dim" || f == "-_") {
            if (v != "2") {
                *error = "flag " + f + " " + v + ": only 2 spatial dims are supported (1D: use -H 1)";
                return false;
            }
        }
        // Other flags (timing, verification, output) belong to the caller.
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
        size_t hash = line.find('#');
        e.text = trim(line.substr(0, hash));
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
