// convbwd-driver's command line: MIOpenDriver's conv flags (short or long names), the flags
// MIOpenDriver has and convbwd refuses (with the reason), and the driver's own options.
#pragma once

#include <string>
#include <vector>

#include "common/shapes.h"
#include "convbwd/convbwd.h"

namespace convbwd::driver {

extern const char *kUsage;

struct Options {
    // What to run: one problem (op + problem flags), or a shape file whose lines the problem
    // flags given here override.
    std::string op;              // conv | convfp16 | convbfp16, "" if not given
    DriverLine problem_flags;    // problem flags of the command line, short names (-n, -I, ...)
    bool explicit_directions = false;  // -F given
    std::string shapes;          // --shapes FILE
    // Measurement.
    bool time = false, verify = true, json = false;
    int iters = 10, warmup = 3;
    unsigned seed = 1;
    // Extras.
    std::string target = "host";
    bool explicit_target = false;
    convbwd_target target_enum = CONVBWD_TARGET_HOST;
    std::string kernel, compare, load_dir, save_dir, tuning_db;
    bool list_kernels = false, list_spaces = false, help = false;
};

// Parses argv[1..]. On error returns false with *error; *show_flags says whether the list of
// valid flags should follow the message (unknown flag, bad syntax).
bool parse_command_line(const std::vector<std::string> &args, Options *o, std::string *error, bool *show_flags);

// The problem of a line (from the command line, or a shape-file line with the command line's
// flags laid over it): checks layout flags agree, applies -I/-f/-O, validates the geometry with
// the library. *explicit_dirs: the line (or the override) names -F.
bool problem_of(const DriverLine &line, ConvProblem *p, int *directions, std::string *error);

// Lays the command line's problem flags (and op, if given) over a shape-file line.
DriverLine overlay(const DriverLine &file_line, const Options &o);

// Every flag the driver accepts, for messages: "-n -c -H ... --json".
std::string valid_flags();

}  // namespace convbwd::driver
