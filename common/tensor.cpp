#include "common/tensor.h"

#include <cmath>
#include <limits>

namespace convbwd {

uint16_t f32_to_f16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t exp = (x >> 23) & 0xff;
    uint32_t mant = x & 0x7fffff;
    if (exp == 0xff) return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));  // Inf / NaN
    int32_t e = (int32_t)exp - 127 + 15;
    if (e >= 0x1f) return (uint16_t)(sign | 0x7c00);  // overflow -> Inf
    if (e <= 0) {                                     // subnormal or zero
        if (e < -10) return (uint16_t)sign;
        mant |= 0x800000;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t half = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (half & 1))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t h = sign | ((uint32_t)e << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;  // may carry into the exponent: correct
    return (uint16_t)h;
}

float f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff, x;
    if (exp == 0) {
        if (mant == 0) {
            x = sign;
        } else {  // subnormal
            int e = -1;
            do { mant <<= 1; e++; } while (!(mant & 0x400));
            x = sign | ((uint32_t)(127 - 15 - e) << 23) | ((mant & 0x3ff) << 13);
        }
    } else if (exp == 0x1f) {
        x = sign | 0x7f800000 | (mant << 13);
    } else {
        x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

uint16_t f32_to_bf16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if (std::isnan(f)) return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

float bf16_to_f32(uint16_t h) {
    uint32_t x = (uint32_t)h << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

convbwd_dtype to_c(DType t) { return (convbwd_dtype)t; }
convbwd_layout to_c(Layout l) { return l == Layout::NCHW ? CONVBWD_NCHW : CONVBWD_NHWC; }
convbwd_direction to_c(Direction d) { return d == Direction::BwdData ? CONVBWD_BWD_DATA : CONVBWD_BWD_WEIGHT; }
convbwd_target to_c(Device d) {
    return d == Device::Host     ? CONVBWD_TARGET_HOST
           : d == Device::OpenCL ? CONVBWD_TARGET_OPENCL
           : d == Device::Cuda   ? CONVBWD_TARGET_CUDA
                                 : CONVBWD_TARGET_AMDGPU;
}
Device device_of(convbwd_target t) {
    return t == CONVBWD_TARGET_OPENCL   ? Device::OpenCL
           : t == CONVBWD_TARGET_CUDA   ? Device::Cuda
           : t == CONVBWD_TARGET_AMDGPU ? Device::AmdGpu
                                        : Device::Host;
}

HostTensor::HostTensor(std::array<int64_t, 4> d, DType t, Layout l) : dims(d), dtype(t), layout(l) {
    storage.resize((size_t)size() * dtype_bytes(t));
}

int64_t HostTensor::offset(int64_t i0, int64_t i1, int64_t i2, int64_t i3) const {
    if (layout == Layout::NCHW) return ((i0 * dims[1] + i1) * dims[2] + i2) * dims[3] + i3;
    return ((i0 * dims[2] + i2) * dims[3] + i3) * dims[1] + i1;
}

float HostTensor::get(int64_t i0, int64_t i1, int64_t i2, int64_t i3) const {
    int64_t o = offset(i0, i1, i2, i3);
    if (dtype == DType::F32) {
        float f;
        std::memcpy(&f, storage.data() + 4 * o, 4);
        return f;
    }
    uint16_t h;
    std::memcpy(&h, storage.data() + 2 * o, 2);
    return dtype == DType::F16 ? f16_to_f32(h) : bf16_to_f32(h);
}

void HostTensor::set(int64_t i0, int64_t i1, int64_t i2, int64_t i3, float v) {
    int64_t o = offset(i0, i1, i2, i3);
    if (dtype == DType::F32) {
        std::memcpy(storage.data() + 4 * o, &v, 4);
        return;
    }
    uint16_t h = dtype == DType::F16 ? f32_to_f16(v) : f32_to_bf16(v);
    std::memcpy(storage.data() + 2 * o, &h, 2);
}

std::vector<float> HostTensor::to_logical() const {
    std::vector<float> v((size_t)size());
    size_t i = 0;
    for (int64_t a = 0; a < dims[0]; a++)
        for (int64_t b = 0; b < dims[1]; b++)
            for (int64_t c = 0; c < dims[2]; c++)
                for (int64_t d = 0; d < dims[3]; d++) v[i++] = get(a, b, c, d);
    return v;
}

void HostTensor::from_logical(const std::vector<float> &v) {
    size_t i = 0;
    for (int64_t a = 0; a < dims[0]; a++)
        for (int64_t b = 0; b < dims[1]; b++)
            for (int64_t c = 0; c < dims[2]; c++)
                for (int64_t d = 0; d < dims[3]; d++) set(a, b, c, d, v[i++]);
}

void HostTensor::fill_random_ints(std::mt19937 &rng, int lo, int hi) {
    std::uniform_int_distribution<int> dist(lo, hi);
    std::vector<float> v((size_t)size());
    for (float &f : v) f = (float)dist(rng);
    from_logical(v);
}

void HostTensor::fill_random_uniform(std::mt19937 &rng, float lo, float hi) {
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v((size_t)size());
    for (float &f : v) f = dist(rng);
    from_logical(v);
}

void HostTensor::fill_nan() {
    if (dtype == DType::F32) {
        float nan = std::numeric_limits<float>::quiet_NaN();
        for (int64_t i = 0; i < size(); i++) std::memcpy(storage.data() + 4 * i, &nan, 4);
    } else {
        uint16_t nan = dtype == DType::F16 ? 0x7e00 : 0x7fc0;
        for (int64_t i = 0; i < size(); i++) std::memcpy(storage.data() + 2 * i, &nan, 2);
    }
}

convbwd_tensor HostTensor::desc() {
    convbwd_tensor t{};
    t.data = storage.data();
    t.dtype = to_c(dtype);
    t.layout = to_c(layout);
    return t;
}

std::array<int64_t, 4> x_dims(const ConvProblem &p) { return {p.N, p.C, p.H, p.W}; }
std::array<int64_t, 4> dy_dims(const ConvProblem &p) { return {p.N, p.K, p.P, p.Q}; }
std::array<int64_t, 4> w_dims(const ConvProblem &p) { return {p.K, p.C / p.G, p.R, p.S}; }

convbwd_problem to_c(const ConvProblem &p) {
    convbwd_problem c{};
    c.n = p.N, c.c = p.C, c.h = p.H, c.w = p.W, c.k = p.K, c.p = p.P, c.q = p.Q, c.r = p.R, c.s = p.S;
    c.groups = p.G;
    c.pad_top = p.pad_top, c.pad_bottom = p.pad_bottom, c.pad_left = p.pad_left, c.pad_right = p.pad_right;
    c.stride_h = p.stride_h, c.stride_w = p.stride_w, c.dilation_h = p.dilation_h, c.dilation_w = p.dilation_w;
    return c;
}

}  // namespace convbwd
