// CUDA kernels that call matrix fragments (generators/fragments.h, kind 1: 16x8x16 over a 32-lane
// warp). Halide's PTX calls the pure extern convbwd_mma16x8x16_{bf16,f16}(a0..a7, b0..b3, c0..c3,
// i) once per result element (element i of A x B + C); nothing defines it. The host pipelines'
// halide_cuda_initialize_kernels is renamed at build time (cmake/ConvbwdKernels.cmake,
// _conv_kernel_fragments) to the function at the end of this file, which rewrites each such
// call in place into the instruction itself,
//   mma.sync.aligned.m16n8k16.row.col.f32.T.T.f32 {d0..d3}, {A pairs}, {B pairs}, {c0..c3}
// and a move of d_i into the call's result register, then hands the PTX to Halide's CUDA runtime.
// The calls of one k-block have the same operands, and ptxas keeps one HMMA of identical mma
// instructions (checked with cuobjdump: docs/KERNELS.md); a PTX .func defined beside the kernel
// would stay a call per element (ptxas does not inline it). Each kernel's PTX is rewritten once
// per process. The rewrite is plain text and built everywhere (test/test_cuda_fragments.cpp,
// ctest ptx); the entry point only where CUDA is a target.
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_fragments.h"
#include "device_glue.h"

namespace convbwd {
namespace {

// The call's parameters, from the layout's one definition (frag::shape in generators/conv_problem.h):
// A and B elements (16-bit), then the accumulator's C elements (f32), then i.
const frag::Shape kShape = frag::shape(1);
const int kAB = kShape.a_per_lane + kShape.b_per_lane, kOperands = kAB + kShape.elems;

std::string trim(const std::string &s) {
    size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t;");
    return b == std::string::npos ? std::string() : s.substr(b, e + 1 - b);
}

// One call block, "{ // callseq N ... } // callseq N", of a fragment call: the mma and the move.
// Fills error and returns "" where the block is not in the form LLVM's NVPTX back end writes.
std::string rewrite_call(const std::string &block, const std::string &type, int serial, std::string *error) {
    std::vector<std::string> val(kOperands + 1), width(kOperands + 1);
    std::string result;
    size_t pos = 0;
    while (pos < block.size()) {
        size_t eol = block.find('\n', pos);
        if (eol == std::string::npos) eol = block.size();
        const std::string line = trim(block.substr(pos, eol - pos));
        pos = eol + 1;
        // st.param.b32 [param3], %r7   |   st.param.b16 [param3+0], %rs7
        if (line.rfind("st.param.", 0) == 0) {
            const size_t lb = line.find("[param"), rb = line.find(']'), comma = line.find(',', rb);
            if (lb == std::string::npos || rb == std::string::npos || comma == std::string::npos) continue;
            const int k = std::atoi(line.c_str() + lb + 6);
            if (k < 0 || k > kOperands) {
                *error = "fragment call with parameter " + std::to_string(k);
                return "";
            }
            width[k] = line.substr(9, line.find_first_of(" \t") - 9);  // b32, b16, u32, ...
            val[k] = trim(line.substr(comma + 1));
        } else if (line.rfind("ld.param.", 0) == 0 && line.find("[retval0") != std::string::npos) {
            const size_t sp = line.find_first_of(" \t"), comma = line.find(',');
            result = trim(line.substr(sp, comma - sp));
        }
    }
    for (int k = 0; k <= kOperands; k++)
        if (val[k].empty()) {
            *error = "fragment call without parameter " + std::to_string(k);
            return "";
        }
    if (result.empty()) {
        *error = "fragment call without a result";
        return "";
    }
    const std::string p = "%cbf" + std::to_string(serial) + "_";
    std::string o = "\t{ // matrix fragment (runtime/src/cuda_fragments.cpp)\n";
    const std::string n_ab = std::to_string(kAB), n_c = std::to_string(kShape.elems);
    o += "\t.reg .b32 " + p + "x<" + n_ab + ">;\n\t.reg .b32 " + p + "p<" + std::to_string(kAB / 2) + ">;\n\t.reg .f32 " +
         p + "d<" + n_c + ">;\n\t.reg .f32 " + p + "c<" + n_c + ">;\n";
    for (int k = kAB; k < kOperands; k++) o += "\tmov.f32 " + p + "c" + std::to_string(k - kAB) + ", " + val[k] + ";\n";
    // Pairs: the lower index in the lower half (PTX ISA, mma.m16n8k16 fragments). Two 16-bit
    // registers pack with one vector mov, which ptxas folds where they were unpacked from one
    // 32-bit load (a channel group's pair: no instruction at all); anything else goes through the
    // 32-bit low halves (a 32-bit parameter's high half is not relied on).
    auto is16 = [&](int k) { return width[k].size() > 1 && width[k].substr(1) == "16"; };
    for (int q = 0; q < kAB / 2; q++) {
        const int lo = 2 * q, hi = 2 * q + 1;
        const std::string pq = p + "p" + std::to_string(q);
        if (is16(lo) && is16(hi) && val[lo][0] == '%' && val[hi][0] == '%') {
            o += "\tmov.b32 " + pq + ", {" + val[lo] + ", " + val[hi] + "};\n";
            continue;
        }
        for (int k : {lo, hi})
            o += (is16(k) && val[k][0] == '%' ? "\tcvt.u32.u16 " : "\tmov.b32 ") + p + "x" + std::to_string(k) + ", " +
                 val[k] + ";\n";
        o += "\tprmt.b32 " + pq + ", " + p + "x" + std::to_string(lo) + ", " + p + "x" + std::to_string(hi) + ", 0x5410;\n";
    }
    o += "\tmma.sync.aligned.m16n8k16.row.col.f32." + type + "." + type + ".f32 {" + p + "d0, " + p + "d1, " + p +
         "d2, " + p + "d3}, {" + p + "p0, " + p + "p1, " + p + "p2, " + p + "p3}, {" + p + "p4, " + p +
         "p5}, {" + p + "c0, " + p + "c1, " + p + "c2, " + p + "c3};\n";
    const std::string &i = val[kOperands];
    if (i.size() == 1 && i[0] >= '0' && i[0] <= '3') {
        o += "\tmov.b32 " + result + ", " + p + "d" + i + ";\n";
    } else {  // a run-time element index: select among the four
        o += "\t.reg .pred " + p + "q<3>;\n\t.reg .f32 " + p + "s<2>;\n";
        o += "\tsetp.eq.s32 " + p + "q0, " + i + ", 0;\n\tsetp.eq.s32 " + p + "q1, " + i + ", 1;\n\tsetp.eq.s32 " + p +
             "q2, " + i + ", 2;\n";
        o += "\tselp.f32 " + p + "s0, " + p + "d2, " + p + "d3, " + p + "q2;\n";
        o += "\tselp.f32 " + p + "s1, " + p + "d1, " + p + "s0, " + p + "q1;\n";
        o += "\tselp.f32 " + p + "s0, " + p + "d0, " + p + "s1, " + p + "q0;\n";
        o += "\tmov.b32 " + result + ", " + p + "s0;\n";
    }
    o += "\t}\n";
    return o;
}

}  // namespace

std::string inline_cuda_fragments(const std::string &ptx, std::string *error, int max_registers) {
    static const char *const kTypes[] = {"bf16", "f16"};
    std::string s = ptx;
    int serial = 0;
    for (const char *type : kTypes) {
        const std::string name = std::string("convbwd_mma16x8x16_") + type;
        // The declaration: ".extern .func (.param .b32 func_retval0) NAME\n(\n ...\n)\n;"
        size_t from = 0;
        for (size_t d; (d = s.find(".extern .func", from)) != std::string::npos;) {
            const size_t end = s.find(';', d), at = s.find(name, d);
            if (end == std::string::npos) break;
            if (at != std::string::npos && at < end)
                s.erase(d, end + 1 - d);
            else
                from = end + 1;  // another extern: left for ptxas to name
        }
        for (;;) {
            const size_t call = s.find("call.uni (retval0), " + name + ",");
            if (call == std::string::npos) break;
            const size_t open = s.rfind("{ // callseq", call);
            const size_t close_tag = s.find("} // callseq", call);
            if (open == std::string::npos || close_tag == std::string::npos) {
                *error = "PTX: a call of " + name + " outside a callseq block";
                return "";
            }
            size_t close = s.find('\n', close_tag);
            if (close == std::string::npos) close = s.size();
            const size_t line_start = s.rfind('\n', open) == std::string::npos ? 0 : s.rfind('\n', open) + 1;
            const std::string code = rewrite_call(s.substr(open, close - open), type, serial++, error);
            if (code.empty()) return "";
            s.replace(line_start, close - line_start, code.substr(0, code.size() - 1));
        }
    }
    if (s.find("convbwd_mma") != std::string::npos) {
        *error = "PTX: a matrix-fragment call was left after the rewrite";
        return "";
    }
    if (serial == 0 || max_registers <= 0) return s;  // no fragment call: the PTX as it was
    // A warp's tile holds up to 32 fragments (128 f32 accumulators; spaces.h, valid()): an entry
    // may need more registers than the cap the process sets for Halide's JIT
    // (HL_CUDA_JIT_MAX_REGISTERS, 128 in libconvbwd: tile_m=4 tile_n=8 spilled 772 bytes under it).
    // .maxnreg takes precedence over that cap (checked with ptxas --maxrregcount).
    for (size_t e = 0; (e = s.find(".entry ", e)) != std::string::npos;) {
        const size_t body = s.find("\n{", e);
        if (body == std::string::npos) break;
        s.insert(body + 1, ".maxnreg " + std::to_string(max_registers) + "\n");
        e = body + 1;
    }
    return s;
}

}  // namespace convbwd

#ifdef CONVBWD_HAVE_CUDA
extern "C" int halide_cuda_initialize_kernels(void *user_context, void **state_ptr, const char *src, int size);

extern "C" int convbwd_cuda_fragments_initialize_kernels(void *user_context, void **state_ptr, const char *src,
                                                         int size) {
    static std::mutex *mutex = new std::mutex;  // never destroyed: pipelines may run at exit
    static auto *sources = new std::map<const char *, std::string>;
    const std::string *text;
    {
        std::lock_guard<std::mutex> lock(*mutex);
        auto it = sources->find(src);
        if (it == sources->end()) {
            std::string ptx(src, size > 0 ? (size_t)size : std::strlen(src));
            while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
            // CONVBWD_FRAGMENT_MAXNREG=N: the entries' register limit (0: none; Halide's JIT cap).
            static const int max_registers = [] {
                const char *v = std::getenv("CONVBWD_FRAGMENT_MAXNREG");
                return v && *v ? std::atoi(v) : convbwd::kFragmentMaxRegisters;
            }();
            std::string error;
            std::string out = convbwd::inline_cuda_fragments(ptx, &error, max_registers);
            if (out.empty()) {
                if (auto *call = static_cast<convbwd::CallContext *>(user_context))
                    call->error += "matrix fragments (cuda): " + error;
                return -1;
            }
            it = sources->emplace(src, std::move(out)).first;
        }
        text = &it->second;
    }
    return halide_cuda_initialize_kernels(user_context, state_ptr, text->c_str(), (int)text->size() + 1);
}
#endif  // CONVBWD_HAVE_CUDA
