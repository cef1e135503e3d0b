// Schedule parameters: one struct per (direction, device kind), each field listed once with
// its default and legal values. visit() reads and writes the key=value strings of the kernel
// list (schedules/variants.cmake) and of autotuning results.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "../generators/conv_problem.h"

namespace convbwd {

struct BwdDataHostParams {
    int vec = 8;     // {4, 8, 16}: f32 SIMD lanes (8 = AVX2)
    int tile_c = 2;  // [1..4] vectors of channels per register tile
    int tile_x = 4;  // [1..8] output columns (per stride phase) per register tile
    // (A) tile_c * tile_x * stride <= 14 accumulators (16 ymm registers, 2 for operands)
    template <class Self, class F>
    static void visit(Self &&s, F f) {
        f(s.vec, "vec");
        f(s.tile_c, "tile_c");
        f(s.tile_x, "tile_x");
    }
};

struct BwdWeightHostParams {
    int vec = 8;          // {4, 8, 16}: f32 SIMD lanes
    int tile_c = 2;       // [1..4] vectors of input channels per register tile
    int tile_k = 4;       // [1..8] output channels per register tile; (A) tile_c * tile_k <= 14
    int max_splits = 16;  // [1..256] partial sums over N*P rows (reduction split, workspace)
    template <class Self, class F>
    static void visit(Self &&s, F f) {
        f(s.vec, "vec");
        f(s.tile_c, "tile_c");
        f(s.tile_k, "tile_k");
        f(s.max_splits, "max_splits");
    }
};

// Space-separated "key=value" string of a params struct, in visit() order.
template <class Params>
std::string to_string(const Params &p) {
    std::string out;
    Params::visit(p, [&](const int &v, const char *name) {
        if (!out.empty()) out += ' ';
        out += std::string(name) + "=" + std::to_string(v);
    });
    return out;
}

// Sets one field by name; false if the struct has no such field or the value is not an int.
template <class Params>
bool set_param(Params &p, const std::string &key, const std::string &value) {
    bool found = false;
    Params::visit(p, [&](int &v, const char *name) {
        if (key != name) return;
        char *end = nullptr;
        long parsed = std::strtol(value.c_str(), &end, 10);
        if (end && *end == 0 && !value.empty()) {
            v = (int)parsed;
            found = true;
        }
    });
    return found;
}

}  // namespace convbwd
