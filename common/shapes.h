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

// MIOpenDriver's convolution flags (short and long names) and what convbwd does with each: one
// table for shape-file lines and convbwd-driver's command line (apps/driver/cli.cpp adds the
// driver's own options to it).
enum class FlagKind {
    Problem,      // describes the problem (problem_from_line reads it)
    Option,       // takes a value the caller reads (-t, -i, -V: timing and verification)
    Bool,         // an option without a value (the driver's own)
    DefaultOnly,  // accepted only at the values listed in `accepted`
    Refused,      // a MIOpenDriver feature convbwd does not implement
};
struct DriverFlag {
    const char *name;      // canonical name (the short one where MIOpenDriver has one)
    const char *alias;     // MIOpenDriver's other name, or nullptr
    FlagKind kind;
    const char *accepted;  // DefaultOnly: '|'-separated values
    const char *reason;    // DefaultOnly / Refused: why
};
// Every MIOpenDriver convolution flag, then convbwd's problem extensions (--pad_bottom, --pad_right).
const std::vector<DriverFlag> &miopen_flags();
// The flag of a name (canonical, alias, or one of MIOpenDriver's older long names), or nullptr.
const DriverFlag *find_miopen_flag(const std::string &name);
// Whether `value` is one of a DefaultOnly flag's accepted values.
bool flag_accepts(const DriverFlag &f, const std::string &value);
// The word that starts a logged MIOpen command line: "MIOpenDriver" or a path ending in it.
bool is_miopen_driver_word(const std::string &word);
// Where a line's comment starts: a '#' at the start of the line or after white space (MIOpen's
// 3-D flag -# is not one); npos if none.
size_t comment_start(const std::string &line);

// Splits a line into op, flags and comment. A leading "MIOpenDriver" (or path ending in it) is
// skipped. Known flags are stored under their canonical name (--batchsize 32 as -n 32).
// Returns false with *error for an unknown op; unknown flags are kept for problem_from_line.
// A line that is blank or only a comment gives op == "".
bool tokenize_driver_line(const std::string &line, DriverLine *out, std::string *error);

// The problem of a tokenized line: -n -c -H -W -k -y -x -p -q -u -v -l -j -g, dtype from the
// op, layout from -I (NCHW, NHWC). *directions is the -F mask (2 bwd data, 4 bwd weight;
// 0 or absent = both). Refuses flags we cannot honour with a message that says so, and flags
// that are not MIOpenDriver's (a shape line runs the problem it says, or none); the values of
// -t, -i and -V belong to the caller.
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
