// make_real_hip_api() for builds without HIP headers: always reports that HIP is unavailable.
#include "runtime/src/amdgpu/hip_launcher.h"

namespace convbwd::amdgpu {

std::shared_ptr<HipApi> make_real_hip_api(Status *status) {
    if (status)
        *status = error(CONVBWD_DEVICE_ERROR,
                        "libamdhip64 could not be loaded: this build has no HIP support (hip/hip_runtime_api.h "
                        "was not found at configure time)");
    return nullptr;
}

}  // namespace convbwd::amdgpu
