// Host tensors for tests, the driver and autotuning: logical indexing over storage in any
// dtype and layout, f16/bf16 conversions, random small-integer fills and NaN poisoning.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <new>
#include <random>
#include <vector>

#include "convbwd/convbwd.h"
#include "generators/conv_problem.h"

namespace convbwd {

uint16_t f32_to_f16(float f);   // round to nearest even
float f16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);  // round to nearest even
float bf16_to_f32(uint16_t h);

convbwd_dtype to_c(DType t);
convbwd_layout to_c(Layout l);
convbwd_direction to_c(Direction d);
convbwd_target to_c(Device d);
Device device_of(convbwd_target t);  // an unknown value reads as the host

// Storage aligned as frameworks allocate theirs (PyTorch, oneDNN: 64 bytes), so that a kernel's
// vectors line up with cache lines as in a user's program, not at whatever multiple of 16 bytes
// the heap hands back.
template <class T>
struct CacheLineAllocator {
    using value_type = T;
    static constexpr std::align_val_t kAlign{64};
    CacheLineAllocator() = default;
    template <class U>
    CacheLineAllocator(const CacheLineAllocator<U> &) {}
    T *allocate(size_t n) { return static_cast<T *>(::operator new(n * sizeof(T), kAlign)); }
    void deallocate(T *p, size_t) { ::operator delete(p, kAlign); }
    template <class U>
    bool operator==(const CacheLineAllocator<U> &) const { return true; }
    template <class U>
    bool operator!=(const CacheLineAllocator<U> &) const { return false; }
};

// dims are logical: (N, C, H, W) for activations, (K, C/G, R, S) for filters. Storage is packed
// per layout: NCHW / KCYX, or NHWC / KYXC (dim 1 innermost).
struct HostTensor {
    std::array<int64_t, 4> dims{};
    DType dtype = DType::F32;
    Layout layout = Layout::NCHW;
    std::vector<uint8_t, CacheLineAllocator<uint8_t>> storage;

    HostTensor() = default;
    HostTensor(std::array<int64_t, 4> d, DType t, Layout l);

    int64_t size() const { return dims[0] * dims[1] * dims[2] * dims[3]; }
    int64_t offset(int64_t i0, int64_t i1, int64_t i2, int64_t i3) const;  // in elements
    float get(int64_t i0, int64_t i1, int64_t i2, int64_t i3) const;
    void set(int64_t i0, int64_t i1, int64_t i2, int64_t i3, float v);
    // Logical order (i0 slowest, i3 fastest) as floats, and back.
    std::vector<float> to_logical() const;
    void from_logical(const std::vector<float> &v);
    void fill_random_ints(std::mt19937 &rng, int lo = -2, int hi = 2);
    void fill_random_uniform(std::mt19937 &rng, float lo = -1.0f, float hi = 1.0f);
    void fill_nan();
    convbwd_tensor desc();  // packed view for the C API
};

// Tensor shapes of a problem.
std::array<int64_t, 4> x_dims(const ConvProblem &p);   // N, C, H, W
std::array<int64_t, 4> dy_dims(const ConvProblem &p);  // N, K, P, Q
std::array<int64_t, 4> w_dims(const ConvProblem &p);   // K, C/G, R, S

convbwd_problem to_c(const ConvProblem &p);

}  // namespace convbwd
