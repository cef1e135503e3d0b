// libFuzzer: the .npy reader (common/npy.cpp) the driver's --load-dir uses. Every input is read
// or refused with an NpyError naming the file; an accepted array's data is exactly the size its
// header says.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/npy.h"
#include "test/fuzz/fuzz_check.h"

using convbwd::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::vector<uint8_t> bytes(data, data + size);
    try {
        const convbwd::NpyArray a = convbwd::npy_parse("fuzz.npy", bytes);
        const int item = convbwd::npy_itemsize(a.descr);
        check(item <= 0 || (int64_t)a.data.size() == a.elements() * item);
        (void)convbwd::npy_shape_string(a.shape);
    } catch (const convbwd::NpyError &e) {
        check(std::string(e.what()).find("fuzz.npy") != std::string::npos);
    }
    return 0;
}
