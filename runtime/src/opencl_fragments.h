// The OpenCL matrix-fragment kernels' load-time prelude (runtime/src/opencl_fragments.cpp), for the tests.
#pragma once

#include <string>

namespace convbwd {

// Whether every matrix-fragment call in the OpenCL C `src` (generators/fragments.h) belongs to a
// group that the emulated prelude may serve with one operand exchange (CONVBWD_FRAG_GROUPED,
// generators/fragments/emulated.cl): a k-block's calls (4 of convbwd_mma16x8x16_*, 16 of
// convbwd_mfma32x32x8_*) one after another in element order 0, 1, ..., with the same operands and,
// between two calls of a group, no other call of a fragment, no barrier and no brace (the same
// block of straight-line code). Halide 21 writes a k-block's calls so (one gather); where a source
// is not so, the prelude keeps an exchange per call. *why (optional): the first call that breaks it.
bool fragment_calls_grouped(const std::string &src, std::string *why = nullptr);

// The kernel sources the prelude step has rewritten in this process, and how many of them exchange
// operands once a k-block (fragment_calls_grouped).
struct FragmentPreludeCounts {
    int sources = 0, grouped = 0;
};
FragmentPreludeCounts opencl_fragment_prelude_counts();

}  // namespace convbwd
