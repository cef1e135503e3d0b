// MIOpenDriver command lines ("conv -n 32 -c 64 -H 56 ... -F 6"), as in shapes/*.txt and as
// MIOpen's command logging prints them, and the problems they describe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "generators/conv_problem.h"

namespace convbwd {

struct DriverLine {
    std::string op;                            // conv | convfp16 | convbfp16
    std::map<std::string, std::string> flags;  // "-n" -> "32", "--json" -> "" ...
    std::string comment;                       // text after '#'
};

// Splits a line into op, flags and comment. A leading "MIOpenDriver" (or path ending in it) is
// skipped. Returns false with *error for an unknown op; unknown flags are kept for the caller.
// A line that is blank or only a comment gives op == "".
bool tokenize_driver_line(const std::string &line, DriverLine *out, std::string *error);

// The problem of a tokenized line: -n -c -H -W -k -y -x -p -q -u -v -l -j -g, dtype from the
// op, layout from -I (NCHW, NHWC). *directions is the -F mask (2 bwd data, 4 bwd weight;
// 0 or absent = both). Refuses flags we cannot honour with a message that says so.
bool problem_from_line(const DriverLine &line, ConvProblem *p, int *directions, std::string *error);

struct ShapeEntry {
    ConvProblem problem;
    int directions = 6;
    std::string text;     // the line as written, without the comment
    std::string comment;
    int line_no = 0;
};

// Every problem line of a file; throws std::runtime_error naming file and line on a bad one.
std::vector<ShapeEntry> load_shapes(const std::string &path);

// The normalised MIOpenDriver line of a problem (asymmetric padding is not expressible there:
// the line then carries --pad_bottom/--pad_right extensions).
std::string to_driver_line(const ConvProblem &p, int directions);

// Directory of the public shape suites (CONVBWD_SHAPES_DIR at build time, or the env var).
std::string shapes_dir();

}  // namespace convbwd
