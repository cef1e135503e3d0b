// The kernel registry, generated from the kernel list (schedules/variants.cmake).
#include <cstring>
#include <sstream>
#include <type_traits>

#include "all_kernels.h"
#include "internal.h"
#include "schedules/params.h"

namespace convbwd {
namespace {

// A kernel whose signature matches neither function type fails to compile here.
const KernelInfo kKernels[] = {
#define CONVBWD_KERNEL(name, dir, dtype, layout, stride, filter, on, sched, role)                               \
    {#name,      Direction::dir, DType::dtype, Layout::layout, StrideClass::stride, FilterClass::filter, \
     Device::on, sched,          role,         KernelFn(&kernels::name)},
#include "kernel_list.inc"
#undef CONVBWD_KERNEL
};

}  // namespace

const KernelInfo *kernels_begin() { return kKernels; }
const KernelInfo *kernels_end() { return kKernels + sizeof(kKernels) / sizeof(kKernels[0]); }

namespace {
// The kernel's schedule parameters: the struct's defaults (as the generator had them) overridden
// by the kernel list's key=value string.
template <class Params>
Params parse_schedule(const KernelInfo &k) {
    Params params;
    std::istringstream in(k.schedule);
    for (std::string kv; in >> kv;) {
        size_t eq = kv.find('=');
        if (eq != std::string::npos) set_param(params, kv.substr(0, eq), kv.substr(eq + 1));
    }
    return params;
}
}  // namespace

int64_t weight_splits(const KernelInfo &k, const ConvProblem &p) {
    int max_splits = k.device == Device::Host ? parse_schedule<BwdWeightHostParams>(k).max_splits
                                              : parse_schedule<BwdWeightGpuParams>(k).max_splits;
    return wgrad_splits((int64_t)p.N * p.P, max_splits);
}

int64_t workspace_bytes(const KernelInfo &k, const ConvProblem &p) {
    if (k.dir != Direction::BwdWeight) return 0;
    return (int64_t)p.K * (p.C / p.G) * p.R * p.S * weight_splits(k, p) * (int64_t)sizeof(float);
}

const KernelInfo *find_kernel(const std::string &name) {
    for (const KernelInfo *k = kernels_begin(); k != kernels_end(); ++k)
        if (name == k->name) return k;
    return nullptr;
}

}  // namespace convbwd
