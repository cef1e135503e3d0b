/* convbwd: convolution backward kernels (backward-data, backward-weight) generated with Halide.
 *
 * C API. Describe a problem (convbwd_problem), describe the tensors (convbwd_tensor: pointer,
 * dtype, layout, optional strides), say where to run (convbwd_exec: target, stream, workspace),
 * and call convbwd_bwd_data / convbwd_bwd_weight. Every call returns a convbwd_status; on
 * failure convbwd_last_error() (per thread) says which field was wrong and why, and nothing
 * has been written to the output.
 *
 * Shapes (CUTLASS naming): x/dx N x C x H x W, dy N x K x P x Q, w/dw K x (C/G) x R x S.
 * Layouts: NCHW activations with KCYX filters, or NHWC activations with KYXC filters.
 * out = alpha * result + beta * out; beta == 0 never reads out.
 */
#ifndef CONVBWD_H
#define CONVBWD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum convbwd_status {
    CONVBWD_SUCCESS = 0,
    CONVBWD_BAD_PARAM = 1,         /* a problem field is invalid (size, stride, groups, ...) */
    CONVBWD_NULL_POINTER = 2,      /* a required pointer is NULL */
    CONVBWD_NOT_SUPPORTED = 3,     /* valid, but outside what this library does (dtype, layout, strides) */
    CONVBWD_BAD_WORKSPACE = 4,     /* workspace NULL or smaller than convbwd_workspace_size() */
    CONVBWD_NO_KERNEL = 5,         /* no kernel built into this library implements the problem */
    CONVBWD_EXECUTION_FAILED = 6,  /* the kernel reported an error (message from the kernel) */
    CONVBWD_DEVICE_ERROR = 7,      /* the device runtime failed or is absent */
    CONVBWD_ALLOC_FAILED = 8,      /* host memory ran out inside the library; nothing was written */
    CONVBWD_INTERNAL_ERROR = 9     /* a defect inside the library (message says where) */
} convbwd_status;

typedef enum convbwd_dtype { CONVBWD_F32 = 0, CONVBWD_F16 = 1, CONVBWD_BF16 = 2 } convbwd_dtype;
typedef enum convbwd_layout { CONVBWD_NCHW = 0, CONVBWD_NHWC = 1 } convbwd_layout;
typedef enum convbwd_direction { CONVBWD_BWD_DATA = 2, CONVBWD_BWD_WEIGHT = 4 } convbwd_direction;
typedef enum convbwd_target {
    CONVBWD_TARGET_HOST = 0,
    CONVBWD_TARGET_OPENCL = 1,
    CONVBWD_TARGET_CUDA = 2,
    CONVBWD_TARGET_AMDGPU = 3
} convbwd_target;

typedef struct convbwd_problem {
    int n, c, h, w;  /* x / dx: batch, channels (all groups), height, width */
    int k, p, q;     /* dy: channels (all groups), height, width; p = q = 0: derived */
    int r, s;        /* filter height, width */
    int groups;      /* >= 1, divides c and k */
    int pad_top, pad_bottom, pad_left, pad_right;  /* >= 0 */
    int stride_h, stride_w;                        /* >= 1 */
    int dilation_h, dilation_w;                    /* >= 1; 1 = dense */
} convbwd_problem;

typedef struct convbwd_tensor {
    void *data;            /* host pointer (host target) or device pointer (GPU targets) */
    convbwd_dtype dtype;   /* every tensor of one call has the same dtype */
    convbwd_layout layout; /* and the same layout */
    /* Strides in elements, in logical order (N, C, H, W) for activations, (K, C/G, R, S) for
     * filters; all zero = packed. The layout's innermost dim must have stride 1. */
    int64_t strides[4];
} convbwd_tensor;

/* exec.flags. A bit not listed here is refused (CONVBWD_BAD_PARAM naming exec.flags).
 * CONVBWD_FLAG_DETERMINISTIC: bit-identical results from run to run, for the same problem,
 * tensors, kernel (the dispatcher's choice depends on the problem, exec.kernel and the tuning
 * databases only) and library build, whatever the thread count or the stream. Every kernel of
 * this library satisfies it, so it never changes the choice: no kernel uses atomics, and
 * backward-weight's split reduction sums a fixed number of partials (a function of the problem
 * and the kernel only) in a fixed order. */
enum { CONVBWD_FLAG_DETERMINISTIC = 1 };

typedef struct convbwd_exec {
    convbwd_target target;
    void *stream;             /* cudaStream_t / hipStream_t / cl_command_queue; NULL = default */
    void *workspace;          /* at least convbwd_workspace_size() bytes, on the target */
    size_t workspace_bytes;
    unsigned flags;           /* CONVBWD_FLAG_* */
    const char *kernel;       /* run this kernel by name instead of dispatching; NULL = dispatch */
} convbwd_exec;

/* exec may be NULL: host target, no workspace, dispatch. */
convbwd_status convbwd_bwd_data(const convbwd_problem *problem, const convbwd_tensor *dy, const convbwd_tensor *w,
                                const convbwd_tensor *dx, float alpha, float beta, const convbwd_exec *exec);
convbwd_status convbwd_bwd_weight(const convbwd_problem *problem, const convbwd_tensor *x, const convbwd_tensor *dy,
                                  const convbwd_tensor *dw, float alpha, float beta, const convbwd_exec *exec);

/* exec->kernel may name a kernel and set its launch-time knobs: "NAME [knob=value ...]". */

/* Workspace bytes the chosen kernel needs (0 if none). */
convbwd_status convbwd_workspace_size(const convbwd_problem *problem, convbwd_direction direction,
                                      convbwd_dtype dtype, convbwd_layout layout, const convbwd_exec *exec,
                                      size_t *bytes);

/* The kernel the dispatcher picks for a problem (or the forced one, if it can implement it). */
convbwd_status convbwd_select_kernel(const convbwd_problem *problem, convbwd_direction direction,
                                     convbwd_dtype dtype, convbwd_layout layout, const convbwd_exec *exec,
                                     const char **kernel_name);

typedef struct convbwd_kernel_desc {
    const char *name;         /* <dir>_<dtype>_<layout>_<stride>_<filter>_<device>_<tag> */
    convbwd_direction direction;
    convbwd_dtype dtype;
    convbwd_layout layout;
    convbwd_target target;
    const char *stride_class; /* "s1", "s2", "any" */
    const char *filter_class; /* "k1", "k3", "k5", "any" */
    const char *schedule;     /* every knob of its family, key=value (compile-time and launch-time) */
    const char *family;       /* its schedule family (generator), e.g. "conv_bwd_data_gpu" */
    const char *role;         /* "default" (dispatched), "candidate" or "baseline" (run when named) */
    const char *launch;       /* its launch-time knobs' values, key=value */
    const char *module;       /* the kernel module it was loaded from, or NULL: built in */
    int exact_on_integers;    /* 1: every intermediate value is exact on small-integer data, as a
                                 direct sum's (f32); 0: it computes in a transformed domain
                                 (Winograd F(4x4, 3x3)), whose rounding only an f32 tolerance
                                 covers (as cuDNN's numerical notes say of its Winograd algorithms) */
} convbwd_kernel_desc;

/* The problem's key in tuning databases (one token, as convbwd-driver --json rows carry it):
 * writes it, NUL-terminated, into key (key_bytes >= 256 is always enough). */
convbwd_status convbwd_problem_key(const convbwd_problem *problem, convbwd_direction direction, convbwd_dtype dtype,
                                   convbwd_layout layout, const convbwd_exec *exec, char *key, size_t key_bytes);

/* Tuning database (as MIOpen's user find-db): a text file, one record a line,
 *   <problem_key> <kernel name> [launch-time knob=value ...]      # comment
 * consulted before the library's default database and its kernel order. Replaces the database
 * loaded before; NULL clears it. A malformed file is refused (BAD_PARAM; the message names the
 * file, line and field) and nothing changes. CONVBWD_TUNING_DB=path loads one at first use.
 * A line "module FILE" (relative to the database's folder) loads that kernel module first
 * (convbwd_load_kernel_module): the kernels a tuning run found, beside the records that use them.
 * CONVBWD_VERBOSE=dispatch says which record was used, and why a record was skipped. */
convbwd_status convbwd_load_tuning_db(const char *path);

/* The instruction set the host kernels run at: "avx512", "avx2" or "sse41" on x86-64 (each host
 * kernel is compiled for all three and picks at run time by the CPU's features), "baseline"
 * elsewhere. CONVBWD_MAX_CPU_ISA=sse41|avx2|avx512 in the environment caps it. */
const char *convbwd_host_isa(void);

/* Loads a kernel module (a shared object convbwd-tune writes: convbwd/convbwd_module.h) and adds
 * its kernels to the registry as candidates, run when named (exec.kernel) or by a tuning-database
 * record. A tuning database may name its modules itself ("module FILE" lines). Every record is
 * checked against its schedule space first; a bad module is refused (BAD_PARAM, naming the
 * kernel and field) and adds nothing. Modules stay loaded for the life of the process; loading
 * one while other threads dispatch is safe (they see the registry before or after it). */
convbwd_status convbwd_load_kernel_module(const char *path);

int convbwd_kernel_count(void);
convbwd_status convbwd_kernel_info(int index, convbwd_kernel_desc *desc);

const char *convbwd_status_string(convbwd_status status);
/* This thread's message of the last call that returned a convbwd_status: every such call sets
 * it when it fails (a message naming the field, never empty) and clears it to "" when it
 * succeeds. convbwd_kernel_count, convbwd_status_string and convbwd_last_error leave it as it is.
 * The pointer is valid until this thread's next call of the API. */
const char *convbwd_last_error(void);

#ifdef __cplusplus
}
#endif
#endif /* CONVBWD_H */
