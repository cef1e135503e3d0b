#include "common/npy.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>

namespace convbwd {

namespace {

const char kMagic[] = "\x93NUMPY";  // 6 bytes

[[noreturn]] void fail(const std::string &path, const std::string &why) { throw NpyError(path + ": " + why); }

// A Python literal dict of the .npy header: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
struct HeaderParser {
    const std::string &s;
    const std::string &path;
    size_t i = 0;

    void ws() {
        while (i < s.size() && std::isspace((unsigned char)s[i])) i++;
    }
    [[noreturn]] void bad(const std::string &what) {
        fail(path, "malformed .npy header (" + what + " at offset " + std::to_string(i) + "): " + s);
    }
    void expect(char c) {
        ws();
        if (i >= s.size() || s[i] != c) bad(std::string("expected '") + c + "'");
        i++;
    }
    bool peek(char c) {
        ws();
        return i < s.size() && s[i] == c;
    }
    std::string string() {
        ws();
        if (i >= s.size() || (s[i] != '\'' && s[i] != '"')) bad("expected a string");
        char q = s[i++];
        size_t end = s.find(q, i);
        if (end == std::string::npos) bad("unterminated string");
        std::string v = s.substr(i, end - i);
        i = end + 1;
        return v;
    }
    bool boolean() {
        ws();
        if (s.compare(i, 4, "True") == 0) return i += 4, true;
        if (s.compare(i, 5, "False") == 0) return i += 5, false;
        bad("expected True or False");
    }
    std::vector<int64_t> tuple() {
        expect('(');
        std::vector<int64_t> v;
        while (!peek(')')) {
            ws();
            size_t start = i;
            while (i < s.size() && std::isdigit((unsigned char)s[i])) i++;
            if (i == start || i - start > 15) bad("expected a dimension");
            v.push_back(std::stoll(s.substr(start, i - start)));
            if (i < s.size() && s[i] == 'L') i++;  // Python 2 long
            if (!peek(',')) break;
            i++;
        }
        expect(')');
        return v;
    }
};

NpyArray parse_header(const std::string &path, const std::string &header) {
    NpyArray a;
    HeaderParser p{header, path};
    std::map<std::string, bool> seen;
    p.expect('{');
    while (!p.peek('}')) {
        std::string key = p.string();
        p.expect(':');
        if (key == "descr") {
            if (p.peek('[')) fail(path, "structured dtype " + header + " is not supported (want a plain float array)");
            a.descr = p.string();
        } else if (key == "fortran_order") {
            a.fortran_order = p.boolean();
        } else if (key == "shape") {
            a.shape = p.tuple();
        } else {
            p.bad("unknown key '" + key + "'");
        }
        seen[key] = true;
        if (!p.peek(',')) break;
        p.i++;
    }
    p.expect('}');
    for (const char *k : {"descr", "fortran_order", "shape"})
        if (!seen.count(k)) p.bad(std::string("missing key '") + k + "'");
    if (a.fortran_order)
        fail(path, "fortran_order is True: only C-order arrays are supported (save np.ascontiguousarray(a))");
    if (npy_itemsize(a.descr) == 0) fail(path, "dtype '" + a.descr + "' is not a plain numeric dtype");
    return a;
}

std::string describe_descr(const std::string &d) {
    int size = npy_itemsize(d);
    if (size == 0) return "unknown";
    const char kind = d[1];
    const char *name = kind == 'f' ? "float" : kind == 'i' ? "int" : kind == 'u' ? "uint" : kind == 'c' ? "complex"
                     : kind == 'b' ? "bool" : "?";
    std::string s = name + (kind == 'b' ? std::string() : std::to_string(size * 8));
    if (d[0] == '>') s += " big-endian";
    return s;
}

}  // namespace

int64_t NpyArray::elements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

int npy_itemsize(const std::string &d) {
    if (d.size() < 3 || std::strchr("<>|=", d[0]) == nullptr || std::strchr("fiubc", d[1]) == nullptr) return 0;
    for (size_t i = 2; i < d.size(); i++)
        if (!std::isdigit((unsigned char)d[i])) return 0;
    if (d.size() > 4) return 0;
    return std::atoi(d.c_str() + 2);
}

NpyArray npy_parse(const std::string &path, const std::vector<uint8_t> &b) {
    if (b.size() < 10 || std::memcmp(b.data(), kMagic, 6) != 0)
        fail(path, "not a .npy file (no \\x93NUMPY magic)");
    const int major = b[6], minor = b[7];
    size_t header_len, header_start;
    if (major == 1) {
        header_len = b[8] | (size_t)b[9] << 8;
        header_start = 10;
    } else if (major == 2 || major == 3) {
        if (b.size() < 12) fail(path, "truncated .npy header");
        header_len = b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        header_start = 12;
    } else {
        fail(path, ".npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                       " is not supported (1.0, 2.0, 3.0)");
    }
    if (b.size() < header_start + header_len) fail(path, "truncated .npy header");
    std::string header(b.begin() + header_start, b.begin() + header_start + header_len);
    NpyArray a = parse_header(path, header);
    for (int64_t d : a.shape)
        if (d < 0) fail(path, "negative dimension in shape " + npy_shape_string(a.shape));
    // The shape's byte count in checked 64-bit arithmetic: dimensions of up to 15 digits each
    // overflow int64 in a product of two (found by fuzz_npy under UBSan).
    uint64_t want = (uint64_t)npy_itemsize(a.descr);
    for (int64_t d : a.shape)
        if (__builtin_mul_overflow(want, (uint64_t)d, &want) || want > (uint64_t)INT64_MAX)
            fail(path, "shape " + npy_shape_string(a.shape) + " of '" + a.descr + "' holds more bytes than fit in 63 bits");
    const size_t data_start = header_start + header_len;
    const uint64_t have = b.size() - data_start;
    if (have != want)
        fail(path, "holds " + std::to_string(have) + " bytes of data, but shape " + npy_shape_string(a.shape) + " of '" +
                       a.descr + "' needs " + std::to_string(want) + (have < want ? " (truncated file)" : ""));
    a.data.assign(b.begin() + data_start, b.end());
    return a;
}

NpyArray npy_read(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path, std::string("cannot open for reading: ") + std::strerror(errno));
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) fail(path, "read error");
    return npy_parse(path, bytes);
}

void npy_write(const std::string &path, const NpyArray &a) {
    if (npy_itemsize(a.descr) == 0) fail(path, "cannot write dtype '" + a.descr + "'");
    if ((uint64_t)a.elements() * npy_itemsize(a.descr) != a.data.size())
        fail(path, "data size " + std::to_string(a.data.size()) + " does not match shape " + npy_shape_string(a.shape));
    std::string header = "{'descr': '" + a.descr + "', 'fortran_order': " + (a.fortran_order ? "True" : "False") +
                         ", 'shape': " + npy_shape_string(a.shape) + ", }";
    // Pad with spaces and a final newline so that the data starts at a multiple of 64.
    size_t total = 10 + header.size() + 1;
    header.append((64 - total % 64) % 64, ' ');
    header += '\n';
    if (header.size() > 65535) fail(path, "header too long for format 1.0");
    std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) fail(path, "cannot open for writing");
        const char version[4] = {1, 0, (char)(header.size() & 0xff), (char)(header.size() >> 8)};
        out.write(kMagic, 6);
        out.write(version, 4);
        out.write(header.data(), (std::streamsize)header.size());
        out.write((const char *)a.data.data(), (std::streamsize)a.data.size());
        if (!out.flush()) {
            std::remove(tmp.c_str());
            fail(path, "write error");
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        fail(path, "cannot rename " + tmp + " into place");
    }
}

std::string npy_descr_of(DType t) { return t == DType::F16 ? "<f2" : "<f4"; }

std::vector<int64_t> npy_shape_of(const HostTensor &t) {
    const auto &d = t.dims;
    if (t.layout == Layout::NCHW) return {d[0], d[1], d[2], d[3]};
    return {d[0], d[2], d[3], d[1]};
}

std::string npy_shape_string(const std::vector<int64_t> &shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); i++) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + (shape.size() == 1 ? ",)" : ")");
}

void npy_load_tensor(const std::string &path, HostTensor *t, const std::string &axes, int64_t *inexact) {
    NpyArray a = npy_read(path);
    const std::string want_descr = npy_descr_of(t->dtype);
    const std::vector<int64_t> want_shape = npy_shape_of(*t);
    std::string why;
    if (a.descr != want_descr)
        why = "dtype '" + a.descr + "' (" + describe_descr(a.descr) + "), expected '" + want_descr + "' (" +
              describe_descr(want_descr) + (t->dtype == DType::BF16 ? " holding bf16 values" : "") + ")";
    if (a.shape != want_shape)
        why += (why.empty() ? "" : "; ") + std::string("shape ") + npy_shape_string(a.shape) + ", expected " +
               npy_shape_string(want_shape) + (axes.empty() ? "" : " (" + axes + ")");
    if (!why.empty()) fail(path, why + " for " + to_string(t->dtype) + " " + to_string(t->layout));
    if (inexact) *inexact = 0;
    if (t->dtype != DType::BF16) {
        std::memcpy(t->storage.data(), a.data.data(), a.data.size());
        return;
    }
    for (int64_t i = 0; i < a.elements(); i++) {
        float f;
        std::memcpy(&f, a.data.data() + 4 * i, 4);
        uint16_t h = f32_to_bf16(f);
        float back = bf16_to_f32(h);
        if (inexact && back != f && !(f != f)) ++*inexact;
        std::memcpy(t->storage.data() + 2 * i, &h, 2);
    }
}

void npy_save_tensor(const std::string &path, const HostTensor &t) {
    NpyArray a;
    a.descr = npy_descr_of(t.dtype);
    a.shape = npy_shape_of(t);
    if (t.dtype != DType::BF16) {
        a.data.assign(t.storage.begin(), t.storage.end());
    } else {
        a.data.resize((size_t)t.size() * 4);
        for (int64_t i = 0; i < t.size(); i++) {
            uint16_t h;
            std::memcpy(&h, t.storage.data() + 2 * i, 2);
            float f = bf16_to_f32(h);
            std::memcpy(a.data.data() + 4 * i, &f, 4);
        }
    }
    npy_write(path, a);
}

}  // namespace convbwd
