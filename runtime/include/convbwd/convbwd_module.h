/* convbwd kernel modules: shared objects of extra kernels, loaded at run time.
 *
 * A module is what convbwd-tune builds for the candidates it searches and for the winners of a
 * tuning run (the kernel cache beside the tuning database, as MIOpen keeps one beside its
 * find-db): Halide pipelines compiled by the project's generators for a point of a schedule
 * space, with no Halide runtime of their own (they use the runtime inside libconvbwd.a, which a
 * program linked with convbwd::convbwd exports), and one C entry point describing them.
 *
 * Load one with convbwd_load_kernel_module(path), or name it in a tuning database
 * ("module FILE", relative to the database's folder). Its kernels join the registry as
 * candidates: they run when named (exec.kernel) or by a tuning-database record, never by the
 * kernel order. Each record is checked as a manifest record is (family, class, every knob in its
 * domain, valid()), and its name must be the one derived from its knobs.
 */
#ifndef CONVBWD_MODULE_H
#define CONVBWD_MODULE_H

#ifdef __cplusplus
extern "C" {
#endif

#define CONVBWD_MODULE_ABI 1

typedef struct convbwd_module_kernel {
    const char *name;   /* the derived kernel name, e.g. "bwdw_f32_nhwc_s1_k3_host_c2k8v16" */
    const char *record; /* a manifest record (schedules/manifest.h):
                           "<family> <dtype> <layout> <stride> <filter> <device> <role> <order> knob=value ..." */
    void *function;     /* the Halide pipeline: the argument list of its direction (generator_base.h) */
} convbwd_module_kernel;

typedef struct convbwd_module {
    int abi;                /* CONVBWD_MODULE_ABI */
    int halide_major;       /* the Halide major version its pipelines were compiled with */
    const char *target;     /* the Halide target string (for messages) */
    int count;
    const convbwd_module_kernel *kernels;
} convbwd_module;

/* Every module exports this symbol. */
typedef const convbwd_module *(*convbwd_module_entry)(void);
#define CONVBWD_MODULE_ENTRY "convbwd_module_v1"

#ifdef __cplusplus
}
#endif
#endif
