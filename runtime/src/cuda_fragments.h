// The PTX rewrite of matrix-fragment calls (runtime/src/cuda_fragments.cpp), for the tests.
#pragma once

#include <string>

namespace convbwd {

// ptx with every call of convbwd_mma16x8x16_{bf16,f16} replaced by mma.sync.m16n8k16, the
// functions' declarations removed and, where it had such calls, `.maxnreg max_registers` on each
// entry (0: none); "" and *error set where a call is not in the form expected.
std::string inline_cuda_fragments(const std::string &ptx, std::string *error, int max_registers = 255);

}  // namespace convbwd
