// One (problem, direction) of the driver: the options turned into a harness case
// (common/harness.h: inputs, the call, verification, timing, the peer) and its report (text or
// a JSON row).
#pragma once

#include <map>
#include <string>

#include "apps/driver/cli.h"
#include "common/device.h"
#include "common/tensor.h"

namespace convbwd::driver {

// Inputs read by --load-dir, by name: "x", "w", "dy".
using Inputs = std::map<std::string, HostTensor>;

// Runs one direction on the options' target (`dev`: its device, null for the host); `loaded` is
// null for random inputs.
// On success *result holds the output (dx or dw) as the first call wrote it. Returns false
// when the call failed or verification failed (the report says so).
bool run_one(const ConvProblem &p, Direction dir, const Options &o, GpuDevice *dev, const Inputs *loaded,
             int line_no, HostTensor *result);

}  // namespace convbwd::driver
