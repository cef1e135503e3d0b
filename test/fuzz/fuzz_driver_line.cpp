// libFuzzer: the MIOpenDriver command-line and shape-file parsers. The input is read as a
// shape file (each line tokenized and turned into a problem, as --shapes does) and as a command
// line (split at white space, as convbwd-driver's argv); every input gets an answer or a refusal
// with a message, never a crash.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "apps/driver/cli.h"
#include "common/shapes.h"

using namespace convbwd;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string text(reinterpret_cast<const char *>(data), size);
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        DriverLine dl;
        std::string error;
        if (!tokenize_driver_line(line, &dl, &error) || dl.op.empty()) continue;
        ConvProblem p;
        int dirs = 0;
        problem_from_line(dl, &p, &dirs, &error);
        driver::problem_of(dl, &p, &dirs, &error);
    }
    std::istringstream words(text);
    std::vector<std::string> args;
    for (std::string w; words >> w;) args.push_back(w);
    driver::Options o;
    std::string error;
    bool show = false;
    if (driver::parse_command_line(args, &o, &error, &show) && !o.op.empty()) {
        ConvProblem p;
        int dirs = 0;
        driver::problem_of(driver::overlay(DriverLine{}, o), &p, &dirs, &error);
    }
    return 0;
}
