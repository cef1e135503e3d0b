// Internal runtime declarations: kernel registry, dispatcher, validation.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <cstring>

#include "HalideRuntime.h"
#include "convbwd/convbwd.h"
#include "generators/conv_problem.h"
#include "schedules/spaces.h"

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
    const char *family;    // its generator and schedule space (schedules/spaces.h)
    Role role;             // candidates and baselines run only when named (exec.kernel, a tuning record)
    const char *schedule;  // compile-time knobs, key=value
    const char *launch;    // launch-time knobs' values unless a tuning record or exec.kernel sets them
    KernelFn fn;
    // Filled by the registry: every knob's value (parsed once), printed; the module it came from.
    const KnobValues *knobs = nullptr;
    const char *all_knobs = nullptr;
    const char *module = nullptr;  // null: built into the library
    bool exact_on_integers = true;  // exact_on_integers(*knobs) (schedules/spaces.h)
};

// A kernel and the knob values it is launched with: its compile-time knobs and its launch-time
// ones (the manifest's, or a tuning-database record's, or exec.kernel's "NAME knob=value ...").
struct Selection {
    const KernelInfo *kernel = nullptr;
    KnobValues knobs;
    std::string source;  // where the choice came from (for CONVBWD_VERBOSE=dispatch)
};
// The kernel's own knob values (parsed once per registry entry).
const KnobValues &kernel_knobs(const KernelInfo &k);
inline Selection select_as_built(const KernelInfo &k, std::string source = {}) { return {&k, kernel_knobs(k), std::move(source)}; }
// The same with launch-time knobs set from "knob=value ..."; "" or the error naming the knob.
std::string with_launch_knobs(const KernelInfo &k, const std::string &launch, Selection *out);

// Workspace bytes a selection needs for problem p (backward-weight: the f32 partials).
int64_t workspace_bytes(const Selection &s, const ConvProblem &p);
// Backward-weight's reduction split for problem p: the max_splits the kernel is called with (a
// function of the problem and the selection only, so results are reproducible), and the number
// of partial sums that gives.
int64_t weight_max_splits(const Selection &s, const ConvProblem &p);
// Host backward-weight: the most of the N*P*Q terms summed into one f32 partial (accuracy).
constexpr int64_t kWgradTermsPerSplit = int64_t{1} << 18;
// A direct backward-weight kernel (direct = 1) sums a filter element's N*P*Q terms in one running
// f32 sum (no blocks): at most this many. convbwd-accuracy (one-sign inputs, 64 channels, 1x1 NHWC):
// its error over sum |x * dy| was 2.9e-6 at 4096 terms, 7.0e-6 at 16384, 3.3e-5 at 262144, against
// 0.5-1.7e-6 for the split kernel over that range (docs/KERNELS.md, "Accuracy").
constexpr int64_t kWgradDirectTerms = int64_t{1} << 12;
struct Query;
int64_t weight_splits(const Selection &s, const Query &q);

// Whether a selection sees problem p's spatial plane as one row (launch knob flat): a pointwise
// stride-1 unpadded problem, P x Q = H x W. The caller still checks that the planes are dense.
bool flattens_pointwise_plane(const Selection &s, const ConvProblem &p);
// The channel vector of kernel k (its params' channel_vector()): k requires C and C / groups to
// be multiples of it (1: any); backward-weight ones K too, and groups 1.
int channel_vector(const KernelInfo &k);
// A kernel's conditions on a grouped problem's c / groups (its family's, schedules/spaces.h).
GroupChannels group_channels(const KernelInfo &k);
// Struct Query is declared below; the rows x images (or filter rows x k) a GPU kernel puts on one
// grid dim of at most 65535 blocks for this query (0 for host kernels and where none does).
struct Query;
int64_t gpu_grid_rows(const Selection &s, const Query &q);
// A GPU backward-data kernel's column vector (NCHW read in place, xvec): its rows (flat: planes)
// and the tensors' strides and bases must be multiples of it; 1 for every other kernel.
int column_vector(const KernelInfo &k);
// The vector a matrix-fragment kernel loads its input tensors' channels with in place (backward-
// data: dy, vec; backward-weight with NHWC staged chunks: x and dy, weight_mma_input_vector()): k, their bases
// and their N, H and W strides must be multiples of it; 1 for every other kernel.
int input_channel_vector(const KernelInfo &k);
// Whether a matrix-fragment kernel copies its staged chunks one chunk ahead of their use
// (data_mma_copies_ahead(): the CUDA rewrite then waits for its cp.async copies one chunk later).
bool copies_ahead(const KernelInfo &k);
// A staged GPU kernel's block (0, 0 for every other kernel): backward-data (conv_bwd_data_staged_gpu)
// its channels (tile_c * threads_c) and chunk of k (block_k), backward-weight
// (conv_bwd_weight_staged_gpu) its channels and k (tile_c * threads_c, tile_k * threads_k). The
// dispatcher refuses problems whose c or k per group would leave its blocks mostly empty.
struct StagedBlock {
    int c = 0, k = 0;
};
StagedBlock staged_block(const KernelInfo &k);

// The registry: the built-in kernels in kernel-list order (= dispatch priority), then those of
// loaded modules. A snapshot: loading a module publishes a new list, entries never move.
using KernelList = std::shared_ptr<const std::vector<const KernelInfo *>>;
KernelList kernel_list();
const KernelInfo *find_kernel(const std::string &name);

struct Status {
    convbwd_status code = CONVBWD_SUCCESS;
    std::string message;
    bool ok() const { return code == CONVBWD_SUCCESS; }
};
inline Status fail(convbwd_status code, std::string message) { return Status{code, std::move(message)}; }

// Loads a kernel module (convbwd/convbwd_module.h) and registers its kernels as candidates;
// every record is checked first (a bad module adds nothing). *added: the kernels new to the
// registry (a name already registered is the same compile-time point and is kept as it was).
Status load_kernel_module(const std::string &path, int *added);
// Records the outcome of an API call and returns its code: a failure's message (never empty) for
// convbwd_last_error(), or "" for a success. Every public call that returns a status ends in it.
convbwd_status report(const Status &s);

// Validates the problem fields and fills P, Q (derived, or checked against H, W). Every failure
// names the field. Overflow-safe: padded sizes, dilated filters, P and Q must fit int32.
Status validate_problem(const convbwd_problem *in, ConvProblem *out);
// Validates the sizes of a problem's tensors for its dtype (and, for backward-weight, the f32
// partial sums): element counts fit int64 (BAD_PARAM) and each tensor's bytes fit int32, as
// the kernels address them (NOT_SUPPORTED). Every entry point calls it before dispatching.
Status validate_sizes(const ConvProblem &p, Direction dir);

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
    // Each base address and N, C, H and W stride with its alignment in elements (the largest power
    // of two <= 16 dividing it), as {4, 1, "dx", "dx.strides[1] (C) = 60"}; dim -1 is the base
    // address, 0-3 the strides of N, C, H (a row), W.
    struct Alignment {
        int align;
        int dim;
        const char *tensor;  // "dy", "dx", "x" (static storage)
        int64_t value;       // the stride (dim >= 0)
        // The field for messages, "dx.strides[1] (C) = 60" or "dx.data": formatted only when a
        // reason needs it, not on every call.
        std::string field() const {
            static const char *const kDim[4] = {"N", "C", "H", "W"};
            if (dim < 0) return std::string(tensor) + ".data";
            return std::string(tensor) + ".strides[" + std::to_string(dim) + "] (" + kDim[dim] + ") = " + std::to_string(value);
        }
    };
    std::vector<Alignment> alignments;
};

// Empty when the selection can implement the query, else why not ("stride_class s1, problem stride 2x2").
std::string cannot_implement(const Selection &s, const Query &q);

// The tuning databases first (the user's, then the default one compiled in), then the first
// default kernel in list order that can implement the query. With CONVBWD_VERBOSE=dispatch,
// prints each record used or skipped (and why), each rejection and the choice to stderr.
// why_none (optional): where no kernel is found, the first rejection of a kernel of the query's
// direction, device, dtype and layout. Returns a selection with kernel == nullptr if none.
// The choice is kept per query (problem, direction, device, the activations' alignments), for the
// loaded kernel list and tuning databases (a load makes new entries), as oneDNN's primitive cache
// and MIOpen's find cache keep theirs: a repeated call neither formats a key nor walks the list.
// Under CONVBWD_VERBOSE=dispatch every call walks it again (and prints); a query with no kernel is
// not kept.
std::shared_ptr<const Selection> select_kernel(const Query &q, std::string *why_none = nullptr);

// Stable key of a problem for tuning databases, one token: new fields go in an optional suffix.
std::string problem_key(const Query &q);

// Tuning databases (runtime/src/tuning_db.cpp): text, one record a line,
// "<problem_key> <kernel name> [launch-time knob=value ...]", '#' comments.
struct TuningRecord {
    std::string key, kernel, launch;
    std::string where;  // "<file>:<line>"
};
// Loads the user's database (replacing the one loaded before; path NULL or "" clears it). The
// whole file is parsed first: a malformed one is refused with its file, line and field, and
// nothing changes.
Status load_tuning_db(const char *path);
// The records for one problem key, the user's first, then the default database's.
std::vector<TuningRecord> tuning_records(const std::string &key);
// Changes whenever the user's tuning database does (a load, a reset, CONVBWD_TUNING_DB read at
// first use): a key of select_kernel's cache.
uint64_t tuning_db_generation();
// A "module FILE" line: a kernel module to load with the database (path as written).
struct TuningModule {
    std::string path, where;
};
// Parses database text (for the loader and the tests); "" or "<where>:<line>: <field>: <why>".
std::string parse_tuning_db(const std::string &text, const std::string &where, std::vector<TuningRecord> *out,
                            std::vector<TuningModule> *modules = nullptr);

// t: the caller's exec.target as stored (raw_enum: any int a C caller put there).
Status device_of(int t, Device *d);

// The int a caller stored in an enum field or argument. C lets any int through; reading it as
// the C++ enum type is undefined outside the enum's values (UBSan's -fsanitize=enum found it).
template <class E>
int raw_enum(const E &e) {
    static_assert(sizeof(E) == sizeof(int), "enums of the C API are int-sized");
    int v;
    std::memcpy(&v, &e, sizeof v);
    return v;
}

// Host kernels' ISA (host_isa.cpp): the hook that applies CONVBWD_MAX_CPU_ISA to Halide's
// multi-target choice, the level the host kernels run at ("avx512", "avx2", "sse41"), and how
// many times a wrapper's request for a level's variant was granted (tests; a wrapper asks for
// every variant but the baseline on its first call and runs the best one granted), or
// "refused": how many requests the cap refused.
void install_host_isa_hook();
const char *host_isa();
int host_f32_lanes();  // the f32 lanes of a vector register at that level (16, 8, 4)
long host_variant_runs(const char *isa);

}  // namespace convbwd
