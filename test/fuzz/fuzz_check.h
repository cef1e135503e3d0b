// The fuzz targets' assertion: a failed check traps, and libFuzzer keeps the input that did it.
#pragma once

namespace convbwd::fuzz {
inline void check(bool ok) {
    if (!ok) __builtin_trap();
}
}  // namespace convbwd::fuzz
