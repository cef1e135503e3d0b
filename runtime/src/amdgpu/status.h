// Status of the AMDGPU code-object and launch layer: a convbwd_status code plus a message that
// names what failed (kernel, argument index, HIP call). No exceptions cross this layer.
#pragma once

#include <string>
#include <utility>

#include "convbwd/convbwd.h"

namespace convbwd::amdgpu {

struct Status {
    convbwd_status code = CONVBWD_SUCCESS;
    std::string message;
    bool ok() const { return code == CONVBWD_SUCCESS; }
};

inline Status ok_status() { return Status{}; }
inline Status error(convbwd_status code, std::string message) { return Status{code, std::move(message)}; }

}  // namespace convbwd::amdgpu
