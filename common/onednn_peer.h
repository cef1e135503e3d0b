// oneDNN as an independent peer: the same problem, dtype, layout and data, run by oneDNN's
// convolution backward primitives on the host CPU. Used as a second oracle by the tests and
// timed beside convbwd by the driver (--compare onednn).
#pragma once

#include <memory>
#include <string>

#include "common/tensor.h"

namespace convbwd {

class OnednnPeer {
public:
    // Builds the primitive for (problem, direction). On failure (oneDNN cannot run this
    // problem/dtype on this CPU), ok() is false and why() says so.
    OnednnPeer(const ConvProblem &p, Direction dir);
    ~OnednnPeer();
    bool ok() const;
    const std::string &why() const;
    // bwd_data: a = dy, b = w, out = dx.  bwd_weight: a = x, b = dy, out = dw.
    // Tensors are in the problem's dtype and layout (HostTensor storage). Returns false on error.
    bool run(const HostTensor &a, const HostTensor &b, HostTensor &out);
    // Milliseconds the last run() spent in the primitive itself. oneDNN runs in the formats it
    // prefers (as benchdnn does); reordering the caller's packed tensors in and out is excluded.
    double primitive_ms() const;
    // Milliseconds the last run() took from the caller's layout: the reorders of its tensors into the
    // formats the primitive chose and of the output back (primitives made once), plus the primitive:
    // what a caller holding NCHW or NHWC tensors pays. primitive_ms() where no reorder is needed.
    double layout_ms() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace convbwd
