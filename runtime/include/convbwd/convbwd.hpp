// convbwd C++ layer: the C API with exceptions and defaults. Header-only, over convbwd.h.
#pragma once

#include <stdexcept>
#include <string>

#include "convbwd.h"

namespace convbwd {

class Error : public std::runtime_error {
public:
    Error(convbwd_status s, const std::string &msg) : std::runtime_error(msg), status_(s) {}
    convbwd_status status() const { return status_; }

private:
    convbwd_status status_;
};

inline void check(convbwd_status s) {
    if (s != CONVBWD_SUCCESS)
        throw Error(s, std::string(convbwd_status_string(s)) + ": " + convbwd_last_error());
}

inline void bwd_data(const convbwd_problem &p, const convbwd_tensor &dy, const convbwd_tensor &w,
                     const convbwd_tensor &dx, float alpha = 1.0f, float beta = 0.0f,
                     const convbwd_exec *exec = nullptr) {
    check(convbwd_bwd_data(&p, &dy, &w, &dx, alpha, beta, exec));
}

inline void bwd_weight(const convbwd_problem &p, const convbwd_tensor &x, const convbwd_tensor &dy,
                       const convbwd_tensor &dw, float alpha = 1.0f, float beta = 0.0f,
                       const convbwd_exec *exec = nullptr) {
    check(convbwd_bwd_weight(&p, &x, &dy, &dw, alpha, beta, exec));
}

inline size_t workspace_size(const convbwd_problem &p, convbwd_direction d, convbwd_dtype t, convbwd_layout l,
                             const convbwd_exec *exec = nullptr) {
    size_t bytes = 0;
    check(convbwd_workspace_size(&p, d, t, l, exec, &bytes));
    return bytes;
}

inline std::string select_kernel(const convbwd_problem &p, convbwd_direction d, convbwd_dtype t, convbwd_layout l,
                                 const convbwd_exec *exec = nullptr) {
    const char *name = nullptr;
    check(convbwd_select_kernel(&p, d, t, l, exec, &name));
    return name;
}

inline std::string problem_key(const convbwd_problem &p, convbwd_direction d, convbwd_dtype t, convbwd_layout l,
                               const convbwd_exec *exec = nullptr) {
    char key[256];
    check(convbwd_problem_key(&p, d, t, l, exec, key, sizeof key));
    return key;
}

// Loads a tuning database (see convbwd_load_tuning_db); throws convbwd::Error naming the line.
inline void load_tuning_db(const std::string &path) { check(convbwd_load_tuning_db(path.c_str())); }

// Loads a kernel module (see convbwd_load_kernel_module); throws convbwd::Error naming the field.
inline void load_kernel_module(const std::string &path) { check(convbwd_load_kernel_module(path.c_str())); }

}  // namespace convbwd
