"""What the ctypes binding costs per call, against a stable-ABI (Py_LIMITED_API) C extension doing
the same call, and against one served convolution backward: the measurement behind the choice of
ctypes for convbwd's Python package (docs/PYTORCH.md, "Binding").

    CONVBWD_LIBRARY=build/libconvbwd.so PYTHONPATH=python python3 python/tools/binding_overhead.py

Compiles the extension with cc against this interpreter's headers (limited API 3.8, so one binary
would serve every CPython >= 3.8) and libconvbwd.so, in a temporary folder.
"""
import os
import subprocess
import sys
import sysconfig
import tempfile
import timeit

import convbwd

EXT = r"""
#define Py_LIMITED_API 0x03080000
#include <Python.h>
#include <convbwd/convbwd.h>
/* select(n, c, h, w, k, r, s, pad, stride) -> kernel name: the same C call as the ctypes path. */
static PyObject *sel(PyObject *self, PyObject *args) {
    convbwd_problem p = {0};
    int pad, stride;
    if (!PyArg_ParseTuple(args, "iiiiiiiii", &p.n, &p.c, &p.h, &p.w, &p.k, &p.r, &p.s, &pad, &stride)) return NULL;
    p.groups = 1; p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = pad;
    p.stride_h = p.stride_w = stride; p.dilation_h = p.dilation_w = 1;
    const char *name = NULL;
    convbwd_status s = convbwd_select_kernel(&p, CONVBWD_BWD_DATA, CONVBWD_F32, CONVBWD_NCHW, NULL, &name);
    if (s != CONVBWD_SUCCESS) { PyErr_SetString(PyExc_RuntimeError, convbwd_last_error()); return NULL; }
    return PyUnicode_FromString(name);
}
static PyMethodDef methods[] = {{"select", sel, METH_VARARGS, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "cbext", NULL, -1, methods};
PyMODINIT_FUNC PyInit_cbext(void) { return PyModule_Create(&mod); }
"""


def best(fn, number):
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6  # us per call


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    include = os.path.join(here, "..", "..", "runtime", "include")
    lib = convbwd.library_path()
    args = (8, 64, 56, 56, 64, 3, 3, 1, 1)
    rows = []

    def ctypes_select():
        p = convbwd.Problem(n=8, c=64, h=56, w=56, k=64, r=3, s=3, groups=1, pad_top=1, pad_bottom=1, pad_left=1,
                            pad_right=1, stride_h=1, stride_w=1, dilation_h=1, dilation_w=1)
        return convbwd.try_select_kernel(p, convbwd.BWD_DATA, convbwd.F32, convbwd.NCHW)

    rows.append(("ctypes: build the problem + convbwd_select_kernel", best(ctypes_select, 20000)))
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "cbext.c")
        with open(src, "w") as f:
            f.write(EXT)
        so = os.path.join(tmp, "cbext" + sysconfig.get_config_var("EXT_SUFFIX"))
        cmd = ["cc", "-O2", "-shared", "-fPIC", f"-I{sysconfig.get_paths()['include']}", f"-I{include}", src, "-o", so,
               lib, f"-Wl,-rpath,{os.path.dirname(lib)}"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print("could not build the extension:", r.stderr)
        else:
            sys.path.insert(0, tmp)
            import cbext
            assert cbext.select(*args) == ctypes_select()[1]
            rows.append(("stable-ABI extension: the same call", best(lambda: cbext.select(*args), 20000)))
    try:
        import torch
        import convbwd.torch as cbt
        op = torch.ops.aten.convolution_backward.default
        for shape in ((1, 8, 8, 8, 8, 1), (8, 64, 56, 56, 64, 3)):
            n, c, h, w, k, r = shape
            x, wt = torch.randn(n, c, h, w), torch.randn(k, c, r, r)
            dy = torch.randn(n, k, h, w)
            call = lambda: op(dy, x, wt, [k], [1, 1], [r // 2] * 2, [1, 1], False, [0, 0], 1, [True, True, False])  # noqa
            number = 200 if n == 1 else 3
            stock = best(call, number)
            with cbt.override():
                served = best(call, number)
            label = f"n{n} c{c} {h}x{w} k{k} {r}x{r}"
            rows.append((f"aten::convolution_backward {label}: PyTorch's kernel", stock))
            rows.append((f"aten::convolution_backward {label}: convbwd.torch (the whole call)", served))
    except ImportError as e:
        print(f"(no PyTorch: {e})")
    print(f"libconvbwd.so: {lib}; Python {sys.version.split()[0]}")
    print("| what | us per call (best of 5) |")
    print("|---|---|")
    for what, us in rows:
        print(f"| {what} | {us:.2f} |")


if __name__ == "__main__":
    main()
