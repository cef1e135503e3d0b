// libFuzzer: the tuning-database reader (runtime/src/tuning_db.cpp), the text a user's
// CONVBWD_TUNING_DB file holds. Every input is parsed or refused with file, line and field;
// the records of an accepted one are looked up as the dispatcher would.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/src/internal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string text(reinterpret_cast<const char *>(data), size);
    std::vector<convbwd::TuningRecord> records;
    std::vector<convbwd::TuningModule> modules;
    const std::string error = convbwd::parse_tuning_db(text, "fuzz.db", &records, &modules);
    if (!error.empty() && error.find("fuzz.db") == std::string::npos) __builtin_trap();  // names the file
    return 0;
}
