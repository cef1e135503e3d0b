// libFuzzer: the tuning-database reader (runtime/src/tuning_db.cpp), the text a user's
// CONVBWD_TUNING_DB file holds. Every input is parsed or refused; what is checked (a failure
// traps, and libFuzzer keeps the input):
//   - a refusal names the file and a line of the input ("fuzz.db:<line>: <field>: ..."), and nothing
//     is returned with it;
//   - an accepted database printed back (one "<key> <kernel> [knob=value ...]" or "module <file>"
//     line each) parses to the same records and modules: what the tuner writes is what the
//     dispatcher reads;
//   - each record's place is "fuzz.db:<line>" of a line that holds its key and kernel.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/src/internal.h"
#include "test/fuzz/fuzz_check.h"

using convbwd::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string text(reinterpret_cast<const char *>(data), size);
    const long lines = 1 + std::count(text.begin(), text.end(), '\n');
    std::vector<convbwd::TuningRecord> records{{"stale", "stale", "", ""}};
    std::vector<convbwd::TuningModule> modules{{"stale", ""}};
    const std::string error = convbwd::parse_tuning_db(text, "fuzz.db", &records, &modules);
    if (!error.empty()) {
        check(error.rfind("fuzz.db:", 0) == 0);
        const long line = std::strtol(error.c_str() + 8, nullptr, 10);
        check(line >= 1 && line <= lines);
        return 0;
    }
    std::vector<std::string> text_lines(1);
    for (char ch : text) {
        if (ch == '\n') text_lines.emplace_back();
        else text_lines.back().push_back(ch);
    }
    std::string printed;
    for (const convbwd::TuningModule &m : modules) printed += "module " + m.path + "\n";
    for (const convbwd::TuningRecord &r : records) {
        check(r.where.rfind("fuzz.db:", 0) == 0);
        const long line = std::strtol(r.where.c_str() + 8, nullptr, 10);
        check(line >= 1 && line <= (long)text_lines.size());
        const std::string &src = text_lines[line - 1];
        check(src.find(r.key) != std::string::npos && src.find(r.kernel) != std::string::npos);
        printed += r.key + " " + r.kernel + (r.launch.empty() ? "" : " " + r.launch) + "\n";
    }
    std::vector<convbwd::TuningRecord> back;
    std::vector<convbwd::TuningModule> back_modules;
    check(convbwd::parse_tuning_db(printed, "printed.db", &back, &back_modules).empty());
    check(back.size() == records.size() && back_modules.size() == modules.size());
    for (size_t i = 0; i < back.size(); i++)
        check(back[i].key == records[i].key && back[i].kernel == records[i].kernel && back[i].launch == records[i].launch);
    for (size_t i = 0; i < back_modules.size(); i++) check(back_modules[i].path == modules[i].path);
    return 0;
}
