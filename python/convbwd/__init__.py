"""convbwd: convolution backward kernels (backward-data, backward-weight) from libconvbwd.so.

The C API of convbwd.h through ctypes; nothing here depends on PyTorch. ``convbwd.torch`` serves
PyTorch's ``aten::convolution_backward`` with it (``convbwd.torch.enable()``).

The library is found at ``$CONVBWD_LIBRARY``, else beside this file (``cmake --install`` puts a
link there), else by the dynamic loader (``LD_LIBRARY_PATH``). ``library_path()`` names the one
loaded. Every failing call raises ``ConvbwdError`` with the library's status and message.
"""
import ctypes

from . import _capi
from ._capi import (F32, F16, BF16, NCHW, NHWC, BWD_DATA, BWD_WEIGHT, TARGET_HOST, TARGET_OPENCL,
                    TARGET_CUDA, TARGET_AMDGPU, FLAG_DETERMINISTIC, Problem, Tensor, Exec)

__all__ = ["ConvbwdError", "library_path", "host_isa", "kernels", "last_error", "check", "select_kernel",
           "try_select_kernel", "workspace_size", "try_workspace_size", "problem_key", "bwd_data", "try_bwd_data",
           "bwd_weight", "try_bwd_weight", "load_tuning_db", "Problem", "Tensor", "Exec", "F32", "F16", "BF16",
           "NCHW", "NHWC", "BWD_DATA", "BWD_WEIGHT", "TARGET_HOST", "TARGET_OPENCL", "TARGET_CUDA", "TARGET_AMDGPU",
           "FLAG_DETERMINISTIC"]

_lib, _path = _capi.load()


class ConvbwdError(RuntimeError):
    """A convbwd call failed: ``status`` (the convbwd_status value), ``status_name``
    (e.g. ``CONVBWD_BAD_PARAM``) and ``message`` (convbwd_last_error(): it names the field)."""

    def __init__(self, status, message, call=""):
        self.status = int(status)
        self.status_name = _capi.STATUS_NAMES.get(self.status, f"convbwd_status {self.status}")
        self.message = message
        self.call = call
        super().__init__(f"{call + ': ' if call else ''}{self.status_name}: {message}")


def last_error():
    """This thread's message of the last failing call (convbwd_last_error)."""
    return (_lib.convbwd_last_error() or b"").decode(errors="replace")


def check(status, call):
    """Raises ConvbwdError for a status other than CONVBWD_SUCCESS, with the library's message
    (read at once, on the calling thread: the message is per thread)."""
    if status != _capi.SUCCESS:
        raise ConvbwdError(status, last_error(), call)


def library_path():
    """The libconvbwd.so this package loaded."""
    return _path


def host_isa():
    """The instruction set the host kernels run at ("avx512", "avx2", "sse41", "baseline")."""
    return _lib.convbwd_host_isa().decode()


def kernels():
    """Every kernel built into the library (and loaded modules): a list of dicts."""
    out = []
    for i in range(_lib.convbwd_kernel_count()):
        d = _capi.KernelDesc()
        check(_lib.convbwd_kernel_info(i, ctypes.byref(d)), "convbwd_kernel_info")
        row = {}
        for name, _ in _capi.KernelDesc._fields_:
            v = getattr(d, name)
            row[name] = v.decode() if isinstance(v, bytes) else v
        out.append(row)
    return out


def _exec_ptr(exec_):
    return ctypes.byref(exec_) if exec_ is not None else None


def try_select_kernel(problem, direction, dtype, layout, exec_=None):
    """(status, kernel name or the library's message): the kernel the dispatcher picks, without raising."""
    name = ctypes.c_char_p()
    s = _lib.convbwd_select_kernel(ctypes.byref(problem), direction, dtype, layout, _exec_ptr(exec_),
                                   ctypes.byref(name))
    return (s, name.value.decode()) if s == _capi.SUCCESS else (s, last_error())


def _or_raise(result, call):
    """The value of a try_* result (status, value or message), or ConvbwdError with the message."""
    s, what = result
    if s != _capi.SUCCESS:
        raise ConvbwdError(s, what, call)
    return what


def select_kernel(problem, direction, dtype, layout, exec_=None):
    """The name of the kernel the dispatcher picks for the problem (convbwd_select_kernel)."""
    return _or_raise(try_select_kernel(problem, direction, dtype, layout, exec_), "convbwd_select_kernel")


def try_workspace_size(problem, direction, dtype, layout, exec_=None):
    """(status, bytes or the library's message), without raising."""
    n = ctypes.c_size_t()
    s = _lib.convbwd_workspace_size(ctypes.byref(problem), direction, dtype, layout, _exec_ptr(exec_),
                                    ctypes.byref(n))
    return (s, n.value) if s == _capi.SUCCESS else (s, last_error())


def workspace_size(problem, direction, dtype, layout, exec_=None):
    """Workspace bytes the chosen kernel needs (convbwd_workspace_size)."""
    return _or_raise(try_workspace_size(problem, direction, dtype, layout, exec_), "convbwd_workspace_size")


def problem_key(problem, direction, dtype, layout, exec_=None):
    """The problem's key in tuning databases (convbwd_problem_key)."""
    buf = ctypes.create_string_buffer(512)
    check(_lib.convbwd_problem_key(ctypes.byref(problem), direction, dtype, layout, _exec_ptr(exec_), buf,
                                   len(buf)), "convbwd_problem_key")
    return buf.value.decode()


def try_bwd_data(problem, dy, w, dx, alpha=1.0, beta=0.0, exec_=None):
    """convbwd_bwd_data on convbwd.Tensor descriptors: (status, the library's message or "")."""
    s = _lib.convbwd_bwd_data(ctypes.byref(problem), ctypes.byref(dy), ctypes.byref(w), ctypes.byref(dx),
                              alpha, beta, _exec_ptr(exec_))
    return s, ("" if s == _capi.SUCCESS else last_error())


def try_bwd_weight(problem, x, dy, dw, alpha=1.0, beta=0.0, exec_=None):
    """convbwd_bwd_weight on convbwd.Tensor descriptors: (status, the library's message or "")."""
    s = _lib.convbwd_bwd_weight(ctypes.byref(problem), ctypes.byref(x), ctypes.byref(dy), ctypes.byref(dw),
                                alpha, beta, _exec_ptr(exec_))
    return s, ("" if s == _capi.SUCCESS else last_error())


def bwd_data(problem, dy, w, dx, alpha=1.0, beta=0.0, exec_=None):
    """convbwd_bwd_data: dx = alpha * conv_bwd_data(dy, w) + beta * dx; raises ConvbwdError."""
    s, msg = try_bwd_data(problem, dy, w, dx, alpha, beta, exec_)
    if s != _capi.SUCCESS:
        raise ConvbwdError(s, msg, "convbwd_bwd_data")


def bwd_weight(problem, x, dy, dw, alpha=1.0, beta=0.0, exec_=None):
    """convbwd_bwd_weight: dw = alpha * conv_bwd_weight(x, dy) + beta * dw; raises ConvbwdError."""
    s, msg = try_bwd_weight(problem, x, dy, dw, alpha, beta, exec_)
    if s != _capi.SUCCESS:
        raise ConvbwdError(s, msg, "convbwd_bwd_weight")


def load_tuning_db(path):
    """Loads a tuning database (convbwd_load_tuning_db); None clears it."""
    check(_lib.convbwd_load_tuning_db(None if path is None else str(path).encode()), "convbwd_load_tuning_db")
