// The PTX rewrite of matrix-fragment calls (runtime/src/cuda_fragments.cpp), for the tests.
#pragma once

#include <string>

namespace convbwd {

// The fragment kernels' register limit the runtime gives their entries (`.maxnreg`; the environment's
// CONVBWD_FRAGMENT_MAXNREG replaces it).
constexpr int kFragmentMaxRegisters = 255;

// ptx with every call of convbwd_mma16x8x16_{bf16,f16} replaced by mma.sync.m16n8k16, the
// functions' declarations removed and, where it had such calls, `.maxnreg max_registers` on each
// entry (0: none); "" and *error set where a call is not in the form expected.
std::string inline_cuda_fragments(const std::string &ptx, std::string *error,
                                  int max_registers = kFragmentMaxRegisters);

}  // namespace convbwd
