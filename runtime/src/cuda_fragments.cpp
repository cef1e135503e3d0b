// CUDA kernels that call matrix fragments (generators/fragments.h, kind 1: 16x8x16 over a 32-lane
// warp). Halide's PTX calls the pure extern convbwd_mma16x8x16_{bf16,f16}(a0..a7, b0..b3, c0..c3,
// i) once per result element (element i of A x B + C); nothing defines it. The host pipelines'
// halide_cuda_initialize_kernels is renamed at build time (cmake/ConvbwdKernels.cmake,
// _conv_kernel_fragments) to the function at the end of this file, which rewrites each such
// call in place into the instruction itself,
//   mma.sync.aligned.m16n8k16.row.col.f32.T.T.f32 {d0..d3}, {A pairs}, {B pairs}, {c0..c3}
// and a move of d_i into the call's result register, then hands the PTX to Halide's CUDA runtime.
// The calls of one k-block have the same operands, and ptxas keeps one HMMA of identical mma
// instructions (checked with cuobjdump: docs/KERNELS.md). The operands' pairs are the 32-bit words
// they were loaded in wherever the PTX shows it (OperandBits below): LLVM hands each 16-bit element
// over unpacked from its word, and ptxas did not see through packing them again (PRMT, LOP3, SHF:
// 90 of the 162 instructions of a 16-fragment k-block). A PTX .func defined beside the kernel
// would stay a call per element (ptxas does not inline it). Each kernel's PTX is rewritten once
// per process. The rewrite is plain text and built everywhere (test/test_cuda_fragments.cpp,
// ctest ptx); the entry point only where CUDA is a target.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cctype>
#include <cstring>
#include <map>
#include <set>
#include <mutex>
#include <optional>
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

// ---- Where an operand's 16 bits come from. PTX as LLVM's NVPTX back end writes it: a register is
// written once but for the moves of loop-carried values, one statement a line (a few lines hold
// two, "{ .reg .b16 tmp; mov.b32 {%rs1, tmp}, %r2; }"). Defs lists each register's writes in one
// function; OperandBits follows a value back through conversions, shifts, bit-field extracts,
// unpacking moves and ors with known zeros to the register its bits were loaded or selected in.

struct Def {
    std::string op;
    std::vector<std::string> args;
    int index = 0;  // the register's place in a brace list ("mov.b32 {%rs1, %rs2}, %r3")
};
using Defs = std::map<std::string, std::vector<Def>>;

// Bits [off, off + 16) of register reg, of width bits (16: %rs, 32: %r, 64: %rd).
struct Bits {
    std::string reg;
    int off = 0, width = 0;
};

int reg_width(const std::string &r) {
    if (r.rfind("%rs", 0) == 0) return 16;
    if (r.rfind("%rd", 0) == 0) return 64;
    if (r.size() > 2 && r.rfind("%r", 0) == 0 && r[2] >= '0' && r[2] <= '9') return 32;
    return 0;
}

// Top-level operands ("{%a, %b}, [%rd1+8], 16" -> 3).
std::vector<std::string> split_operands(const std::string &s) {
    std::vector<std::string> out;
    int depth = 0;
    std::string cur;
    for (char c : s) {
        if (c == '{' || c == '[' || c == '(') depth++;
        if (c == '}' || c == ']' || c == ')') depth--;
        if (c == ',' && depth == 0) {
            out.push_back(trim(cur));
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (!trim(cur).empty()) out.push_back(trim(cur));
    return out;
}

Defs function_defs(const std::string &body) {
    Defs defs;
    size_t pos = 0;
    while (pos < body.size()) {
        size_t eol = body.find('\n', pos);
        if (eol == std::string::npos) eol = body.size();
        std::string line = body.substr(pos, eol - pos);
        pos = eol + 1;
        const size_t comment = line.find("//");
        if (comment != std::string::npos) line.erase(comment);
        size_t from = 0;
        for (;;) {
            const size_t semi = line.find(';', from);
            std::string st = line.substr(from, semi == std::string::npos ? std::string::npos : semi - from);
            from = semi == std::string::npos ? line.size() : semi + 1;
            const size_t b = st.find_first_not_of(" \t{}");
            st = b == std::string::npos ? std::string() : trim(st.substr(b));
            // A predicated write counts as a write (the register is then written more than once
            // or conditionally) but is not followed (op "@").
            const bool predicated = !st.empty() && st[0] == '@';
            if (predicated) {
                const size_t sp = st.find_first_of(" \t");
                st = sp == std::string::npos ? std::string() : trim(st.substr(sp + 1));
            }
            if (!st.empty() && st.back() != ':' && st[0] != '.') {
                const size_t sp = st.find_first_of(" \t");
                Def d;
                d.op = predicated ? "@" : st.substr(0, sp);
                if (sp != std::string::npos) d.args = split_operands(st.substr(sp + 1));
                if (!d.args.empty()) {
                    const std::string &dst = d.args[0];
                    if (dst.size() > 1 && dst[0] == '{') {
                        const std::vector<std::string> list = split_operands(dst.substr(1, dst.size() - 2));
                        for (size_t k = 0; k < list.size(); k++)
                            if (!list[k].empty() && list[k][0] == '%') {
                                d.index = (int)k;
                                defs[list[k]].push_back(d);
                            }
                    } else if (!dst.empty() && dst[0] == '%') {
                        defs[dst].push_back(d);
                    }
                }
            }
            if (semi == std::string::npos) break;
        }
    }
    return defs;
}

std::optional<long long> immediate(const std::string &s) {
    if (s.empty() || s[0] == '%' || s.find_first_of("fFdD") == 1) return std::nullopt;  // 0f...: a float
    char *end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 0);
    if (end == s.c_str() || *end) return std::nullopt;
    return v;
}

// Bits [off, off + 16) of an immediate (zeros past its 64 bits).
unsigned bits16(long long v, int off) { return off >= 64 ? 0u : (unsigned)((unsigned long long)v >> off & 0xffffull); }

class OperandBits {
  public:
    explicit OperandBits(const Defs &defs) : defs_(defs) {}

    // Where bits [off, off + 16) of value v are at the call: the furthest register back that holds
    // them and is written once (v itself at depth 0), or nothing for an immediate.
    std::optional<Bits> trace(const std::string &v, int off, int depth = 0) const {
        const int w = reg_width(v);
        if (w == 0 || off < 0 || off + 16 > w) return std::nullopt;
        const Def *d = single(v);
        if (depth > 0 && !d) return std::nullopt;  // written twice (a loop-carried value)
        if (d && depth < 32)
            if (std::optional<Bits> b = step(*d, off, depth)) return b;
        return Bits{v, off, w};
    }

  private:
    const Def *single(const std::string &v) const {
        auto it = defs_.find(v);
        return it != defs_.end() && it->second.size() == 1 ? &it->second[0] : nullptr;
    }
    bool starts(const std::string &op, const char *prefix) const { return op.rfind(prefix, 0) == 0; }

    // Whether bits [off, off + 16) of v are zero.
    bool zero(const std::string &v, int off) const {
        if (std::optional<long long> imm = immediate(v)) return bits16(*imm, off) == 0;
        const Def *d = single(v);
        if (!d || d->args.size() < 2) return false;
        if (starts(d->op, "cvt.u") && d->op.find(".u", 5) != std::string::npos && d->op.find(".s") == std::string::npos) {
            const int ws = reg_width(d->args[1]);  // zero-extended from an unsigned source
            return ws > 0 && off >= ws;
        }
        if (starts(d->op, "shl.b") && d->args.size() == 3)
            if (std::optional<long long> c = immediate(d->args[2])) return off + 16 <= *c;
        if (starts(d->op, "and.b") && d->args.size() == 3)
            for (int k : {2, 1})
                if (std::optional<long long> m = immediate(d->args[k])) return bits16(*m, off) == 0;
        return false;
    }

    std::optional<Bits> step(const Def &d, int off, int depth) const {
        const std::vector<std::string> &a = d.args;
        const std::string &op = d.op;
        auto imm = [&](size_t k) { return k < a.size() ? immediate(a[k]) : std::nullopt; };
        // cvt between integer types: the low bits kept.
        if (starts(op, "cvt.") && a.size() == 2) {
            const std::string t = op.substr(4);
            const size_t dot = t.find('.');
            auto is_int = [](const std::string &x) {
                return x == "u16" || x == "s16" || x == "u32" || x == "s32" || x == "u64" || x == "s64";
            };
            if (dot == std::string::npos || !is_int(t.substr(0, dot)) || !is_int(t.substr(dot + 1))) return std::nullopt;
            const int wd = std::atoi(t.c_str() + 1), ws = std::atoi(t.c_str() + dot + 2);
            if (off + 16 > wd || off + 16 > ws) return std::nullopt;
            return trace(a[1], off, depth + 1);
        }
        // mov: the same bits; an unpacking mov "{x, y}, %r": element index of the source.
        if ((starts(op, "mov.b") || starts(op, "mov.u") || starts(op, "mov.s")) && a.size() == 2) {
            if (!a[0].empty() && a[0][0] == '{') {
                const int n = (int)split_operands(a[0].substr(1, a[0].size() - 2)).size();
                const int ws = reg_width(a[1]);
                if (n < 1 || ws == 0 || ws % n != 0 || off + 16 > ws / n) return std::nullopt;
                return trace(a[1], d.index * (ws / n) + off, depth + 1);
            }
            return trace(a[1], off, depth + 1);
        }
        if (starts(op, "shr.") && a.size() == 3) {
            const std::optional<long long> c = imm(2);
            const int ws = reg_width(a[1]);
            if (!c || ws == 0 || off + *c + 16 > ws) return std::nullopt;
            return trace(a[1], off + (int)*c, depth + 1);
        }
        if (starts(op, "shl.b") && a.size() == 3) {
            const std::optional<long long> c = imm(2);
            if (!c || off < *c) return std::nullopt;
            return trace(a[1], off - (int)*c, depth + 1);
        }
        if (starts(op, "bfe.") && a.size() == 4) {
            const std::optional<long long> p = imm(2), len = imm(3);
            if (!p || !len || off + 16 > *len) return std::nullopt;
            return trace(a[1], off + (int)*p, depth + 1);
        }
        if (starts(op, "or.b") && a.size() == 3) {
            if (zero(a[1], off)) return trace(a[2], off, depth + 1);
            if (zero(a[2], off)) return trace(a[1], off, depth + 1);
            return std::nullopt;
        }
        if (starts(op, "and.b") && a.size() == 3) {
            const std::optional<long long> m = imm(2);
            if (!m || bits16(*m, off) != 0xffffu) return std::nullopt;
            return trace(a[1], off, depth + 1);
        }
        return std::nullopt;
    }

    const Defs &defs_;
};

// The code that sets register dst to the pair (lo in the lower half, hi in the upper) from where
// their bits are, with scratch registers tmp(0..3); "" where a side is not at a byte offset of a
// register of 16, 32 or 64 bits.
template <class Tmp>
std::string pair_from_bits(const std::string &dst, const Bits &lo, const Bits &hi, Tmp tmp) {
    if (lo.reg == hi.reg && lo.width == 32 && lo.off == 0 && hi.off == 16) return "\tmov.b32 " + dst + ", " + lo.reg + ";\n";
    if (lo.width == 16 && hi.width == 16 && lo.off == 0 && hi.off == 0)
        return "\tmov.b32 " + dst + ", {" + lo.reg + ", " + hi.reg + "};\n";
    std::string code, word[2];
    int byte[2];
    const Bits *side[2] = {&lo, &hi};
    for (int k = 0; k < 2; k++) {
        const Bits &b = *side[k];
        if (b.off % 8 != 0) return "";
        if (b.width == 16) {
            code += "\tcvt.u32.u16 " + tmp(2 * k) + ", " + b.reg + ";\n";
            word[k] = tmp(2 * k), byte[k] = 0;
        } else if (b.width == 32) {
            word[k] = b.reg, byte[k] = b.off / 8;
        } else if (b.width == 64 && b.off % 32 + 16 <= 32) {
            code += "\tmov.b64 {" + tmp(2 * k) + ", " + tmp(2 * k + 1) + "}, " + b.reg + ";\n";
            word[k] = tmp(2 * k + (b.off >= 32)), byte[k] = b.off % 32 / 8;
        } else {
            return "";
        }
    }
    const int sel = byte[0] | (byte[0] + 1) << 4 | (4 + byte[1]) << 8 | (5 + byte[1]) << 12;
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%04x", sel);
    return code + "\tprmt.b32 " + dst + ", " + word[0] + ", " + word[1] + ", " + hex + ";\n";
}

// One call block, "{ // callseq N ... } // callseq N", of a fragment call: the mma and the move.
// Fills error and returns "" where the block is not in the form LLVM's NVPTX back end writes.
std::string rewrite_call(const std::string &block, const std::string &type, int serial, const OperandBits &bits,
                         std::string *error) {
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
    o += "\t.reg .b32 " + p + "x<" + n_ab + ">;\n\t.reg .b32 " + p + "p<" + std::to_string(kAB / 2) + ">;\n\t.reg .b32 " +
         p + "y<" + std::to_string(2 * kAB) + ">;\n\t.reg .f32 " + p + "d<" + n_c + ">;\n\t.reg .f32 " + p + "c<" + n_c +
         ">;\n";
    for (int k = kAB; k < kOperands; k++) o += "\tmov.f32 " + p + "c" + std::to_string(k - kAB) + ", " + val[k] + ";\n";
    // Pairs: the lower index in the lower half (PTX ISA, mma.m16n8k16 fragments). Two 16-bit
    // registers pack with one vector mov, which ptxas folds where they were unpacked from one
    // 32-bit load (a channel group's pair: no instruction at all); anything else goes through the
    // 32-bit low halves (a 32-bit parameter's high half is not relied on).
    auto is16 = [&](int k) { return width[k].size() > 1 && width[k].substr(1) == "16"; };
    for (int q = 0; q < kAB / 2; q++) {
        const int lo = 2 * q, hi = 2 * q + 1;
        const std::string pq = p + "p" + std::to_string(q);
        // The words the pair's elements were loaded or selected in, where the PTX shows them.
        const std::optional<Bits> blo = bits.trace(val[lo], 0), bhi = bits.trace(val[hi], 0);
        if (blo && bhi) {
            const std::string code = pair_from_bits(pq, *blo, *bhi, [&](int k) { return p + "y" + std::to_string(4 * q + k); });
            if (!code.empty()) {
                o += code;
                continue;
            }
        }
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


// ---- Staged copies of global memory (FragmentCopies). Halide's PTX back end caps a vector at 64
// bits (CodeGen_PTX_Dev::native_vector_bits), so a 16-byte group of eight 16-bit elements that
// Halide knows to be aligned (the generator's channels_in_place, aligned(8, 0) in the IR) arrives
// as two 8-byte loads, [R+o] and [R+o+8]. Where the kernel's trait vouches that every such group
// starts 16-byte aligned (aligned_load_bytes >= 16: input_channel_vector() x the element's bytes),
// the halves become one 16-byte load; a copy of such a group into shared memory then becomes
// cp.async (global to shared without registers, L1 bypassed: .cg), waited for at the entry's barriers.

// A line's statement without indentation, comment and ';'.
std::string statement(const std::string &line) {
    std::string l = line;
    const size_t c = l.find("//");
    if (c != std::string::npos) l.erase(c);
    return trim(l);
}

// "[%rd4+16]" -> (%rd4, 16); false where it is not [register] or [register+-offset].
bool parse_address(const std::string &a, std::string *reg, long long *off) {
    if (a.size() < 3 || a.front() != '[' || a.back() != ']') return false;
    const std::string in = a.substr(1, a.size() - 2);
    const size_t sign = in.find_first_of("+-", 1);
    *reg = trim(in.substr(0, sign));
    *off = 0;
    if (reg->empty() || (*reg)[0] != '%') return false;
    if (sign == std::string::npos) return true;
    const std::optional<long long> v = immediate(trim(in.substr(sign + 1)));
    if (!v) return false;
    *off = in[sign] == '-' ? -*v : *v;
    return true;
}

struct Instr {
    std::string op;                 // "ld.global.nc.v2.b32"
    std::vector<std::string> args;  // top-level operands
};
std::optional<Instr> instr(const std::string &line) {
    const std::string st = statement(line);
    if (st.empty() || st[0] == '@' || st[0] == '.' || st[0] == '{' || st.back() == ':') return std::nullopt;
    const size_t sp = st.find_first_of(" \t");
    if (sp == std::string::npos) return Instr{st, {}};
    return Instr{st.substr(0, sp), split_operands(st.substr(sp + 1))};
}
std::vector<std::string> brace_list(const std::string &s) {
    if (s.size() < 2 || s.front() != '{' || s.back() != '}') return {};
    return split_operands(s.substr(1, s.size() - 2));
}

// How often each register occurs in lines (whole tokens).
std::map<std::string, int> register_counts(const std::vector<std::string> &lines) {
    std::map<std::string, int> n;
    for (const std::string &l : lines) {
        const std::string st = statement(l);
        for (size_t i = 0; (i = st.find('%', i)) != std::string::npos;) {
            size_t j = i + 1;
            while (j < st.size() && (std::isalnum((unsigned char)st[j]) || st[j] == '_')) j++;
            n[st.substr(i, j - i)]++;
            i = j;
        }
    }
    return n;
}

bool is_boundary(const std::string &line) {  // a label, a branch or a barrier: the end of a straight run
    const std::string st = statement(line);
    return st.empty() ? false
                      : st.back() == ':' || st.find("bra") != std::string::npos || st.find("bar.") != std::string::npos ||
                            st.find("ret") == 0 || st.find("exit") == 0;
}

bool is_barrier(const std::string &line) {
    const std::string st = statement(line);
    return st.find("bar.sync") != std::string::npos || st.find("barrier.sync") != std::string::npos;
}

// The label a branch line jumps to ("" if it is no branch).
std::string branch_target(const std::string &line) {
    const std::string st = statement(line);
    const size_t b = st.find("bra");
    if (b == std::string::npos || (b > 0 && !std::isspace((unsigned char)st[b - 1]))) return "";
    const size_t sp = st.find_first_of(" \t", b);
    return sp == std::string::npos ? "" : trim(st.substr(sp + 1));
}

// Waits for an entry whose cp.async copies run one iteration of their loop ahead (copies_ahead).
// The loop: the smallest span from a label to a backward branch to it that holds every cp.async; its
// header, where an iteration starts, is the label a branch from outside the span enters it at (LLVM
// puts the latch before the header), else the span's first line. In the order an iteration runs (from
// the header to the span's end, then the span's start up to the header), each barrier after copies
// commits them as a group, and every barrier of the loop waits for all groups but the n committed so
// far in the iteration (cp.async.wait_group n): the chunk the iteration runs was copied by the one
// before. Barriers outside the loop, ret and each place the loop is left wait for every copy. False
// (lines untouched) where no such loop holds the copies or a branch's label is not in the entry.
bool wait_ahead(std::vector<std::string> &lines) {
    std::map<std::string, size_t> label_at;
    for (size_t k = 0; k < lines.size(); k++)
        if (const std::string st = statement(lines[k]); !st.empty() && st.back() == ':') label_at[st.substr(0, st.size() - 1)] = k;
    auto is_copy = [&](size_t k) { return lines[k].find("cp.async.cg.shared.global") != std::string::npos; };
    std::vector<size_t> copies;
    for (size_t k = 0; k < lines.size(); k++)
        if (is_copy(k)) copies.push_back(k);
    if (copies.empty()) return false;
    std::map<size_t, size_t> last_back;  // label line -> the last backward branch to it
    for (size_t k = 0; k < lines.size(); k++)
        if (auto it = label_at.find(branch_target(lines[k])); it != label_at.end() && it->second < k) last_back[it->second] = k;
    size_t head = 0, latch = 0;  // the span [head, latch]: the smallest holding every copy
    for (auto [h, l] : last_back)
        if (h < copies.front() && copies.back() < l && (latch == 0 || l - h < latch - head)) head = h, latch = l;
    if (latch == 0) return false;
    std::set<size_t> entries, exits;
    for (size_t k = 0; k < lines.size(); k++) {
        const std::string t = branch_target(lines[k]);
        if (t.empty()) continue;
        auto it = label_at.find(t);
        if (it == label_at.end()) return false;
        const bool from_inside = k > head && k <= latch, to_inside = it->second > head && it->second <= latch;
        if (!from_inside && to_inside) entries.insert(it->second);
        if (from_inside && !to_inside && it->second != head) exits.insert(it->second);
    }
    if (entries.size() > 1) return false;
    const size_t start = entries.empty() ? head : *entries.begin();
    int groups = 0;
    bool issued = false;
    for (size_t i = 0, n = latch + 1 - head; i < n; i++) {
        const size_t k = start + i <= latch ? start + i : head + (start + i - latch - 1);
        if (is_copy(k)) issued = true;
        if (!is_barrier(lines[k])) continue;
        std::string wait;
        if (issued) wait += "\tcp.async.commit_group;\n", groups++, issued = false;
        lines[k] = wait + "\tcp.async.wait_group " + std::to_string(groups) + ";\n" + lines[k];
    }
    for (size_t k = 0; k < lines.size(); k++)
        if ((k < head || k > latch) && (is_barrier(lines[k]) || statement(lines[k]) == "ret"))
            lines[k] = "\tcp.async.wait_all;\n" + lines[k];
    for (size_t k : exits) lines[k] += "\n\tcp.async.wait_all;";
    if (statement(lines[latch])[0] == '@') lines[latch] += "\n\tcp.async.wait_all;";  // falling through
    return true;
}

// One entry's lines, rewritten; false (lines untouched) where a half has no partner.
bool join_entry(std::vector<std::string> &lines, bool async, bool ahead, int *serial) {
    const char *kHalf = "ld.global.nc.v2.b32";
    std::vector<size_t> halves;
    for (size_t i = 0; i < lines.size(); i++)
        if (std::optional<Instr> in = instr(lines[i]); in && in->op == kHalf) halves.push_back(i);
    if (halves.empty()) return false;
    std::vector<std::pair<size_t, size_t>> pairs;
    for (size_t h = 0; h < halves.size(); h++) {
        const size_t i = halves[h];
        if (h + 1 >= halves.size() || halves[h + 1] != i + 1) return false;  // the next line, or none
        const Instr a = *instr(lines[i]), b = *instr(lines[i + 1]);
        std::string ra, rb;
        long long oa, ob;
        if (a.args.size() != 2 || b.args.size() != 2 || !parse_address(a.args[1], &ra, &oa) ||
            !parse_address(b.args[1], &rb, &ob) || ra != rb || ob != oa + 8 || oa % 16 != 0)
            return false;
        pairs.push_back({i, i + 1});
        h++;
    }
    std::vector<bool> drop(lines.size(), false);
    std::vector<std::string> loaded_regs;  // per pair: the four registers, in order
    std::vector<std::vector<std::string>> groups;
    for (auto [i, j] : pairs) {
        const Instr a = *instr(lines[i]), b = *instr(lines[j]);
        std::vector<std::string> regs = brace_list(a.args[0]), hi = brace_list(b.args[0]);
        if (regs.size() != 2 || hi.size() != 2) return false;
        regs.insert(regs.end(), hi.begin(), hi.end());
        lines[i] = "\tld.global.nc.v4.b32 \t{" + regs[0] + ", " + regs[1] + ", " + regs[2] + ", " + regs[3] + "}, " +
                   a.args[1] + ";";
        lines[j].clear();  // dropped below; not counted as a use meanwhile
        drop[j] = true;
        groups.push_back(regs);
    }
    if (async) {
        const std::map<std::string, int> uses = register_counts(lines);
        auto once = [&](const std::string &r) { auto it = uses.find(r); return it != uses.end() && it->second == 2; };
        std::map<std::string, size_t> def_line;  // selp results and the zero registers
        for (size_t k = 0; k < lines.size(); k++)
            if (std::optional<Instr> in = instr(lines[k]); in && !in->args.empty()) def_line[in->args[0]] = k;
        bool any = false;
        for (size_t g = 0; g < groups.size(); g++) {
            const size_t ld = pairs[g].first;
            const std::vector<std::string> &regs = groups[g];
            bool ok = true;
            for (const std::string &r : regs) ok = ok && once(r);
            if (!ok) continue;
            // The store: the first st.shared.v4.b32 of the straight run after the load.
            size_t st = 0;
            for (size_t k = ld + 1; k < lines.size() && !is_boundary(lines[k]); k++)
                if (std::optional<Instr> in = instr(lines[k]); in && in->op == "st.shared.v4.b32") {
                    st = k;
                    break;
                }
            if (st == 0) continue;
            const Instr store = *instr(lines[st]);
            const std::vector<std::string> vals = brace_list(store.args.size() == 2 ? store.args[1] : "");
            if (vals.size() != 4) continue;
            std::string pred;
            std::vector<size_t> selps;
            for (int e = 0; e < 4 && ok; e++) {
                if (vals[e] == regs[e]) continue;  // stored as loaded
                auto it = def_line.find(vals[e]);  // selp.b32 v, loaded, zero, p
                if (it == def_line.end() || it->second <= ld || it->second >= st || !once(vals[e])) { ok = false; break; }
                const Instr s = *instr(lines[it->second]);
                if (s.op != "selp.b32" || s.args.size() != 4 || s.args[1] != regs[e]) { ok = false; break; }
                bool zero = immediate(s.args[2]) == 0LL;
                if (!zero)
                    if (auto z = def_line.find(s.args[2]); z != def_line.end()) {
                        const Instr m = *instr(lines[z->second]);
                        zero = m.op == "mov.b32" && m.args.size() == 2 && immediate(m.args[1]) == 0LL;
                    }
                if (!zero || (!pred.empty() && pred != s.args[3])) { ok = false; break; }
                pred = s.args[3];
                selps.push_back(it->second);
            }
            if (!ok || (!selps.empty() && selps.size() != 4)) continue;
            const std::string src = instr(lines[ld])->args[1], dst = store.args[0];
            if (pred.empty()) {
                lines[st] = "\tcp.async.cg.shared.global \t" + dst + ", " + src + ", 16;";
            } else {  // zero-filled where the predicate is false (a source size of 0 reads nothing)
                const std::string n = "%cpa" + std::to_string((*serial)++);
                lines[st] = "\t{ .reg .b32 " + n + "; selp.b32 " + n + ", 16, 0, " + pred +
                            "; cp.async.cg.shared.global \t" + dst + ", " + src + ", 16, " + n + "; }";
            }
            drop[ld] = true;
            for (size_t k : selps) drop[k] = true;
            any = true;
        }
        if (any && !(ahead && wait_ahead(lines)))  // every barrier (and the exit) waits for the copies before it
            for (size_t k = 0; k < lines.size(); k++)
                if (is_barrier(lines[k]) || statement(lines[k]) == "ret") lines[k] = "\tcp.async.wait_all;\n" + lines[k];
    }
    std::vector<std::string> out;
    for (size_t k = 0; k < lines.size(); k++)
        if (!drop[k]) out.push_back(lines[k]);
    lines = std::move(out);
    return true;
}

}  // namespace

std::optional<FragmentCopies> fragment_copies(const char *name) {
    if (!name || !*name) return kFragmentCopies;
    const std::string n = name;
    if (n == "split") return FragmentCopies::Split;
    if (n == "joined") return FragmentCopies::Joined;
    if (n == "async") return FragmentCopies::Async;
    if (n == "auto") return FragmentCopies::Auto;
    return std::nullopt;
}

std::string rewrite_fragment_copies(const std::string &ptx, int aligned_load_bytes, FragmentCopies copies,
                                    bool copies_ahead) {
    if (copies == FragmentCopies::Split || aligned_load_bytes < 16) return ptx;
    const bool async = copies == FragmentCopies::Async || (copies == FragmentCopies::Auto && copies_ahead);
    std::string s;
    int serial = 0;
    size_t pos = 0;
    for (size_t e; (e = ptx.find(".entry ", pos)) != std::string::npos;) {
        const size_t body = ptx.find("\n{\n", e), end = body == std::string::npos ? body : ptx.find("\n}\n", body);
        if (end == std::string::npos) break;
        s += ptx.substr(pos, body + 3 - pos);
        std::vector<std::string> lines;
        for (size_t a = body + 3; a < end + 1;) {
            const size_t eol = ptx.find('\n', a);
            lines.push_back(ptx.substr(a, eol - a));
            a = eol + 1;
        }
        join_entry(lines, async, copies_ahead, &serial);
        for (const std::string &l : lines) s += l + "\n";
        pos = end + 1;
    }
    return s + ptx.substr(pos);
}

std::string inline_cuda_fragments(const std::string &ptx, std::string *error, int max_registers) {
    static const char *const kTypes[] = {"bf16", "f16"};
    std::string s = ptx;
    int serial = 0;
    std::map<std::string, Defs> defs;  // per function
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
            // The function holding the call: its register writes, once per function (by name).
            auto last = [&](const char *what) { const size_t at = s.rfind(what, call); return at == std::string::npos ? 0 : at; };
            const size_t entry = std::max(last(".entry "), last(".func "));
            const std::string fname = s.substr(entry, s.find('\n', entry) - entry);  // its header line
            auto it = defs.find(fname);
            if (it == defs.end()) {
                const size_t body = s.find("\n{", entry), end = s.find("\n}\n", call);
                it = defs.emplace(fname, function_defs(s.substr(body, end - body))).first;
            }
            const std::string code = rewrite_call(s.substr(open, close - open), type, serial++, OperandBits(it->second), error);
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
            // CONVBWD_FRAGMENT_COPIES=split|joined|async: how 16-byte copies to shared memory load.
            static const char *const copies_env = std::getenv("CONVBWD_FRAGMENT_COPIES");
            auto *call = static_cast<convbwd::CallContext *>(user_context);
            std::string error;
            std::optional<convbwd::FragmentCopies> copies = convbwd::fragment_copies(copies_env);
            std::string out;
            if (!copies)
                error = std::string("CONVBWD_FRAGMENT_COPIES = '") + copies_env + "': not " + convbwd::kFragmentCopiesNames;
            else if (!(out = convbwd::inline_cuda_fragments(ptx, &error, max_registers)).empty())
                out = convbwd::rewrite_fragment_copies(out, call ? call->aligned_load_bytes : 0, *copies,
                                                       call && call->copies_ahead);
            if (out.empty()) {
                if (call) call->error += "matrix fragments (cuda): " + error;
                return -1;
            }
            it = sources->emplace(src, std::move(out)).first;
        }
        text = &it->second;
    }
    return halide_cuda_initialize_kernels(user_context, state_ptr, text->c_str(), (int)text->size() + 1);
}
#endif  // CONVBWD_HAVE_CUDA
