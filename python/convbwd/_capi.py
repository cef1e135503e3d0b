"""ctypes declarations of convbwd.h (the C API of libconvbwd.so), and where the library is found.

The structs and enums mirror runtime/include/convbwd/convbwd.h field for field; the test suite
(python/tests) checks them against the library (a bad problem's message names the field).
"""
import ctypes
import os

# convbwd_status
SUCCESS = 0
BAD_PARAM = 1
NULL_POINTER = 2
NOT_SUPPORTED = 3
BAD_WORKSPACE = 4
NO_KERNEL = 5
EXECUTION_FAILED = 6
DEVICE_ERROR = 7
ALLOC_FAILED = 8
INTERNAL_ERROR = 9
STATUS_NAMES = {
    SUCCESS: "CONVBWD_SUCCESS", BAD_PARAM: "CONVBWD_BAD_PARAM", NULL_POINTER: "CONVBWD_NULL_POINTER",
    NOT_SUPPORTED: "CONVBWD_NOT_SUPPORTED", BAD_WORKSPACE: "CONVBWD_BAD_WORKSPACE",
    NO_KERNEL: "CONVBWD_NO_KERNEL", EXECUTION_FAILED: "CONVBWD_EXECUTION_FAILED",
    DEVICE_ERROR: "CONVBWD_DEVICE_ERROR", ALLOC_FAILED: "CONVBWD_ALLOC_FAILED",
    INTERNAL_ERROR: "CONVBWD_INTERNAL_ERROR",
}

# convbwd_dtype, convbwd_layout, convbwd_direction, convbwd_target
F32, F16, BF16 = 0, 1, 2
NCHW, NHWC = 0, 1
BWD_DATA, BWD_WEIGHT = 2, 4
TARGET_HOST, TARGET_OPENCL, TARGET_CUDA, TARGET_AMDGPU = 0, 1, 2, 3
FLAG_DETERMINISTIC = 1


class Problem(ctypes.Structure):
    _fields_ = [(name, ctypes.c_int) for name in (
        "n", "c", "h", "w", "k", "p", "q", "r", "s", "groups",
        "pad_top", "pad_bottom", "pad_left", "pad_right",
        "stride_h", "stride_w", "dilation_h", "dilation_w")]


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("layout", ctypes.c_int),
                ("strides", ctypes.c_int64 * 4)]


class Exec(ctypes.Structure):
    _fields_ = [("target", ctypes.c_int), ("stream", ctypes.c_void_p), ("workspace", ctypes.c_void_p),
                ("workspace_bytes", ctypes.c_size_t), ("flags", ctypes.c_uint), ("kernel", ctypes.c_char_p)]


class KernelDesc(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("direction", ctypes.c_int), ("dtype", ctypes.c_int),
                ("layout", ctypes.c_int), ("target", ctypes.c_int), ("stride_class", ctypes.c_char_p),
                ("filter_class", ctypes.c_char_p), ("schedule", ctypes.c_char_p), ("family", ctypes.c_char_p),
                ("role", ctypes.c_char_p), ("launch", ctypes.c_char_p), ("module", ctypes.c_char_p),
                ("exact_on_integers", ctypes.c_int)]


_P = ctypes.POINTER
_SIGNATURES = {
    "convbwd_bwd_data": (ctypes.c_int, [_P(Problem), _P(Tensor), _P(Tensor), _P(Tensor), ctypes.c_float,
                                        ctypes.c_float, _P(Exec)]),
    "convbwd_bwd_weight": (ctypes.c_int, [_P(Problem), _P(Tensor), _P(Tensor), _P(Tensor), ctypes.c_float,
                                          ctypes.c_float, _P(Exec)]),
    "convbwd_workspace_size": (ctypes.c_int, [_P(Problem), ctypes.c_int, ctypes.c_int, ctypes.c_int, _P(Exec),
                                              _P(ctypes.c_size_t)]),
    "convbwd_select_kernel": (ctypes.c_int, [_P(Problem), ctypes.c_int, ctypes.c_int, ctypes.c_int, _P(Exec),
                                             _P(ctypes.c_char_p)]),
    "convbwd_problem_key": (ctypes.c_int, [_P(Problem), ctypes.c_int, ctypes.c_int, ctypes.c_int, _P(Exec),
                                           ctypes.c_char_p, ctypes.c_size_t]),
    "convbwd_load_tuning_db": (ctypes.c_int, [ctypes.c_char_p]),
    "convbwd_load_kernel_module": (ctypes.c_int, [ctypes.c_char_p]),
    "convbwd_host_isa": (ctypes.c_char_p, []),
    "convbwd_kernel_count": (ctypes.c_int, []),
    "convbwd_kernel_info": (ctypes.c_int, [ctypes.c_int, _P(KernelDesc)]),
    "convbwd_status_string": (ctypes.c_char_p, [ctypes.c_int]),
    "convbwd_last_error": (ctypes.c_char_p, []),
}


def _candidates():
    """Where libconvbwd.so is looked for, in order (the first that exists is loaded)."""
    env = os.environ.get("CONVBWD_LIBRARY")
    if env:
        return [("CONVBWD_LIBRARY", env)]
    here = os.path.dirname(os.path.abspath(__file__))
    return [("the package folder", os.path.join(here, "libconvbwd.so")),
            ("the dynamic loader's path", "libconvbwd.so")]


def load():
    """Loads libconvbwd.so and declares the C API on it; returns (library, path)."""
    tried = []
    for where, path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(f"{path} ({where}): no such file")
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({where}): {e}")
            continue
        for name, (restype, argtypes) in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
        resolved = path
        if os.sep not in path:  # found by the loader: name the file it loaded
            try:
                import re
                with open("/proc/self/maps") as maps:
                    for line in maps:
                        m = re.search(r"(/\S*libconvbwd\.so)\s*$", line)
                        if m:
                            resolved = m.group(1)
                            break
            except OSError:
                pass
        return lib, os.path.abspath(resolved) if os.sep in resolved else resolved
    raise ImportError("convbwd: libconvbwd.so not found; tried " + "; ".join(tried) +
                      ". Set CONVBWD_LIBRARY to its path (cmake --install puts it in <prefix>/lib and beside "
                      "the package in <prefix>/lib/python/convbwd).")
