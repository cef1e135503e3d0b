// convbwd-driver as a user runs it (the built binary, as a subprocess): every supported flag,
// every refusal, --shapes, the JSON rows (parsed by a strict parser), --load-dir / --save-dir;
// and common/npy.h directly (round trips of every dtype, refusals naming the file).
#include <doctest/doctest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/npy.h"
#include "common/reference.h"
#include "common/shapes.h"
#include "common/tensor.h"
#include "common/verify.h"
#include "convbwd/convbwd.h"

#ifndef CONVBWD_DRIVER_PATH
#error "CONVBWD_DRIVER_PATH (the convbwd-driver binary) must be defined by the build"
#endif

using namespace convbwd;
namespace fs = std::filesystem;

namespace {

struct TempDir {
    std::string path;
    TempDir() {
        char t[] = "/tmp/convbwd_driver_test_XXXXXX";
        REQUIRE(mkdtemp(t) != nullptr);
        path = t;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    std::string operator/(const std::string &name) const { return path + "/" + name; }
};

std::string slurp(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string quote(const std::string &s) {  // one shell word
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::vector<std::string> lines_of(const std::string &text) {
    std::vector<std::string> v;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);)
        if (!l.empty()) v.push_back(l);
    return v;
}

struct Run {
    int rc = -1;
    std::string out, err;
    std::vector<std::string> lines() const { return lines_of(out); }
};

// Runs the driver with `args` (shell words, already quoted where needed).
Run driver(const std::string &args) {
    TempDir d;
    std::string cmd = quote(CONVBWD_DRIVER_PATH) + " " + args + " >" + d / "out" + " 2>" + d / "err";
    int st = std::system(cmd.c_str());
    Run r;
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = slurp(d / "out");
    r.err = slurp(d / "err");
    return r;
}

// A strict JSON parser (RFC 8259), enough to reject what a careless writer gets wrong:
// unescaped quotes and control characters, NaN, trailing garbage.
struct Json {
    enum Type { Null, Bool, Number, String, Object, Array } type = Null;
    bool b = false;
    double n = 0;
    std::string s;
    std::map<std::string, Json> o;
    std::vector<Json> a;
    bool has(const std::string &k) const { return type == Object && o.count(k); }
    const Json &operator[](const std::string &k) const { return o.at(k); }
};

struct JsonParser {
    const std::string &t;
    size_t i = 0;
    void ws() {
        while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')) i++;
    }
    bool lit(const char *w) {
        size_t n = std::strlen(w);
        if (t.compare(i, n, w) != 0) return false;
        i += n;
        return true;
    }
    bool str(std::string *out) {
        if (i >= t.size() || t[i] != '"') return false;
        for (i++; i < t.size(); i++) {
            unsigned char c = t[i];
            if (c == '"') return i++, true;
            if (c < 0x20) return false;
            if (c != '\\') {
                *out += (char)c;
                continue;
            }
            if (++i >= t.size()) return false;
            switch (t[i]) {
            case '"': *out += '"'; break;
            case '\\': *out += '\\'; break;
            case '/': *out += '/'; break;
            case 'b': *out += '\b'; break;
            case 'f': *out += '\f'; break;
            case 'n': *out += '\n'; break;
            case 'r': *out += '\r'; break;
            case 't': *out += '\t'; break;
            case 'u': {
                if (i + 4 >= t.size()) return false;
                unsigned v = 0;
                for (int k = 1; k <= 4; k++) {
                    char h = t[i + k];
                    if (!std::isxdigit((unsigned char)h)) return false;
                    v = v * 16 + (unsigned)(std::isdigit((unsigned char)h) ? h - '0' : std::tolower(h) - 'a' + 10);
                }
                i += 4;
                if (v < 0x80) *out += (char)v;
                else if (v < 0x800) *out += (char)(0xc0 | v >> 6), *out += (char)(0x80 | (v & 0x3f));
                else *out += (char)(0xe0 | v >> 12), *out += (char)(0x80 | ((v >> 6) & 0x3f)), *out += (char)(0x80 | (v & 0x3f));
                break;
            }
            default: return false;
            }
        }
        return false;
    }
    bool value(Json *v) {
        ws();
        if (i >= t.size()) return false;
        char c = t[i];
        if (c == '{') {
            v->type = Json::Object;
            i++;
            ws();
            if (i < t.size() && t[i] == '}') return i++, true;
            while (true) {
                ws();
                std::string k;
                if (!str(&k)) return false;
                ws();
                if (i >= t.size() || t[i++] != ':') return false;
                if (v->o.count(k) || !value(&v->o[k])) return false;  // duplicate keys are an error too
                ws();
                if (i < t.size() && t[i] == ',') { i++; continue; }
                if (i < t.size() && t[i] == '}') return i++, true;
                return false;
            }
        }
        if (c == '[') {
            v->type = Json::Array;
            i++;
            ws();
            if (i < t.size() && t[i] == ']') return i++, true;
            while (true) {
                v->a.emplace_back();
                if (!value(&v->a.back())) return false;
                ws();
                if (i < t.size() && t[i] == ',') { i++; continue; }
                if (i < t.size() && t[i] == ']') return i++, true;
                return false;
            }
        }
        if (c == '"') return v->type = Json::String, str(&v->s);
        if (lit("true")) return v->type = Json::Bool, v->b = true, true;
        if (lit("false")) return v->type = Json::Bool, v->b = false, true;
        if (lit("null")) return v->type = Json::Null, true;
        size_t start = i;
        if (i < t.size() && t[i] == '-') i++;
        if (i >= t.size() || !std::isdigit((unsigned char)t[i])) return false;
        if (t[i] == '0') i++;
        else while (i < t.size() && std::isdigit((unsigned char)t[i])) i++;
        if (i < t.size() && t[i] == '.') {
            if (++i >= t.size() || !std::isdigit((unsigned char)t[i])) return false;
            while (i < t.size() && std::isdigit((unsigned char)t[i])) i++;
        }
        if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
            if (++i < t.size() && (t[i] == '+' || t[i] == '-')) i++;
            if (i >= t.size() || !std::isdigit((unsigned char)t[i])) return false;
            while (i < t.size() && std::isdigit((unsigned char)t[i])) i++;
        }
        v->type = Json::Number;
        v->n = std::strtod(t.substr(start, i - start).c_str(), nullptr);
        return true;
    }
};

bool parse_json(const std::string &text, Json *out) {
    JsonParser p{text};
    if (!p.value(out)) return false;
    p.ws();
    return p.i == text.size();
}

// Every stdout line of a run as a JSON object (a line that does not parse fails the test).
std::vector<Json> rows_of(const Run &r) {
    std::vector<Json> rows;
    for (const std::string &l : r.lines()) {
        Json j;
        CAPTURE(l);
        REQUIRE(parse_json(l, &j));
        REQUIRE(j.type == Json::Object);
        rows.push_back(j);
    }
    return rows;
}

bool contains(const std::string &hay, const std::string &needle) { return hay.find(needle) != std::string::npos; }

// A command line the driver refuses before running anything: exit code 2, `needle` in stderr,
// no rows on stdout.
Run refused(const std::string &args, const std::string &needle) {
    Run r = driver(args);
    CAPTURE(args);
    CAPTURE(r.err);
    CHECK(r.rc == 2);
    CHECK(contains(r.err, needle));
    CHECK(r.out.empty());
    return r;
}

// The JSON schema of a result row: required keys with their types.
void check_schema(const Json &r, bool with_peer) {
    std::string text;
    for (const auto &kv : r.o) text += kv.first + " ";
    CAPTURE(text);
    for (const char *k : {"problem", "direction", "dtype", "layout", "target", "kernel"}) {
        REQUIRE_MESSAGE(r.has(k), "missing ", k);
        CHECK_MESSAGE(r[k].type == Json::String, k, " is not a string");
    }
    for (const char *k : {"time_ms", "tflops", "gbps"}) {
        REQUIRE_MESSAGE(r.has(k), "missing ", k);
        CHECK((r[k].type == Json::Number || r[k].type == Json::Null));
    }
    REQUIRE(r.has("verified"));
    CHECK((r["verified"].type == Json::Bool || r["verified"].type == Json::Null));
    CHECK((r["direction"].s == "bwd_data" || r["direction"].s == "bwd_weight"));
    CHECK((r["dtype"].s == "f32" || r["dtype"].s == "f16" || r["dtype"].s == "bf16"));
    CHECK((r["layout"].s == "nchw" || r["layout"].s == "nhwc"));
    CHECK(r["problem"].s.rfind("conv", 0) == 0);
    ConvProblem p;
    DriverLine dl;
    std::string err;
    int dirs = 0;
    CHECK_MESSAGE((tokenize_driver_line(r["problem"].s, &dl, &err) && problem_from_line(dl, &p, &dirs, &err)),
                  "problem is not a driver line: ", err);
    CHECK(dirs == (r["direction"].s == "bwd_data" ? 2 : 4));
    // The problem's tuning-database key, one token that starts with the row's direction.
    REQUIRE(r.has("problem_key"));
    CHECK(r["problem_key"].s.rfind(r["direction"].s + "-" + r["dtype"].s + "-" + r["layout"].s + "-", 0) == 0);
    CHECK(r["problem_key"].s.find(' ') == std::string::npos);
    if (with_peer) {
        for (const char *k : {"peer", "peer_time_ms", "peer_verified"}) REQUIRE_MESSAGE(r.has(k), "missing ", k);
        CHECK(r["peer"].type == Json::String);
        CHECK((r["peer_time_ms"].type == Json::Number || r["peer_time_ms"].type == Json::Null));
        CHECK((r["peer_verified"].type == Json::Bool || r["peer_verified"].type == Json::Null));
    }
}

const std::string kSmall = "-n 2 -c 4 -H 6 -W 7 -k 6 -y 3 -x 3 -p 1 -q 1";

std::string shapes(const char *name) { return quote(shapes_dir() + "/" + name); }

std::vector<uint8_t> npy_bytes(int major, const std::string &header_dict, const std::vector<uint8_t> &data) {
    std::string h = header_dict;
    size_t pre = major == 1 ? 10 : 12;
    while ((pre + h.size() + 1) % 64) h += ' ';
    h += '\n';
    std::vector<uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', (uint8_t)major, 0};
    b.push_back((uint8_t)(h.size() & 0xff)), b.push_back((uint8_t)(h.size() >> 8));
    if (major != 1) b.push_back(0), b.push_back(0);
    b.insert(b.end(), h.begin(), h.end());
    b.insert(b.end(), data.begin(), data.end());
    return b;
}

void write_bytes(const std::string &path, const std::vector<uint8_t> &b) {
    std::ofstream out(path, std::ios::binary);
    out.write((const char *)b.data(), (std::streamsize)b.size());
}

std::string npy_error(const std::function<void()> &f) {
    try {
        f();
    } catch (const NpyError &e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST_SUITE("driver") {

TEST_CASE("driver: every MIOpenDriver problem flag reaches the problem, verified") {
    struct Case {
        const char *args;
        std::vector<const char *> in_problem;  // substrings of the normalised line
        const char *layout;
    } cases[] = {
        {"", {"-n 2 -c 4 -H 6 -W 7 -k 6 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -g 1"}, "nchw"},
        {"-n 3", {"-n 3 "}, "nchw"},
        {"-c 6 -k 4 -g 2", {"-c 6 ", "-k 4 ", "-g 2 "}, "nchw"},
        {"-H 9 -W 5", {"-H 9 -W 5 "}, "nchw"},
        {"-y 1 -x 2", {"-y 1 -x 2 "}, "nchw"},
        {"-p 0 -q 2", {"-p 0 -q 2 "}, "nchw"},
        {"-u 2 -v 3", {"-u 2 -v 3 "}, "nchw"},
        {"-l 2 -j 1", {"-l 2 -j 1 "}, "nchw"},
        {"-I NHWC -f NHWC -O NHWC", {"-I NHWC"}, "nhwc"},
        {"-I NCHW -f NCHW -O NCHW", {"-g 1 "}, "nchw"},
        {"--in_layout NHWC", {"-I NHWC"}, "nhwc"},
        {"--batchsize 3 --in_channels 2 --out_channels 8 --fil_h 1 --fil_w 1 --pad_h 0 --pad_w 0",
         {"-n 3 -c 2 ", "-k 8 -y 1 -x 1 -p 0 -q 0 "}, "nchw"},
        {"--conv_stride_h 2 --conv_stride_w 2 --dilation_h 2 --dilation_w 2 --group_count 2",
         {"-u 2 -v 2 -l 2 -j 2 -g 2 "}, "nchw"},
        {"-m conv --spatial_dim 2", {"conv -n 2 "}, "nchw"},
        {"--mode=conv -_ 2", {"conv -n 2 "}, "nchw"},
        {"--pad_bottom 0 --pad_right 2", {"--pad_bottom 0", "--pad_right 2"}, "nchw"},
        {"-w 1 -P 0 -s 0 -S -1 -z default -o 0 -r 0", {"-n 2 "}, "nchw"},
    };
    for (const Case &c : cases) {
        Run r = driver("conv " + kSmall + " " + c.args + " -V 1 --json");
        CAPTURE(c.args);
        CAPTURE(r.err);
        CHECK(r.rc == 0);
        std::vector<Json> rows = rows_of(r);
        REQUIRE(rows.size() == 2);
        for (const Json &row : rows) {
            check_schema(row, false);
            CHECK(row["verified"].type == Json::Bool);
            CHECK(row["verified"].b);
            CHECK(row["layout"].s == c.layout);
            for (const char *s : c.in_problem) CHECK_MESSAGE(contains(row["problem"].s, s), row["problem"].s, " lacks ", s);
        }
    }
}

TEST_CASE("driver: -F selects the directions (0 = every direction)") {
    const std::pair<const char *, std::vector<std::string>> cases[] = {
        {"-F 2", {"bwd_data"}},
        {"-F 4", {"bwd_weight"}},
        {"-F 6", {"bwd_data", "bwd_weight"}},
        {"-F 0", {"bwd_data", "bwd_weight"}},
        {"", {"bwd_data", "bwd_weight"}},
        {"--forw 4", {"bwd_weight"}},
    };
    for (const auto &c : cases) {
        Run r = driver("conv " + kSmall + " " + c.first + " --json");
        CAPTURE(c.first);
        CHECK(r.rc == 0);
        std::vector<Json> rows = rows_of(r);
        REQUIRE(rows.size() == c.second.size());
        for (size_t i = 0; i < rows.size(); i++) CHECK(rows[i]["direction"].s == c.second[i]);
    }
}

TEST_CASE("driver: conv / convfp16 / convbfp16 select the dtype, every layout verifies") {
    for (const char *layout : {"NCHW", "NHWC"})
        for (auto op_dtype : std::vector<std::pair<const char *, const char *>>{
                 {"conv", "f32"}, {"convfp16", "f16"}, {"convbfp16", "bf16"}}) {
            const char *op = op_dtype.first, *dtype = op_dtype.second;  // (not a structured binding: CAPTURE)
            Run r = driver(std::string(op) + " " + kSmall + " -I " + layout + " -V 1 --json");
            CAPTURE(op);
            CAPTURE(layout);
            CHECK(r.rc == 0);
            std::vector<Json> rows = rows_of(r);
            REQUIRE(rows.size() == 2);
            for (const Json &row : rows) {
                CHECK(row["dtype"].s == dtype);
                CHECK(row["problem"].s.rfind(std::string(op) + " ", 0) == 0);
                CHECK(row["verified"].b);
            }
        }
}

TEST_CASE("driver: -t 1 -i N times the median; -t 0 and -V 0 leave null") {
    Run r = driver("conv " + kSmall + " -t 1 -i 5 --warmup 1 --json");
    CHECK(r.rc == 0);
    for (const Json &row : rows_of(r)) {
        check_schema(row, false);
        REQUIRE(row["time_ms"].type == Json::Number);
        CHECK(row["time_ms"].n > 0);
        CHECK(row["tflops"].n > 0);
        CHECK(row["gbps"].n > 0);
        CHECK(row["iters"].n == 5);
        CHECK(row["buffer_sets"].n == 3);  // small inputs rotate among three sets
        const double flops = row["flops"].n;
        CHECK(row["tflops"].n == doctest::Approx(flops / row["time_ms"].n / 1e9).epsilon(1e-6));
    }
    r = driver("conv " + kSmall + " -V 0 --json");
    CHECK(r.rc == 0);
    for (const Json &row : rows_of(r)) {
        CHECK(row["time_ms"].type == Json::Null);
        CHECK(row["verified"].type == Json::Null);
    }
    r = driver("conv " + kSmall + " -t 1 -i 3");  // text report
    CHECK(r.rc == 0);
    CHECK(contains(r.out, "median of 3"));
    CHECK(contains(r.out, "verify ok"));
}

TEST_CASE("driver: --kernel forces a kernel, or is refused with the reason") {
    const char *bwdd = "bwdd_f32_nchw_any_any_host_c1x4p", *bwdw_k3 = "bwdw_f32_nchw_s1_k3_host_c2k4g";
    Run r = driver("conv " + kSmall + " --kernel " + bwdd + " -V 1 --json");
    CHECK(r.rc == 0);
    std::vector<Json> rows = rows_of(r);
    REQUIRE(rows.size() == 1);  // the kernel picks its direction when -F does not
    CHECK(rows[0]["kernel"].s == bwdd);
    CHECK(rows[0]["direction"].s == "bwd_data");
    CHECK(rows[0]["verified"].b);

    r = driver("conv " + kSmall + " -y 1 -x 1 -p 0 -q 0 --kernel " + bwdw_k3 + " --json");
    CHECK(r.rc == 1);
    CHECK(contains(r.err, "cannot implement"));
    rows = rows_of(r);
    REQUIRE(rows.size() == 1);
    CHECK(rows[0]["verified"].b == false);
    CHECK(contains(rows[0]["error"].s, "cannot implement"));

    r = driver("conv " + kSmall + " --kernel no_such_kernel");
    CHECK(r.rc == 2);
    CHECK(contains(r.err, "no such kernel"));
    CHECK(r.out.empty());
}

TEST_CASE("driver: --target host runs; a target without kernels is refused") {
    Run r = driver("conv " + kSmall + " --target host --json");
    CHECK(r.rc == 0);
    for (const Json &row : rows_of(r)) CHECK(row["target"].s == "host");
    for (auto name_t : std::vector<std::pair<const char *, convbwd_target>>{
             {"opencl", CONVBWD_TARGET_OPENCL}, {"cuda", CONVBWD_TARGET_CUDA}, {"amdgpu", CONVBWD_TARGET_AMDGPU}}) {
        const char *name = name_t.first;  // (not a structured binding: CAPTURE takes it by reference)
        const convbwd_target t = name_t.second;
        int n = 0;
        for (int i = 0; i < convbwd_kernel_count(); i++) {
            convbwd_kernel_desc d;
            convbwd_kernel_info(i, &d);
            n += d.target == t;
        }
        if (n) continue;  // a build with that target: not a refusal
        r = driver("conv " + kSmall + " --target " + name);
        CAPTURE(name);
        CHECK(r.rc == 2);
        CHECK(contains(r.err, std::string("no ") + name + " kernels"));
        CHECK(r.out.empty());
    }
    r = driver("conv " + kSmall + " --target tpu");
    CHECK(r.rc == 2);
    CHECK(contains(r.err, "unknown target"));
}

TEST_CASE("driver: --list-kernels lists every kernel of the library") {
    Run r = driver("--list-kernels");
    CHECK(r.rc == 0);
    std::vector<std::string> lines = r.lines();
    // The registry's kernels first (after a header); a build with amdgpu code objects then lists
    // those under a second header.
    REQUIRE(lines.size() >= (size_t)convbwd_kernel_count() + 1);  // + header
    for (int i = 0; i < convbwd_kernel_count(); i++) {
        convbwd_kernel_desc d;
        convbwd_kernel_info(i, &d);
        CHECK(lines[i + 1].rfind(std::string(d.name) + " ", 0) == 0);
    }
    r = driver("--list-kernels --json");
    std::vector<Json> rows = rows_of(r);
    size_t registered = 0, amd = 0;
    for (const Json &row : rows) {
        if (row.has("arch")) {  // an amdgpu code object: metadata, not a dispatchable kernel
            amd++;
            for (const char *k : {"kernel", "target", "vgpr", "sgpr", "lds_bytes", "scratch_bytes", "waves_per_simd"})
                CHECK(row.has(k));
            continue;
        }
        registered++;
        for (const char *k : {"kernel", "direction", "dtype", "layout", "target"}) CHECK(row.has(k));
    }
    CHECK(registered == (size_t)convbwd_kernel_count());
    CHECK(amd == lines.size() - (convbwd_kernel_count() + 1) - (amd ? 1 : 0));  // + its header
}

TEST_CASE("driver: MIOpenDriver features convbwd lacks are refused, never ignored") {
    struct Case {
        std::string args;
        const char *needle;
    } cases[] = {
        {"convint8 " + kSmall, "int8 convolution is not supported"},
        {"convfp8 " + kSmall, "not supported"},
        {"pool " + kSmall, "not a convolution"},
        {"conv " + kSmall + " -m trans", "transposed"},
        {"conv " + kSmall + " -F 1", "forward"},
        {"conv " + kSmall + " -F 3", "forward"},
        {"conv " + kSmall + " -s 1", "search"},
        {"conv " + kSmall + " -S 3", "--kernel"},
        {"conv " + kSmall + " -o 1", "--save-dir"},
        {"conv " + kSmall + " -d in.bin", "--load-dir"},
        {"conv " + kSmall + " -e w.bin", "--load-dir"},
        {"conv " + kSmall + " -b 1", "bias"},
        {"conv " + kSmall + " -z same", "padding mode"},
        {"conv " + kSmall + " -Y 1", "transposed"},
        {"conv " + kSmall + " -! 4", "3-D"},
        {"conv " + kSmall + " --spatial_dim 3", "2 spatial dims"},
        {"conv " + kSmall + " -I NCDHW", "only NCHW and NHWC"},
        {"conv " + kSmall + " -I NHWC -f NCHW", "mixed layouts"},
        {"conv " + kSmall + " -c 6 -g 4", "does not divide"},
        {"conv " + kSmall + " -H 1 -p 0", "does not fit"},
        {"conv " + kSmall + " -t 2", "0 or 1"},
        {"conv " + kSmall + " -i 0", "-i needs an integer >= 1"},
        {"conv " + kSmall + " -n", "-n needs a value"},
        {"conv " + kSmall + " -n x", "-n needs an integer"},
        {"conv " + kSmall + " --compare cudnn", "onednn"},
        {"conv " + kSmall + " --json=1", "takes no value"},
        {"conv " + kSmall + " stray", "unexpected argument 'stray'"},
        {"--shapes " + shapes("edge.txt") + " --load-dir /tmp", "not --shapes"},
        {"--shapes /nonexistent/shapes.txt", "cannot open"},
        {"-n 2", "no problem"},
    };
    for (const Case &c : cases) refused(c.args, c.needle);
    // An unknown flag lists the valid ones.
    Run r = driver("conv " + kSmall + " --frobnicate 3");
    CHECK(r.rc == 2);
    CHECK(contains(r.err, "unknown flag --frobnicate"));
    CHECK(contains(r.err, "valid flags:"));
    for (const char *f : {" -n|--batchsize", " -F|--forw", " -I|--in_layout", " --spatial_dim", " --target", " --kernel",
                          " --shapes", " --json", " --load-dir", " --save-dir", " --compare", " --list-kernels"})
        CHECK_MESSAGE(contains(r.err, f), "valid flags lack ", f);
}

// Issue 18, items 1 and 6: sizes are validated (by the library, in 64 bits) before any tensor is
// allocated, and a stride of 0 is named as such.
TEST_CASE("driver: huge or overflowing sizes are refused before allocating; -u 0 names the stride") {
    struct Case {
        std::string args;
        const char *needle;
    } cases[] = {
        {"conv -n 1000000000 -c 1000000000 -H 8 -W 8 -k 4", "overflows int64"},
        {"conv -n 1 -c 1 -H 8 -W 8 -k 4 -p 1000000000", "2^31-1 bytes"},
        {"conv -n 1 -c 3 -H 1000000000 -W 1 -k 1", "dx: problem.n * c * h * w = 1 * 3 * 1000000000 * 1"},
        {"conv -n 1 -c 1 -H 8 -W 8 -k 4 -y 4 -p 1000000000 -l 1000000000", "problem.dilation_h = 1000000000: dilated filter height 3000000001"},
        {"conv " + kSmall + " -u 0", "problem.stride_h = 0 must be >= 1"},
        {"conv " + kSmall + " -v 0", "problem.stride_w = 0 must be >= 1"},
        {"conv " + kSmall + " -l 0", "problem.dilation_h = 0 must be >= 1"},
        {"convfp16 -n 1 -c 16384 -H 1 -W 1 -k 32768 -F 4", "the f32 partial sums of dw"},
    };
    for (const Case &c : cases) {
        CAPTURE(c.args);
        CHECK(!contains(refused(c.args, c.needle).err, "does not fit"));
    }
}

TEST_CASE("driver: --shapes edge.txt -V 1 verifies every line, one JSON row per direction") {
    const std::vector<ShapeEntry> entries = load_shapes(shapes_dir() + "/edge.txt");
    REQUIRE(!entries.empty());
    Run r = driver("--shapes " + shapes("edge.txt") + " -V 1 --json");
    CAPTURE(r.err);
    CHECK(r.rc == 0);
    std::vector<Json> rows = rows_of(r);
    size_t want = 0;
    for (const ShapeEntry &e : entries) want += (e.directions & 2 ? 1 : 0) + (e.directions & 4 ? 1 : 0);
    REQUIRE(rows.size() == want);
    size_t k = 0;
    for (const ShapeEntry &e : entries)
        for (int bit : {2, 4}) {
            if (!(e.directions & bit)) continue;
            const Json &row = rows[k++];
            check_schema(row, false);
            CHECK(row["verified"].type == Json::Bool);
            CHECK(row["verified"].b);
            CHECK(row["line"].n == e.line_no);
            CHECK(row["direction"].s == (bit == 2 ? "bwd_data" : "bwd_weight"));
            CHECK(row["problem"].s == to_driver_line(e.problem, bit));
        }
    // The progress line, one per problem.
    CHECK(contains(r.err, "[1/" + std::to_string(entries.size()) + "] conv "));
    CHECK(contains(r.err, "[" + std::to_string(entries.size()) + "/" + std::to_string(entries.size()) + "] conv "));
}

// Issue 18, item 5: a shape line's unknown flag was ignored (a different problem ran, rc 0) though
// the command line refuses it; "-# 1" in a verbatim MIOpen 3-D line was taken for a comment;
// "convbwd-driver MIOpenDriver conv ..." was refused though shape files take the prefix.
TEST_CASE("driver: a shape line's unknown or refused flag is an error naming the file, line and flag") {
    TempDir d;
    const std::string good = "conv -n 1 -c 2 -H 5 -W 5 -k 3 -y 3 -x 3 -p 1 -q 1 -F 6";
    struct Case {
        std::string line;
        const char *needle;
    } cases[] = {
        {good + " --bogus 5", ":2: unknown flag --bogus"},
        {good + " -S 5", ":2: MIOpenDriver flag -S (--solution) 5 is not supported by convbwd"},
        {good + " -z same", ":2: MIOpenDriver flag -z (--pad_mode) same is not supported by convbwd"},
        {good + " -s 1", ":2: MIOpenDriver flag -s (--search) 1 is not supported by convbwd"},
        {good + " --json", ":2: unknown flag --json"},
        {good + " -b 1  # bias", ":2: MIOpenDriver flag -b (--bias) is not supported by convbwd"},
        // A verbatim MIOpen 3-D line (short 3-D flags, -# is the depth stride): refused as 3-D.
        {"MIOpenDriver conv -n 1 -c 4 -! 8 -H 8 -W 8 -k 4 -@ 3 -y 3 -x 3 -$ 1 -p 1 -q 1 -# 1 -u 1 -v 1 -^ 1 -l 1 "
         "-j 1 -m conv -g 1 -F 2 -t 1",
         ":2: MIOpenDriver flag -! (--in_d) is not supported by convbwd: 3-D convolution is not supported"},
        {"conv -n 1 -c 4 -H 8 -W 8 -k 4 -y 3 -x 3 -p 1 -q 1 -# 2 -u 1 -v 1  # only the depth stride",
         ":2: MIOpenDriver flag -# (--conv_stride_d) is not supported by convbwd: 3-D convolution"},
    };
    for (const Case &c : cases) {
        const std::string file = d / "shapes.txt";
        {
            std::ofstream f(file);
            f << "# header comment\n" << c.line << "\n" << good << "\n";
        }
        CAPTURE(c.line);
        refused("--shapes " + quote(file) + " --json", file + c.needle);
        // The library's reader (tests, tools) refuses it the same way.
        std::string what = "(no error)";
        try {
            load_shapes(file);
        } catch (const std::exception &e) {
            what = e.what();
        }
        CHECK(contains(what, file + c.needle));
    }
}

TEST_CASE("driver: shape lines take MIOpenDriver's long names, its -t/-i/-V, and '#' only as a word") {
    TempDir d;
    const std::string file = d / "shapes.txt";
    {
        std::ofstream f(file);
        f << "MIOpenDriver conv --batchsize 2 --in_channels 3 --in_h 5 --in_w 6 --out_channels 4 --fil_h 3 --fil_w 1 "
             "--pad_h 1 --pad_w 0 --conv_stride_h 2 --forw 4 -t 1 -i 5 -V 0 -w 1  # long names, logged form\n"
             "/opt/rocm/bin/MIOpenDriver conv -n 1 -c 2 -H 5 -W 5 -k 3 -y 3 -x 3 -p 1 -q 1 -F 2 #no space after '#'\n";
    }
    std::vector<ShapeEntry> e = load_shapes(file);
    REQUIRE(e.size() == 2);
    CHECK(e[0].problem.N == 2);
    CHECK(e[0].problem.C == 3);
    CHECK(e[0].problem.H == 5);
    CHECK(e[0].problem.W == 6);
    CHECK(e[0].problem.K == 4);
    CHECK(e[0].problem.R == 3);
    CHECK(e[0].problem.S == 1);
    CHECK(e[0].problem.pad_top == 1);
    CHECK(e[0].problem.stride_h == 2);
    CHECK(e[0].directions == 4);
    CHECK(e[0].comment == "long names, logged form");
    CHECK(e[1].comment == "no space after '#'");
    // The command line overrides a long name of the file (both mean -n).
    Run r = driver("--shapes " + quote(file) + " -n 1 -V 1 --json");
    CAPTURE(r.err);
    CHECK(r.rc == 0);
    std::vector<Json> rows = rows_of(r);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0]["problem"].s.rfind("conv -n 1 -c 3 -H 5 -W 6 -k 4 -y 3 -x 1 -p 1 -q 0 -u 2 ", 0) == 0);
    for (const Json &row : rows) CHECK(row["verified"].b);
}

TEST_CASE("driver: a logged command line runs with its MIOpenDriver prefix") {
    for (const std::string prefix : {"MIOpenDriver", "/opt/rocm/bin/MIOpenDriver"}) {
        Run r = driver(prefix + " conv " + kSmall + " -F 2 -t 1 -V 1 --json");
        CAPTURE(prefix);
        CAPTURE(r.err);
        CHECK(r.rc == 0);
        std::vector<Json> rows = rows_of(r);
        REQUIRE(rows.size() == 1);
        CHECK(rows[0]["problem"].s.rfind("conv -n 2 -c 4 -H 6 -W 7 -k 6 ", 0) == 0);
        CHECK(rows[0]["verified"].b);
    }
    // The prefix alone, or before a refused operation, is still refused.
    CHECK(driver("MIOpenDriver").rc == 2);
    Run r = driver("MIOpenDriver convint8 " + kSmall);
    CHECK(r.rc == 2);
    CHECK(contains(r.err, "int8 convolution is not supported"));
}

TEST_CASE("driver: flags beside --shapes override every line") {
    const size_t n = load_shapes(shapes_dir() + "/edge.txt").size();
    Run r = driver("convfp16 --shapes " + shapes("edge.txt") + " -n 1 -F 4 -I NHWC -V 1 --json");
    CAPTURE(r.err);
    CHECK(r.rc == 0);
    std::vector<Json> rows = rows_of(r);
    REQUIRE(rows.size() == n);
    for (const Json &row : rows) {
        CHECK(row["direction"].s == "bwd_weight");
        CHECK(row["dtype"].s == "f16");
        CHECK(row["layout"].s == "nhwc");
        CHECK(row["problem"].s.rfind("convfp16 -n 1 ", 0) == 0);
        CHECK(row["verified"].b);
    }
}

TEST_CASE("driver: JSON rows are valid JSON with the schema, strings escaped") {
    // A shape file whose path needs escaping: the row's "shapes" field carries it.
    TempDir d;
    const std::string weird = d / "we\"ird\\name\ttab.txt";
    {
        std::ofstream f(weird);
        f << "conv -n 1 -c 2 -H 5 -W 5 -k 3 -y 3 -x 3 -p 1 -q 1 -F 6\n";
    }
    Run r = driver("--shapes " + quote(weird) + " -t 1 -i 2 --compare onednn --json");
    CAPTURE(r.err);
    std::vector<Json> rows = rows_of(r);
    REQUIRE(rows.size() == 2);
    for (const Json &row : rows) {
        check_schema(row, true);
        CHECK(row["peer"].s == "onednn");
        REQUIRE(row.has("shapes"));
        CHECK(row["shapes"].s == weird);
        CHECK(row["time_ms"].type == Json::Number);
        CHECK(row["verified"].b);
    }
    // oneDNN built in: the peer ran and verified. Without: the rows say why, and convbwd's run
    // still succeeds.
    CHECK(r.rc == 0);
#ifdef CONVBWD_WITH_ONEDNN
    for (const Json &row : rows) CHECK(row["peer_verified"].type == Json::Bool);
#else
    for (const Json &row : rows) CHECK(contains(row["peer_note"].s, "without oneDNN"));
#endif
}

TEST_CASE("npy: round trip of every dtype and layout is bit-identical") {
    TempDir d;
    std::mt19937 rng(7);
    for (DType t : {DType::F32, DType::F16, DType::BF16})
        for (Layout l : {Layout::NCHW, Layout::NHWC}) {
            CAPTURE(to_string(t));
            CAPTURE(to_string(l));
            HostTensor a({2, 3, 4, 5}, t, l);
            a.fill_random_uniform(rng, -3.0f, 3.0f);  // not integers: every mantissa bit matters
            const std::string path = d / "a.npy";
            npy_save_tensor(path, a);
            NpyArray raw = npy_read(path);
            CHECK(raw.descr == (t == DType::F16 ? "<f2" : "<f4"));
            CHECK(raw.shape == (l == Layout::NCHW ? std::vector<int64_t>{2, 3, 4, 5} : std::vector<int64_t>{2, 4, 5, 3}));
            std::string bytes = slurp(path);
            REQUIRE(bytes.size() > 10);
            CHECK(bytes.compare(0, 6, "\x93NUMPY") == 0);
            CHECK(bytes[6] == 1);
            CHECK(bytes[7] == 0);
            const size_t header = (uint8_t)bytes[8] | (size_t)(uint8_t)bytes[9] << 8;
            CHECK((10 + header) % 64 == 0);
            CHECK(bytes[10 + header - 1] == '\n');
            HostTensor b(a.dims, t, l);
            b.fill_nan();
            int64_t inexact = -1;
            npy_load_tensor(path, &b, "", &inexact);
            CHECK(b.storage == a.storage);
            CHECK(inexact == 0);
        }
}

TEST_CASE("npy: format 2.0 and 1-D / scalar shapes read; the writer agrees with the reader") {
    TempDir d;
    std::vector<uint8_t> data(6 * 4);
    for (size_t i = 0; i < data.size(); i++) data[i] = (uint8_t)i;
    write_bytes(d / "v2.npy", npy_bytes(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", data));
    NpyArray a = npy_read(d / "v2.npy");
    CHECK(a.descr == "<f4");
    CHECK(a.shape == std::vector<int64_t>{2, 3});
    CHECK(a.data == data);
    NpyArray one;
    one.descr = "<f2", one.shape = {3}, one.data = {1, 2, 3, 4, 5, 6};
    npy_write(d / "one.npy", one);
    NpyArray back = npy_read(d / "one.npy");
    CHECK(back.shape == std::vector<int64_t>{3});
    CHECK(back.data == one.data);
    CHECK(npy_shape_string({3}) == "(3,)");
    CHECK(npy_shape_string({}) == "()");
}

TEST_CASE("npy: a wrong file is refused with a message naming it and what was expected") {
    TempDir d;
    HostTensor t({1, 2, 3, 3}, DType::F32, Layout::NCHW);
    const std::string wrong_shape = d / "dy.npy", wrong_dtype = d / "w.npy", fortran = d / "f.npy";
    HostTensor other({1, 2, 3, 4}, DType::F32, Layout::NCHW);
    npy_save_tensor(wrong_shape, other);
    std::string msg = npy_error([&] { npy_load_tensor(wrong_shape, &t, "N, K, P, Q"); });
    CHECK(contains(msg, wrong_shape + ":"));
    CHECK(contains(msg, "shape (1, 2, 3, 4), expected (1, 2, 3, 3) (N, K, P, Q)"));

    HostTensor f16({1, 2, 3, 3}, DType::F16, Layout::NCHW);
    npy_save_tensor(wrong_dtype, f16);
    msg = npy_error([&] { npy_load_tensor(wrong_dtype, &t); });
    CHECK(contains(msg, wrong_dtype + ":"));
    CHECK(contains(msg, "dtype '<f2' (float16), expected '<f4' (float32)"));
    HostTensor bf({1, 2, 3, 3}, DType::BF16, Layout::NCHW);  // bf16 wants float32 files
    msg = npy_error([&] { npy_load_tensor(wrong_dtype, &bf); });
    CHECK(contains(msg, "expected '<f4' (float32 holding bf16 values)"));

    write_bytes(fortran, npy_bytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2, 3, 3), }",
                                   std::vector<uint8_t>(18 * 4)));
    msg = npy_error([&] { npy_load_tensor(fortran, &t); });
    CHECK(contains(msg, fortran + ":"));
    CHECK(contains(msg, "fortran_order is True"));

    const std::pair<std::vector<uint8_t>, const char *> bad[] = {
        {{'n', 'o', 't', 'n', 'p', 'y', 0, 0, 0, 0, 0}, "not a .npy file"},
        {npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", std::vector<uint8_t>(20)), "truncated"},
        {npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", std::vector<uint8_t>(28)), "needs 24"},
        {npy_bytes(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", {}), "structured dtype"},
        {npy_bytes(1, "{'descr': '<f4', 'shape': (2,), }", std::vector<uint8_t>(8)), "missing key 'fortran_order'"},
        {npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,) ", std::vector<uint8_t>(8)), "malformed"},
        {npy_bytes(4, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", std::vector<uint8_t>(8)), "version 4"},
        // fuzz_npy (10M executions on the H100 machine's cores): a shape whose element count
        // overflows int64 was multiplied out unchecked (UBSan: signed overflow).
        {npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (999999999999999, 999999999999999), }",
                   std::vector<uint8_t>(8)),
         "holds more bytes than fit in 63 bits"},
    };
    for (const auto &b : bad) {
        write_bytes(d / "bad.npy", b.first);
        msg = npy_error([&] { npy_read(d / "bad.npy"); });
        CAPTURE(msg);
        CHECK(contains(msg, d / "bad.npy: "));
        CHECK(contains(msg, b.second));
    }
    msg = npy_error([&] { npy_read(d / "missing.npy"); });
    CHECK(contains(msg, "missing.npy: cannot open"));
}

TEST_CASE("driver: --load-dir / --save-dir run loaded data and write dx / dw in layout order") {
    for (auto op_t : std::vector<std::pair<const char *, DType>>{
             {"conv", DType::F32}, {"convfp16", DType::F16}, {"convbfp16", DType::BF16}})
        for (Layout l : {Layout::NCHW, Layout::NHWC}) {
            const char *op = op_t.first;  // (not a structured binding: CAPTURE takes it by reference)
            const DType t = op_t.second;
            CAPTURE(op);
            CAPTURE(to_string(l));
            TempDir in, out;
            ConvProblem p = with_derived_output(ConvProblem{.N = 2, .C = 4, .H = 7, .W = 6, .K = 6, .R = 3, .S = 2, .G = 2,
                                                            .pad_top = 1, .pad_bottom = 1, .pad_left = 0, .pad_right = 0,
                                                            .stride_h = 2, .stride_w = 1, .dtype = t, .layout = l});
            std::mt19937 rng(11);
            HostTensor x(x_dims(p), t, l), w(w_dims(p), t, l), dy(dy_dims(p), t, l);
            for (HostTensor *h : {&x, &w, &dy}) h->fill_random_uniform(rng);
            npy_save_tensor(in / "x.npy", x);
            npy_save_tensor(in / "w.npy", w);
            npy_save_tensor(in / "dy.npy", dy);
            const std::string save = out / "results";
            Run r = driver(std::string(op) + " -n 2 -c 4 -H 7 -W 6 -k 6 -y 3 -x 2 -p 1 -q 0 -u 2 -v 1 -g 2 -I " +
                           (l == Layout::NHWC ? "NHWC" : "NCHW") + " --load-dir " + quote(in.path) + " --save-dir " +
                           quote(save) + " -V 1 --json");
            CAPTURE(r.err);
            CHECK(r.rc == 0);
            for (const Json &row : rows_of(r)) {
                CHECK(row["verified"].b);
                CHECK(row["inputs"].s == "loaded");
            }
            // The saved outputs against the reference of the loaded inputs.
            HostTensor dx(x_dims(p), t, l), dw(w_dims(p), t, l);
            npy_load_tensor(save + "/dx.npy", &dx);
            npy_load_tensor(save + "/dw.npy", &dw);
            VerifyResult vx = verify_output(dx, ref_bwd_data(p, dy.to_logical(), w.to_logical()), (int64_t)3 * 3 * 2, false);
            VerifyResult vw = verify_output(dw, ref_bwd_weight(p, x.to_logical(), dy.to_logical()), (int64_t)2 * p.P * p.Q, false);
            CHECK_MESSAGE(vx.ok, vx.first_bad);
            CHECK_MESSAGE(vw.ok, vw.first_bad);
            CHECK(vx.max_err > 0);  // not integers: the tolerance path really ran on these values
        }
}

TEST_CASE("driver: a failed run writes nothing to --save-dir") {
    TempDir out;
    const std::string save = out / "results";
    // Both directions, a backward-data kernel forced: backward-weight cannot run it.
    Run r = driver("conv -n 1 -c 8 -H 6 -W 6 -k 8 -y 3 -x 3 -p 1 -q 1 -F 6 --kernel bwdd_f32_nchw_any_any_host_c1x4p "
                   "--save-dir " + quote(save) + " --json");
    CAPTURE(r.err);
    CHECK(r.rc == 1);
    CHECK(contains(r.err, "--save-dir: nothing written (1 of the runs failed)"));
    CHECK(!fs::exists(save + "/dx.npy"));
    CHECK(!fs::exists(save + "/dw.npy"));
}

TEST_CASE("driver: --load-dir refuses a wrong file by name and writes nothing") {
    TempDir in, out;
    ConvProblem p = with_derived_output(ConvProblem{.N = 1, .C = 2, .H = 5, .W = 5, .K = 3, .R = 3, .S = 3});
    HostTensor x(x_dims(p), DType::F32, Layout::NCHW), w(w_dims(p), DType::F32, Layout::NCHW);
    HostTensor dy_wrong({1, 3, 5, 5}, DType::F32, Layout::NCHW);  // P = Q = 3, not 5
    HostTensor w_f16(w_dims(p), DType::F16, Layout::NCHW);
    npy_save_tensor(in / "x.npy", x);
    npy_save_tensor(in / "dy.npy", dy_wrong);
    npy_save_tensor(in / "w.npy", w_f16);
    const std::string save = out / "results";
    Run r = driver("conv -n 1 -c 2 -H 5 -W 5 -k 3 -y 3 -x 3 --load-dir " + quote(in.path) + " --save-dir " + quote(save) +
                   " --json");
    CHECK(r.rc == 2);
    CAPTURE(r.err);
    CHECK(contains(r.err, in / "dy.npy: shape (1, 3, 5, 5), expected (1, 3, 3, 3) (N, K, P, Q)"));
    CHECK(contains(r.err, in / "w.npy: dtype '<f2' (float16), expected '<f4' (float32)"));
    CHECK(r.out.empty());
    CHECK(!fs::exists(save));
    // Only the files a direction needs are read: bwd_weight needs x and dy, not w.
    npy_save_tensor(in / "w.npy", w);
    r = driver("conv -n 1 -c 2 -H 5 -W 5 -k 3 -y 3 -x 3 -F 4 --load-dir " + quote(in.path) + " --json");
    CHECK(r.rc == 2);
    CHECK(contains(r.err, "dy.npy"));
    CHECK(!contains(r.err, "w.npy"));
    fs::remove(in / "x.npy");
    r = driver("conv -n 1 -c 2 -H 5 -W 5 -k 3 -y 3 -x 3 -F 2 --load-dir " + quote(in.path) + " --json");
    CHECK(contains(r.err, "dy.npy"));
    CHECK(!contains(r.err, "x.npy"));
}

}  // TEST_SUITE("driver")

// Tuning databases through the driver, as a user runs it: --tuning-db and CONVBWD_TUNING_DB pick a
// record's kernel for its problem (the rows' problem_key), CONVBWD_VERBOSE=dispatch says which
// record was used and why others were skipped, a malformed file is refused naming its line.
TEST_SUITE("tuning") {

TEST_CASE("driver: --tuning-db and CONVBWD_TUNING_DB use a record for its problem, and say why others were skipped") {
    const std::string line = "conv -n 2 -c 8 -H 9 -W 9 -k 8 -y 3 -x 3 -p 1 -q 1 -I NHWC -F 2";
    Run r = driver(line + " --json");
    std::vector<Json> rows = rows_of(r);
    REQUIRE(rows.size() == 1);
    REQUIRE(rows[0].has("problem_key"));
    const std::string key = rows[0]["problem_key"].s, dflt = rows[0]["kernel"].s;
    const std::string generic = "bwdd_f32_nhwc_any_any_host_c1x4p";
    REQUIRE(dflt != generic);
    TempDir d;
    {
        std::ofstream f(d / "t.db");
        f << "# tuned by hand\n"
          << key << " bwdd_f32_nhwc_s1_k3_host_c9x9\n"
          << key << " bwdd_f32_nhwc_s2_k3_host_c2x6p\n"
          << key << " " << generic << " tile_c=2\n"
          << key << " " << generic << "\n";
    }
    for (const std::string &how : {"--tuning-db " + quote(d / "t.db"), std::string()}) {
        CAPTURE(how);
        const std::string env = how.empty() ? "CONVBWD_TUNING_DB=" + quote(d / "t.db") + " " : "";
        const std::string cmd = "env " + env + "CONVBWD_VERBOSE=dispatch " + quote(CONVBWD_DRIVER_PATH) + " " + line +
                                " --json " + how + " >" + d / "out" + " 2>" + d / "err";
        Run t;
        const int st = std::system(cmd.c_str());
        t.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        t.out = slurp(d / "out");
        t.err = slurp(d / "err");
        CAPTURE(t.err);
        CHECK(t.rc == 0);
        std::vector<Json> tr = rows_of(t);
        REQUIRE(tr.size() == 1);
        CHECK(tr[0]["kernel"].s == generic);
        CHECK(tr[0]["verified"].b);
        const std::string at = d / "t.db";
        CHECK(contains(t.err, "skipped tuning db " + at + ":2 (bwdd_f32_nhwc_s1_k3_host_c9x9): kernel not built"));
        CHECK(contains(t.err, "skipped tuning db " + at + ":3 (bwdd_f32_nhwc_s2_k3_host_c2x6p): stride_class s2"));
        CHECK(contains(t.err, "skipped tuning db " + at + ":4 (" + generic + "): bad launch knob: knob 'tile_c' is compile-time"));
        CHECK(contains(t.err, "tuning db " + at + ":5 -> " + generic));
    }
    // Another problem keeps its default.
    Run other = driver("conv -n 3 -c 8 -H 9 -W 9 -k 8 -y 3 -x 3 -p 1 -q 1 -I NHWC -F 2 --json --tuning-db " + quote(d / "t.db"));
    std::vector<Json> orow = rows_of(other);
    REQUIRE(orow.size() == 1);
    CHECK(orow[0]["kernel"].s == dflt);
}

TEST_CASE("driver: a malformed --tuning-db is refused with its line; a bad CONVBWD_TUNING_DB is ignored with a warning") {
    TempDir d;
    {
        std::ofstream f(d / "bad.db");
        f << "# fine\nbwd_data-f32-nhwc-host-n2 bwdd_f32_nhwc_any_any_host_c1x4p\n";
    }
    Run r = driver("conv -n 2 -c 8 -H 9 -W 9 -k 8 -y 3 -x 3 -p 1 -q 1 -F 2 --tuning-db " + quote(d / "bad.db"));
    CHECK(r.rc == 2);
    CHECK(contains(r.err, d / "bad.db" + ":2: problem_key:"));
    const std::string cmd = "env CONVBWD_TUNING_DB=" + quote(d / "bad.db") + " " + quote(CONVBWD_DRIVER_PATH) +
                            " conv -n 2 -c 8 -H 9 -W 9 -k 8 -y 3 -x 3 -p 1 -q 1 -F 2 >" + d / "out" + " 2>" + d / "err";
    const int st = std::system(cmd.c_str());
    CHECK((WIFEXITED(st) && WEXITSTATUS(st) == 0));
    CHECK(contains(slurp(d / "err"), "CONVBWD_TUNING_DB ignored: " + d / "bad.db" + ":2: problem_key:"));
}

TEST_CASE("driver: --list-kernels --json gives each kernel's family, role, knobs and space; --list-spaces the families") {
    Run r = driver("--list-kernels --json");
    int checked = 0;
    for (const Json &row : rows_of(r)) {
        if (row.has("arch")) continue;
        for (const char *k : {"family", "role", "knobs", "space"}) REQUIRE(row.has(k));
        CHECK((row["role"].s == "default" || row["role"].s == "candidate" || row["role"].s == "baseline"));
        // Every knob has a value inside its space's domain.
        const Json &space = row["space"];
        CHECK(row["knobs"].o.size() == space.o.size());
        for (const auto &[name, v] : row["knobs"].o) {
            REQUIRE(space.has(name));
            bool in_domain = false;
            for (const Json &x : space[name]["domain"].a) in_domain |= x.n == v.n;
            CHECK(in_domain);
            CHECK((space[name]["kind"].s == "compile" || space[name]["kind"].s == "launch"));
        }
        checked++;
    }
    CHECK(checked == convbwd_kernel_count());
    Run s = driver("--list-spaces --json");
    CHECK(s.rc == 0);
    std::vector<Json> fams = rows_of(s);
    CHECK(fams.size() >= 6);
    for (const Json &f : fams) {
        REQUIRE(f.has("knobs"));
        CHECK(!f["knobs"].o.empty());
    }
    Run t = driver("--list-spaces");
    CHECK(contains(t.out, "conv_bwd_weight_gpu"));
    CHECK(contains(t.out, "split_blocks  launch"));
}

}  // TEST_SUITE("tuning")
