// libFuzzer: problem validation through the C API. The input is a convbwd_problem, a direction,
// dtype, layout, flags and tensor strides; every query entry point must return a status (never
// crash, hang or read out of bounds), and a problem it accepts whose tensors are small is run on
// the host into buffers sized exactly as the problem says (ASan checks the kernel's bounds on
// the caller's side; Halide's own asserts check its buffers). What is checked (a failure traps, and
// libFuzzer keeps the input):
//   - a refusal says why (convbwd_last_error() not empty after any failed call);
//   - the queries agree: a problem given a workspace size was given a kernel, and its key;
//   - a call that succeeds writes every element of its output (poisoned with NaN first: the
//     inputs are finite, so a NaN left is an element no kernel wrote).
#include <cstddef>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <vector>

#include <convbwd/convbwd.h>

#include "common/tensor.h"
#include "test/fuzz/fuzz_check.h"

using convbwd::fuzz::check;

namespace {
struct Reader {
    const uint8_t *p;
    size_t n;
    template <class T>
    T get() {
        T v{};
        const size_t k = n < sizeof(T) ? n : sizeof(T);
        std::memcpy(&v, p, k);
        p += k, n -= k;
        return v;
    }
};
// A failed call's status comes with a message.
void said_why(convbwd_status s) {
    if (s != CONVBWD_SUCCESS) check(convbwd_last_error() && *convbwd_last_error());
}
// Mostly small values (where the interesting edges are), sometimes anything.
int32_t field(Reader &r) {
    const uint8_t sel = r.get<uint8_t>();
    if (sel < 200) return (int32_t)(sel % 12) - 1;
    if (sel < 240) return (int32_t)r.get<uint8_t>();
    return r.get<int32_t>();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Reader r{data, size};
    convbwd_problem p{};
    int32_t *f[] = {&p.n, &p.c, &p.h, &p.w, &p.k, &p.r, &p.s, &p.groups, &p.pad_top, &p.pad_bottom,
                    &p.pad_left, &p.pad_right, &p.stride_h, &p.stride_w, &p.dilation_h, &p.dilation_w};
    for (int32_t *v : f) *v = field(r);
    const convbwd_direction dir = (r.get<uint8_t>() & 1) ? CONVBWD_BWD_WEIGHT : CONVBWD_BWD_DATA;
    const uint8_t dl = r.get<uint8_t>();
    // As ints: 3 is not a dtype, 2 not a layout. Converted at each call (a prvalue, as a C caller
    // passes it); a C++ variable of the enum type holding them would be undefined itself.
    const int dt = dl % 4, lay = (dl / 4) % 3;
#define DTYPE ((convbwd_dtype)dt)
#define LAYOUT ((convbwd_layout)lay)
    convbwd_exec ex{};
    ex.flags = r.get<uint8_t>() < 16 ? r.get<uint32_t>() : 0;
    int64_t strides[3][4] = {};
    if (r.get<uint8_t>() < 32)
        for (auto &t : strides)
            for (int64_t &s : t) s = r.get<uint8_t>() < 128 ? (int64_t)r.get<uint8_t>() : r.get<int64_t>();

    const char *name = nullptr;
    size_t ws = 0;
    char key[1024];  // room for any key (20 fields of up to 11 characters and their names)
    const convbwd_status selected = convbwd_select_kernel(&p, dir, DTYPE, LAYOUT, &ex, &name);
    said_why(selected);
    const convbwd_status sized = convbwd_workspace_size(&p, dir, DTYPE, LAYOUT, &ex, &ws);
    said_why(sized);
    const convbwd_status keyed = convbwd_problem_key(&p, dir, DTYPE, LAYOUT, &ex, key, sizeof key);
    said_why(keyed);
    if (sized == CONVBWD_SUCCESS) check(selected == CONVBWD_SUCCESS && name && *name && keyed == CONVBWD_SUCCESS);
    if (keyed == CONVBWD_SUCCESS) check(std::memchr(key, 0, sizeof key) != nullptr);

    // Run it when the library took it and the tensors are small: exact-size buffers.
    if (sized != CONVBWD_SUCCESS || ws > (1u << 20)) return 0;
    const int64_t P = ((int64_t)p.h + p.pad_top + p.pad_bottom - (int64_t)p.dilation_h * (p.r - 1) - 1) / p.stride_h + 1;
    const int64_t Q = ((int64_t)p.w + p.pad_left + p.pad_right - (int64_t)p.dilation_w * (p.s - 1) - 1) / p.stride_w + 1;
    // Validated: every size fits int32 and each tensor is under 2^31 bytes, so these products fit.
    const int64_t nx = (int64_t)p.n * p.c * p.h * p.w, ndy = (int64_t)p.n * p.k * P * Q,
                  nw = (int64_t)p.k * (p.c / p.groups) * p.r * p.s;
    if (nx > 4096 || ndy > 4096 || nw > 4096) return 0;
    // The work of a call grows with the padded extents as well as with the tensors (a stride
    // phase's rows span the padded input; the stride is at most the padded extent, validate.cpp):
    // a padding of 4e7 asks for that much work, a cost the caller chose, not a hang. Run only
    // problems whose padded planes are small (found by this fuzzer: pad_left 42544386 with stride
    // 34802888 ran for seconds; any query of it returns at once).
    const int64_t padded_h = (int64_t)p.h + p.pad_top + p.pad_bottom, padded_w = (int64_t)p.w + p.pad_left + p.pad_right;
    if (padded_h * padded_w > (1 << 16)) return 0;
    const size_t esz = dt == CONVBWD_F32 ? 4 : 2;
    std::vector<uint8_t> x(nx * esz, 0x3c), dy(ndy * esz, 0x3c), w(nw * esz, 0x3c), wsb(ws + 1);
    convbwd_tensor tx{x.data(), DTYPE, LAYOUT, {}}, tdy{dy.data(), DTYPE, LAYOUT, {}}, tw{w.data(), DTYPE, LAYOUT, {}};
    std::memcpy(tx.strides, strides[0], sizeof tx.strides);
    std::memcpy(tdy.strides, strides[1], sizeof tdy.strides);
    std::memcpy(tw.strides, strides[2], sizeof tw.strides);
    ex.workspace = wsb.data(), ex.workspace_bytes = ws;
    // Strides other than packed are validated against the buffer the caller says it has, which
    // this harness cannot know: run with packed tensors only.
    tx.strides[0] = tx.strides[1] = tx.strides[2] = tx.strides[3] = 0;
    tdy.strides[0] = tdy.strides[1] = tdy.strides[2] = tdy.strides[3] = 0;
    tw.strides[0] = tw.strides[1] = tw.strides[2] = tw.strides[3] = 0;
    // The output poisoned (all ones: NaN in f32, f16 and bf16).
    std::vector<uint8_t> &out = dir == CONVBWD_BWD_DATA ? x : w;
    std::memset(out.data(), 0xff, out.size());
    const convbwd_status ran = dir == CONVBWD_BWD_DATA ? convbwd_bwd_data(&p, &tdy, &tw, &tx, 1.0f, 0.0f, &ex)
                                                       : convbwd_bwd_weight(&p, &tx, &tdy, &tw, 1.0f, 0.0f, &ex);
    said_why(ran);
    if (ran != CONVBWD_SUCCESS) return 0;
    for (size_t i = 0; i < out.size(); i += esz) {
        float v;
        uint16_t h;
        if (esz == 4) std::memcpy(&v, &out[i], 4);
        else std::memcpy(&h, &out[i], 2), v = dt == CONVBWD_F16 ? convbwd::f16_to_f32(h) : convbwd::bf16_to_f32(h);
        check(std::isfinite(v));
    }
    return 0;
}
