// The one harness: "run kernel K on problem P, verify against the reference, time it against a
// peer in the same process". The tests (test/conformance.h), convbwd-driver (apps/driver) and the
// tuner call run_case(); nothing else launches, verifies or times a kernel.
//
// A case runs as a framework would call the library: the caller-side workspace sized by
// convbwd_workspace_size, the tensors in the target's memory (common/device.h), the call on the
// device's queue. Inputs are random small integers (exact in every dtype; every partial sum is
// exact in f32) unless the caller supplies them; the output is poisoned with NaN first, so an
// unwritten element fails verification and beta = 0 must not read it.
//
// Peers (make_peer): "onednn" (host; times the primitive alone, as benchdnn does), "cudnn" (CUDA,
// on the same device buffers and stream), "scatter" (convbwd's scatter-then-convolve baseline
// kernel of the same dtype, layout and target; backward-data only). A peer runs on the same
// inputs and buffer sets as convbwd and is verified the same way (against the reference, or
// against convbwd's output when there is no reference).
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/device.h"
#include "common/tensor.h"
#include "common/verify.h"
#include "convbwd/convbwd.h"
#include "generators/conv_problem.h"

namespace convbwd {

// A problem's inputs and reference, kept across runs of many kernels on the same problem (the
// tuner verifies every candidate on every suite problem): the first run_case given an empty one
// fills it, later ones reuse its inputs and reference instead of drawing and computing them
// again. Only for random inputs (no supplied a, b) and beta == 0.
struct CaseData {
    bool filled = false;
    HostTensor a, b;
    std::vector<double> ref;
};

struct RunSpec {
    ConvProblem p;  // geometry, dtype and layout
    Direction dir = Direction::BwdData;
    Device device = Device::Host;  // the target the kernel runs on
    std::string kernel;            // "" = the dispatcher's choice; "NAME knob=value ..." forces launch knobs
    float alpha = 1.0f, beta = 0.0f;
    bool verify = true;                  // against the naive reference (double accumulation)
    bool time = false;                   // warmup calls (on the host for 20 ms at least), then the median of `iters` timed calls
    int warmup = 1, iters = 5;
    std::string peer;                    // "" (none), "onednn", "cudnn", "scatter"
    const HostTensor *a = nullptr;       // supplied inputs (dy and w for bwd_data, x and dy for
    const HostTensor *b = nullptr;       // bwd_weight); random small integers when null
    CaseData *cache = nullptr;           // see CaseData (ignored with supplied inputs or beta != 0)
};

struct PeerResult {
    std::string name;
    int verified = -1;  // -1: not checked (refused, or nothing to check against); 0: failed; 1: passed
    std::string note;   // "verified (bwd_data_algo_1 fma)", "cudnn refused: ...", "3 mismatches, first ..."
    double time_ms = NAN;
    // From the caller's layout (Peer::layout_ms: oneDNN with the reorders its formats need); NaN for
    // a peer without formats of its own.
    double layout_time_ms = NAN;
};

struct RunResult {
    convbwd_status status = CONVBWD_SUCCESS;
    std::string error;   // why the run failed before any number existed (status != SUCCESS)
    std::string kernel;  // the kernel that ran (empty if selection failed)
    size_t workspace_bytes = 0;
    int buffer_sets = 1;  // copies of the operands rotated while timing (cold caches)
    bool exact = false;   // verified bit for bit (random small integers, alpha 1, beta 0, and a kernel
                          // exact on them: convbwd_kernel_desc.exact_on_integers)
    VerifyResult verify;  // meaningful when the spec asked for verification
    double time_ms = NAN;
    HostTensor a, b, out;  // the inputs and the output of the first call
    PeerResult peer;
    // The run succeeded, its verification (if asked) passed, and the peer (if any) did not fail.
    bool ok(const RunSpec &s) const { return status == CONVBWD_SUCCESS && (!s.verify || verify.ok) && peer.verified != 0; }
};

// One set of operands of a call: on the host, copies of the tensors; on a GPU, device buffers
// (a, b, out stay empty); ta/tb/tout are the descriptors the C API takes.
struct Operands {
    HostTensor a, b, out;
    std::unique_ptr<DeviceBuffer> da, db, dout;
    convbwd_tensor ta{}, tb{}, tout{};
};

class Peer {
public:
    virtual ~Peer() = default;
    // One call on operand set s into the peer's own output; on a GPU it may be asynchronous
    // (the harness synchronises). False with *error on failure.
    virtual bool run(Operands &s, std::string *error) = 0;
    // The output of the last run, on the host (after the harness synchronised).
    virtual bool output(HostTensor *out, std::string *error) = 0;
    // The time of the last run as the peer measures it itself (oneDNN: the primitive alone);
    // NaN when the harness times the call.
    virtual double own_ms() const { return NAN; }
    // The time of the last run from the caller's layout (oneDNN: the primitive with the reorders in
    // and out that its formats need, the primitive alone where it needs none); NaN for a peer that
    // has no formats of its own.
    virtual double layout_ms() const { return NAN; }
    // What the peer chose ("bwd_data_algo_1 fma", the scatter kernel's name); may be empty.
    virtual std::string detail() const { return ""; }
    // How much more than f32 accumulation error its chosen algorithm may add (common/verify.h,
    // ErrorModel): 1, or a factor for transform-domain algorithms (FFT, Winograd), with what.
    virtual double transform_scale(std::string *what) const {
        (void)what;
        return 1;
    }
};

// The peer `name` for spec s on device dev (null for the host); nullptr with *why when the peer
// does not exist in this build or refuses the case.
std::unique_ptr<Peer> make_peer(const std::string &name, const RunSpec &s, GpuDevice *dev, const HostTensor &out_like,
                                std::string *why);

// Runs one case. rng draws the random inputs (drawn again, up to 8 times, while the reference
// would be all zeros: tiny problems hit that by chance and it would hide an unwritten output).
RunResult run_case(const RunSpec &s, std::mt19937 &rng);

// Accumulation length of one output element (K/G*R*S for bwd_data, N*P*Q for bwd_weight): the
// verification tolerance scales with it.
inline int64_t accumulation_length(const ConvProblem &p, Direction d) {
    return d == Direction::BwdData ? (int64_t)p.K / p.G * p.R * p.S : (int64_t)p.N * p.P * p.Q;
}

}  // namespace convbwd
