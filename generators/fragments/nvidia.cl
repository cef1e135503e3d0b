// Matrix fragments on NVIDIA's OpenCL (generators/fragments.h, kind 1): inline PTX, put in front
// of the emulated prelude by runtime/src/opencl_fragments.cpp when the queue's device is NVIDIA's.
// Each function returns element i of the lane's 4 results of one mma.sync.m16n8k16 accumulating
// onto c0..c3; the asm is not volatile and the 4 calls of a k-block have the same operands, so
// the compiler keeps one instruction per k-block. Pairs of 16-bit elements go into one 32-bit
// register, the lower index in the lower half (PTX ISA, "Matrix fragments for mma.m16n8k16").
#define CONVBWD_NATIVE_MMA16X8X16 1

static inline uint convbwd_frag_pair(ushort lo, ushort hi) { return (uint)lo | ((uint)hi << 16); }

// Element i of the lane's 4 results for operand type T (bf16, f16: the storage bits).
#define CONVBWD_NATIVE_MMA16X8X16_OF(T)                                                                        \
    static inline float convbwd_mma16x8x16_##T(ushort a0, ushort a1, ushort a2, ushort a3, ushort a4, ushort a5, \
                                               ushort a6, ushort a7, ushort b0, ushort b1, ushort b2, ushort b3, \
                                               float c0, float c1, float c2, float c3, int i) {                \
        float d0, d1, d2, d3;                                                                                  \
        __asm__("mma.sync.aligned.m16n8k16.row.col.f32." #T "." #T ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, " \
                "{%8, %9}, {%10, %11, %12, %13};"                                                              \
                : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)                                                       \
                : "r"(convbwd_frag_pair(a0, a1)), "r"(convbwd_frag_pair(a2, a3)), "r"(convbwd_frag_pair(a4, a5)), \
                  "r"(convbwd_frag_pair(a6, a7)), "r"(convbwd_frag_pair(b0, b1)), "r"(convbwd_frag_pair(b2, b3)), \
                  "f"(c0), "f"(c1), "f"(c2), "f"(c3));                                                         \
        return i == 0 ? d0 : i == 1 ? d1 : i == 2 ? d2 : d3;                                                   \
    }
CONVBWD_NATIVE_MMA16X8X16_OF(bf16)
// f16 is 16-bit storage on OpenCL too (generators/algorithms.h).
CONVBWD_NATIVE_MMA16X8X16_OF(f16)
