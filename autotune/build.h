// Building candidates without CMake: for each kernel (a family's compile-time point for a class),
// the project's generator is run for its knobs (an object with no Halide runtime of its own) and
// the object is linked with a generated registration file into a kernel module
// (convbwd/convbwd_module.h) that the library loads. Builds run in parallel on --jobs worker
// processes, each with a time limit; a failure or a timeout is recorded with the log's tail.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autotune/search.h"

namespace convbwd::tune {

struct BuildConfig {
    std::string dir;                       // the modules folder (one sub-folder per kernel)
    std::string host_generator, gpu_generator;
    // Halide's x86 target of GPU candidates' host code: the library's baseline
    // (CONVBWD_HOST_BASELINE), as they may be built here and run on the GPU machine. Host
    // candidates are built for "host": the CPU that tunes them is the one they are for.
    std::string host_target;
    int cuda_capability = 80;
    std::string cc;                        // C compiler for the registration file and the link
    std::string objcopy = "objcopy";       // renames an opencl fragment kernel's runtime call (below)
    std::string include_dir, halide_include_dir;
    int jobs = 2;
    double timeout_s = 300;
    int wrong_kernel = -1;                 // test hook: the job of this index corrupts its output
    // CUDA candidates: ptxas (CUDA toolkit) reads each module's PTX for registers and spills;
    // empty: not checked. max_spill_bytes: more bytes of spill stores, or of a kernel's stack frame
    // (arrays Halide could not keep in registers: local memory), than this prune the candidate.
    std::string ptxas;
    int max_spill_bytes = 0;
};

struct BuildJob {
    std::string kernel;
    const Family *family = nullptr;
    KernelClass cls;
    KnobValues knobs;  // compile-time ones matter
    Role role = Role::Candidate;
    std::string generator_args;  // more for the generator (an autoscheduler baseline's plugin and estimates)
};

struct BuildResult {
    bool ok = false;
    std::string status = "compile_failed";  // ok | compile_failed | pruned | unbuilt (no module, no generator here)
    std::string module;  // the .so
    std::string error;   // "timeout after 300 s", "generator failed: <log tail>", "pruned: ..."
    double seconds = 0;
    // CUDA, where ptxas ran: the most registers a kernel of the module uses, bytes of spill
    // stores and loads over all its kernels, the largest stack frame of one (-1: not checked).
    int regs = -1, spill_stores = -1, spill_loads = -1, stack_bytes = -1;
};

// ptxas -v over the PTX that Halide embedded in a CUDA object (written to work_dir/kernels.ptx,
// the report to work_dir/ptxas.log); false with *error when there is no PTX or ptxas fails.
bool ptxas_run(const BuildConfig &c, const std::string &object, const std::string &work_dir, std::string *error);
// The report's most registers and largest stack frame of one kernel and bytes of spill stores and
// loads over all of them.
void ptxas_parse(const std::string &log, BuildResult *r);

// The Halide target a kernel of this device is generated for (no runtime: the library's serves).
std::string generator_target(const BuildConfig &c, Device d, std::string *error);
// The manifest record of a module's kernel (its role: candidate or baseline).
std::string module_record(const BuildJob &j);

// Builds every job (skipping those whose module exists); done(i, result) is called as each ends.
void build_modules(const BuildConfig &c, const std::vector<BuildJob> &jobs,
                   const std::function<void(size_t, const BuildResult &)> &done);

// Links the objects of built kernels into one module `out` (the winners of a run).
bool link_module(const BuildConfig &c, const std::vector<BuildJob> &kernels, const std::string &out, std::string *error);

}  // namespace convbwd::tune
