// The kernel registry, generated from the kernel list (schedules/variants.cmake).
#include <cstring>
#include <type_traits>

#include "all_kernels.h"
#include "internal.h"

namespace convbwd {
namespace {

const KernelInfo kKernels[] = {
#define CONVBWD_KERNEL(name, dir, dtype, layout, stride, filter, on, sched)                                       \
    {#name,        Direction::dir, DType::dtype, Layout::layout, StrideClass::stride, FilterClass::filter, \
     Device::on, sched,          &kernels::name},
#include "kernel_list.inc"
#undef CONVBWD_KERNEL
};

#define CONVBWD_KERNEL(name, dir, dtype, layout, stride, filter, on, sched) \
    static_assert(std::is_same_v<decltype(&kernels::name), ConvFn>, #name " does not have the ConvFn signature");
#include "kernel_list.inc"
#undef CONVBWD_KERNEL

}  // namespace

const KernelInfo *kernels_begin() { return kKernels; }
const KernelInfo *kernels_end() { return kKernels + sizeof(kKernels) / sizeof(kKernels[0]); }

const KernelInfo *find_kernel(const std::string &name) {
    for (const KernelInfo *k = kernels_begin(); k != kernels_end(); ++k)
        if (name == k->name) return k;
    return nullptr;
}

}  // namespace convbwd
