// NumPy .npy files: reading format 1.0, 2.0 (and 3.0), writing format 1.0. C order only.
// Tensors go to and from .npy in the logical order of their layout: NCHW activations as
// (N, C, H, W), filters as (K, C/G, R, S); NHWC activations as (N, H, W, C), filters as
// (K, R, S, C/G), which is exactly HostTensor's packed storage order. f32 is '<f4', f16 is
// '<f2', bf16 is '<f4' holding bf16 values (NumPy has no bfloat16).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/tensor.h"

namespace convbwd {

// Every failure: the message starts with the file's path.
struct NpyError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct NpyArray {
    std::string descr;            // NumPy dtype string, e.g. "<f4"
    bool fortran_order = false;
    std::vector<int64_t> shape;   // () for a scalar
    std::vector<uint8_t> data;    // raw bytes, C order

    int64_t elements() const;
};

// Reads a whole file. Refuses (NpyError): no NPY magic, unknown version, a malformed header,
// fortran_order True, a structured dtype, data shorter or longer than the header says.
NpyArray npy_read(const std::string &path);
// Parses an in-memory file (path is only for messages).
NpyArray npy_parse(const std::string &path, const std::vector<uint8_t> &bytes);
// Writes format 1.0. Throws NpyError when the file cannot be written or descr/shape/data disagree.
void npy_write(const std::string &path, const NpyArray &a);
// Size in bytes of one element of a simple numeric descr ("<f4" -> 4); 0 if not one.
int npy_itemsize(const std::string &descr);

// .npy descr and shape of a tensor (layout order, see above).
std::string npy_descr_of(DType t);
std::vector<int64_t> npy_shape_of(const HostTensor &t);
std::string npy_shape_string(const std::vector<int64_t> &shape);  // "(2, 3, 4)", "(5,)", "()"

// Fills t (already sized: dims, dtype, layout) from a file. Refuses with a message naming the
// file, what it holds and what was expected; `axes` names the expected axes, e.g. "N, K, P, Q".
// For bf16, *inexact (if given) counts values that were not bf16 numbers and were rounded to
// nearest even.
void npy_load_tensor(const std::string &path, HostTensor *t, const std::string &axes = "",
                     int64_t *inexact = nullptr);
void npy_save_tensor(const std::string &path, const HostTensor &t);

}  // namespace convbwd
