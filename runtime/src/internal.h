// Internal runtime declarations: kernel registry, dispatcher, validation.
#pragma once

#include <string>
#include <vector>

#include "HalideRuntime.h"
#include "convbwd/convbwd.h"
#include "generators/conv_problem.h"

namespace convbwd {

// Kernel signatures (generators/generator_base.h): (user_context, a, b, prev, stride_h, stride_w,
// dilation_h, dilation_w, pad_top, pad_left, groups, alpha, beta, [ws,] out). Backward-weight
// kernels also write their f32 split-reduction partials to ws (the caller's workspace).
using BwdDataFn = int (*)(const void *, halide_buffer_t *, halide_buffer_t *, halide_buffer_t *, int, int, int, int,
                          int, int, int, float, float, halide_buffer_t *);
using BwdWeightFn = int (*)(const void *, halide_buffer_t *, halide_buffer_t *, halide_buffer_t *, int, int, int,
                            int, int, int, int, float, float, int, halide_buffer_t *, halide_buffer_t *);
struct KernelFn {
    BwdDataFn data = nullptr;
    BwdWeightFn weight = nullptr;
    KernelFn(BwdDataFn f) : data(f) {}  // NOLINT: the registry initialiser picks by signature
    KernelFn(BwdWeightFn f) : weight(f) {}
};

struct KernelInfo {
    const char *name;
    Direction dir;
    DType dtype;
    Layout layout;
    StrideClass stride;
    FilterClass filter;
    Device device;
    const char *schedule;
    bool baseline;  // a comparison baseline (e.g. scatter-then-conv): run only when forced by name
    KernelFn fn;
};

// Workspace bytes kernel k needs for problem p (backward-weight: the f32 partials).
int64_t workspace_bytes(const KernelInfo &k, const ConvProblem &p);
// Backward-weight's reduction split for problem p on kernel k: the max_splits the kernel is
// called with (a function of the problem and the kernel only, so results are reproducible), and
// the number of partial sums that gives.
int64_t weight_max_splits(const KernelInfo &k, const ConvProblem &p);
int64_t weight_splits(const KernelInfo &k, const ConvProblem &p);

// Whether kernel k sees problem p's spatial plane as one row (BwdDataGpuParams::flat): a pointwise
// stride-1 unpadded problem, P x Q = H x W. The caller still checks that the planes are dense.
bool flattens_pointwise_plane(const KernelInfo &k, const ConvProblem &p);
// The channel vector of kernel k (BwdDataGpuParams::vec, BwdWeightGpuParams::vec): k requires C
// and C / groups to be multiples of it (1: any); backward-weight ones K too, and groups 1.
int channel_vector(const KernelInfo &k);
// Struct Query is declared below; the rows x images (or filter rows x k) a GPU kernel puts on one
// grid dim of at most 65535 blocks for this query (0 for host kernels and where none does).
struct Query;
int64_t gpu_grid_rows(const KernelInfo &k, const Query &q);
// A GPU backward-data kernel's column vector (NCHW read in place, xvec): its rows (flat: planes)
// and the tensors' strides and bases must be multiples of it; 1 for every other kernel.
int column_vector(const KernelInfo &k);

// The registry, in kernel-list order (= dispatch priority).
const KernelInfo *kernels_begin();
const KernelInfo *kernels_end();
const KernelInfo *find_kernel(const std::string &name);

struct Status {
    convbwd_status code = CONVBWD_SUCCESS;
    std::string message;
    bool ok() const { return code == CONVBWD_SUCCESS; }
};
inline Status fail(convbwd_status code, std::string message) { return Status{code, std::move(message)}; }

// Records the thread's last error and returns its code.
convbwd_status report(const Status &s);

// Validates the problem fields and fills P, Q (derived, or checked against H, W). Every failure
// names the field.
Status validate_problem(const convbwd_problem *in, ConvProblem *out);

// A problem the registry can be asked about: geometry + dtype + layout + direction + device.
struct Query {
    ConvProblem problem;
    Direction dir = Direction::BwdData;
    Device device = Device::Host;
    // Of the activation tensors (dy and dx; x and dy), for kernels that load them as vectors.
    // run() fills these from the caller's tensors; a query without tensors (convbwd_select_kernel,
    // convbwd_workspace_size) means packed ones from an allocator's aligned base (no entries).
    bool planes_dense = true;  // every H stride is W times the W stride (an (H, W) plane can
                               // be read as one row)
    // Each base address and N, C and H stride with its alignment in elements (the largest power
    // of two <= 16 dividing it), as {4, false, "dx.strides[1] (C) = 60"}; H strides have `row`.
    struct Alignment {
        int align;
        bool row;
        std::string field;
    };
    std::vector<Alignment> alignments;
};

// Empty when the kernel can implement the query, else why not ("stride_class s1, problem stride 2x2").
std::string cannot_implement(const KernelInfo &k, const Query &q);

// Tuned table first, then the first kernel in list order that can implement the query.
// With CONVBWD_VERBOSE=dispatch, prints each rejection and the choice to stderr.
// why_none (optional): where no kernel is found, the first rejection of a kernel of the query's
// direction, device, dtype and layout.
const KernelInfo *select_kernel(const Query &q, std::string *why_none = nullptr);

// Stable key of a problem for tuned tables: new fields go in an optional suffix.
std::string problem_key(const Query &q);

Status device_of(convbwd_target t, Device *d);

}  // namespace convbwd
