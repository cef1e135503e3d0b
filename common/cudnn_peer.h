// cuDNN as an independent GPU peer: the same problem, dtype, layout and data, run by cuDNN's
// convolution backward functions (legacy API) on the CUDA device. Used as an oracle by GPU
// tests and timed beside convbwd by the driver (--compare cudnn). The CUDA counterpart of
// OnednnPeer; it works on device memory (DeviceBuffer handles, see common/device.h).
//
// Math: f32 uses CUDNN_FMA_MATH (no TF32); f16 / bf16 use tensor cores where cuDNN's chosen
// algorithm does; accumulation (compute type) is f32 everywhere. The algorithm is the fastest
// one cudnnFind*AlgorithmEx measures in the constructor whose workspace fits in 1 GiB.
// Padding must be expressible as one pad per dimension: pad_top != pad_bottom is refused
// unless pad_bottom never matters (the same P results from pad_bottom = pad_top); likewise
// for pad_left / pad_right.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "generators/conv_problem.h"

namespace convbwd {

class CudnnPeer {
public:
    // Describes (problem, direction) to cuDNN and picks its algorithm (this runs every
    // candidate algorithm once on scratch buffers: milliseconds to seconds). On failure
    // (no CUDA device, cuDNN missing, a problem cuDNN cannot express or run), ok() is false
    // and why() says so.
    CudnnPeer(const ConvProblem &p, Direction dir);
    ~CudnnPeer();
    CudnnPeer(const CudnnPeer &) = delete;
    CudnnPeer &operator=(const CudnnPeer &) = delete;

    bool ok() const;
    // Why the constructor failed, or the message of the last failed run().
    const std::string &why() const;

    // The CUDA stream (cudaStream_t) run() enqueues on; nullptr (the default) = legacy default stream.
    void set_stream(void *stream);

    // bwd_data: a = dy, b = w, out = dx.  bwd_weight: a = x, b = dy, out = dw.
    // Device pointers to packed tensors in the problem's dtype and layout; out = result (beta = 0,
    // out is never read). Asynchronous on the stream. Returns false on error (see why()).
    bool run(const void *a_dev, const void *b_dev, void *out_dev);

    // Workspace of the chosen algorithm (held by the peer), in bytes.
    size_t workspace_bytes() const;
    // "bwd_data_algo_1 tensor_op" etc: the chosen algorithm and math type; "" if !ok().
    std::string algo_name() const;
    // The time cudnnFind measured for the chosen algorithm, in ms (-1 if !ok()).
    double find_ms() const;

    // Version of the cuDNN library loaded at run time ("9.19.0"); "" in a build without CUDA.
    static std::string library_version();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace convbwd
