// libFuzzer: the MIOpenDriver command-line and shape-file parsers. The input is read as a
// shape file (each line tokenized and turned into a problem, as --shapes does) and as a command
// line (split at white space, as convbwd-driver's argv); every input gets an answer or a refusal
// with a message, never a crash. What is checked (a failure traps, and libFuzzer keeps the input):
//   - every refusal (tokenizer, problem_from_line, problem_of, parse_command_line) says why;
//   - a problem accepted from a line prints as a line (to_driver_line) that reads back as the
//     same problem and directions: what the driver's JSON rows and the tuner's records carry is
//     the problem that ran.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "apps/driver/cli.h"
#include "common/shapes.h"

using namespace convbwd;

namespace {

void check(bool ok) {
    if (!ok) __builtin_trap();
}

bool same(const ConvProblem &a, const ConvProblem &b) {
    return a.N == b.N && a.C == b.C && a.H == b.H && a.W == b.W && a.K == b.K && a.P == b.P && a.Q == b.Q &&
           a.R == b.R && a.S == b.S && a.G == b.G && a.pad_top == b.pad_top && a.pad_bottom == b.pad_bottom &&
           a.pad_left == b.pad_left && a.pad_right == b.pad_right && a.stride_h == b.stride_h &&
           a.stride_w == b.stride_w && a.dilation_h == b.dilation_h && a.dilation_w == b.dilation_w &&
           a.dtype == b.dtype && a.layout == b.layout;
}

// The problem's printed line reads back as the same problem and directions.
void round_trip(const ConvProblem &p, int dirs) {
    const std::string text = to_driver_line(p, dirs);
    DriverLine dl;
    std::string error;
    check(tokenize_driver_line(text, &dl, &error) && !dl.op.empty());
    ConvProblem back;
    int back_dirs = -1;
    check(problem_from_line(dl, &back, &back_dirs, &error));
    check(same(p, back) && back_dirs == dirs);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string text(reinterpret_cast<const char *>(data), size);
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        DriverLine dl;
        std::string error;
        if (!tokenize_driver_line(line, &dl, &error)) {
            check(!error.empty());
            continue;
        }
        if (dl.op.empty()) continue;
        ConvProblem p;
        int dirs = 0;
        error.clear();
        if (problem_from_line(dl, &p, &dirs, &error)) round_trip(p, dirs);
        else check(!error.empty());
        ConvProblem q;
        int qdirs = 0;
        error.clear();
        if (!driver::problem_of(dl, &q, &qdirs, &error)) check(!error.empty());
    }
    std::istringstream words(text);
    std::vector<std::string> args;
    for (std::string w; words >> w;) args.push_back(w);
    driver::Options o;
    std::string error;
    bool show = false;
    if (driver::parse_command_line(args, &o, &error, &show)) {
        if (!o.op.empty()) {
            ConvProblem p;
            int dirs = 0;
            error.clear();
            if (driver::problem_of(driver::overlay(DriverLine{}, o), &p, &dirs, &error)) round_trip(p, dirs);
            else check(!error.empty());
        }
    } else {
        check(!error.empty());
    }
    return 0;
}
