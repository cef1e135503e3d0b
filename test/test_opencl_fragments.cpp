// The OpenCL fragment kernels' load-time prelude (runtime/src/opencl_fragments.cpp): which sources
// the emulation may serve with one operand exchange a k-block (fragment_calls_grouped). Plain text,
// so it runs without a device (ctest prelude); the kernels themselves run on PoCL (suite kernels).
#include <doctest/doctest.h>

#include <string>

#include "runtime/src/opencl_fragments.h"

namespace {

// One k-block's calls as Halide 21 writes them: each call's result stored before the next call.
std::string group(const std::string &op, const std::string &operands, int elems, const std::string &between = "") {
    std::string s;
    for (int i = 0; i < elems; i++) {
        if (i > 0) s += between;
        s += "      float _r" + std::to_string(i) + " = " + op + "(" + operands + ", " + std::to_string(i) + ");\n";
        s += "      _acc_0[" + std::to_string(i) + "] = _r" + std::to_string(i) + ";\n";
    }
    return s;
}

const std::string kMma = "convbwd_mma16x8x16_bf16", kMfma = "convbwd_mfma32x32x8_f16";
const std::string kOps16 = "_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _c0, _c1, _c2, _c3";
const std::string kOps32 = "_1, _2, _3, _4, _5, _6, _7, _8, _c0, _c1, _c2, _c3, _c4, _c5, _c6, _c7, _c8, _c9, "
                           "_c10, _c11, _c12, _c13, _c14, _c15";

}  // namespace

TEST_SUITE("prelude") {
TEST_CASE("opencl fragments: whole k-block groups share one operand exchange; anything else keeps one a call") {
    using convbwd::fragment_calls_grouped;
    const std::string head = "__kernel void k(__global float *a) {\n  for (int x = 0; x < 4; x++) {\n";
    const std::string tail = "  }\n}\n";
    std::string why;
    CHECK(fragment_calls_grouped(head + tail));  // no calls
    CHECK(fragment_calls_grouped(head + group(kMma, kOps16, 4) + group(kMma, "_21, " + kOps16.substr(4), 4) + tail,
                                 &why));
    CHECK(fragment_calls_grouped(head + group(kMfma, kOps32, 16, "      int _z = (int)(_1 + (_2));\n") + tail));
    // Elements out of order, a group cut short or continued, another group's operands inside one.
    std::string swapped = head + group(kMma, kOps16, 4) + tail;
    const size_t one = swapped.find(", 1);"), two = swapped.find(", 2);");
    swapped[one + 2] = '2', swapped[two + 2] = '1';
    CHECK_FALSE(fragment_calls_grouped(swapped, &why));
    CHECK(why.find("broken (element 2, expected 1)") != std::string::npos);
    CHECK_FALSE(fragment_calls_grouped(head + group(kMma, kOps16, 3) + tail, &why));
    CHECK(why.find("not finished") != std::string::npos);
    CHECK_FALSE(fragment_calls_grouped(head + group(kMma, kOps16, 3) + group(kMma, kOps16, 4) + tail, &why));
    CHECK(why.find("broken (element 0, expected 3)") != std::string::npos);
    std::string mixed = head + group(kMma, kOps16, 4) + tail;
    mixed.replace(mixed.rfind("_c3, 3"), 3, "_c9");  // the last call's C differs
    CHECK_FALSE(fragment_calls_grouped(mixed));
    CHECK_FALSE(fragment_calls_grouped(head + group(kMfma, kOps32, 4) + tail));  // 16 calls a 32x32x8 k-block
    // Between two calls of a group: a barrier, or a brace (another block of code).
    CHECK_FALSE(fragment_calls_grouped(head + group(kMma, kOps16, 4, "      barrier(CLK_LOCAL_MEM_FENCE);\n") + tail));
    CHECK_FALSE(fragment_calls_grouped(head + group(kMma, kOps16, 4, "      }\n      {\n") + tail));
    // A group that starts past element 0; an element that is not a literal.
    CHECK_FALSE(fragment_calls_grouped(head + "float _r = " + kMma + "(" + kOps16 + ", 1);\n" + tail, &why));
    CHECK(why.find("does not start at element 0") != std::string::npos);
    CHECK_FALSE(fragment_calls_grouped(head + "float _r = " + kMma + "(" + kOps16 + ", _i);\n" + tail, &why));
    CHECK(why.find("not a literal") != std::string::npos);
}
}  // TEST_SUITE("prelude")
