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
#include "test/fuzz/fuzz_check.h"

using namespace convbwd;
using fuzz::check;

namespace {

// The problem's printed line reads back as the same problem and directions: its own line again
// (to_driver_line is the canonical form, every field problem_from_line reads).
void round_trip(const ConvProblem &p, int dirs) {
    const std::string text = to_driver_line(p, dirs);
    DriverLine dl;
    std::string error;
    check(tokenize_driver_line(text, &dl, &error) && !dl.op.empty());
    ConvProblem back;
    int back_dirs = -1;
    check(problem_from_line(dl, &back, &back_dirs, &error));
    check(to_driver_line(back, back_dirs) == text);
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
