// The PTX rewrite of matrix-fragment calls (runtime/src/cuda_fragments.cpp), for the tests.
#pragma once

#include <optional>
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

// How a fragment kernel's copies of 16-byte groups of global memory into shared memory are loaded
// (CONVBWD_FRAGMENT_COPIES): as Halide's PTX has them (two 8-byte halves: split), as one 16-byte load
// (joined), as cp.async from global to shared memory (async), waited for at the barriers, or (auto,
// the default) joined, and cp.async in the kernels that copy their chunks ahead (their trait
// copies_ahead), which only then overlap a chunk's loads with the chunk before it.
enum class FragmentCopies { Split, Joined, Async, Auto };
constexpr FragmentCopies kFragmentCopies = FragmentCopies::Auto;  // the default (docs/PERFORMANCE.md, 2026-12-02)
// The value of CONVBWD_FRAGMENT_COPIES (null or empty: the default); nothing where it is none of
// kFragmentCopiesNames.
std::optional<FragmentCopies> fragment_copies(const char *name);
constexpr const char *kFragmentCopiesNames = "split, joined, async or auto";

// ptx with, in each entry whose 8-byte global loads all pair up as the halves of 16-byte groups,
// those joined (and, for Async, their copies to shared memory made cp.async). Only where
// aligned_load_bytes >= 16: the kernel's trait that those groups start 16-byte aligned
// (input_channel_vector() x the element's bytes; the dispatcher checks the tensors first).
// copies_ahead: the kernel's trait that each iteration of its copying loop consumes only chunks
// copied in earlier iterations (BwdDataMmaGraph::ahead); cp.async copies are then committed at the
// loop's barriers and waited for one iteration later (cp.async.wait_group with this iteration's
// groups left in flight), and all at the loop's exit. Else every barrier waits for every copy.
std::string rewrite_fragment_copies(const std::string &ptx, int aligned_load_bytes, FragmentCopies copies,
                                    bool copies_ahead = false);

}  // namespace convbwd
