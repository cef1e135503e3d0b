"""convbwd as PyTorch's backend for ``aten::convolution_backward`` (CPU and CUDA; ROCm builds of
PyTorch through the amdgpu target).

    import convbwd.torch
    convbwd.torch.enable()          # or: with convbwd.torch.override(): ...
    print(convbwd.torch.stats())    # calls served, calls passed to PyTorch's kernel and why

``enable()`` registers an implementation of ``aten::convolution_backward`` for the CPU and CUDA
dispatch keys (``torch.library``). Every call the library can take runs on convbwd: 1-D (as 2-D
with H = 1) and 2-D convolutions, any groups, stride, dilation and padding, float32 / float16 /
bfloat16, NCHW or channels_last (taken from the tensors' memory format, as PyTorch's own kernels
do), each ``output_mask``; the bias gradient is ``grad_output`` summed over N and the spatial dims.
On CUDA it runs on the caller's current stream with device pointers, and backward-weight's
workspace comes from PyTorch's caching allocator. Everything else (transposed convolutions, 3-D,
float64, sparse or empty tensors, a problem no kernel of the library takes) runs PyTorch's own
kernel (its CompositeExplicitAutograd kernel, called by dispatch key, so the override is not
entered again), and ``stats()`` records the reason. A call the library refuses as a bad problem
raises ``convbwd.ConvbwdError`` (a RuntimeError) with the library's message; nothing is written.
"""
import collections
import contextlib
import ctypes
import threading
import warnings

import torch

import convbwd as _cb
from convbwd import _capi as _c

__all__ = ["enable", "disable", "enabled", "override", "stats", "reset_stats", "convolution_backward"]

_OP = torch.ops.aten.convolution_backward.default
_FALLBACK_KEY = torch._C.DispatchKey.CompositeExplicitAutograd
_DTYPES = {torch.float32: _c.F32, torch.float16: _c.F16, torch.bfloat16: _c.BF16}
_DTYPE_NAMES = "float32, float16, bfloat16"
# The C API's strides and sizes are int32 inside the kernels; the library checks, this only keeps
# Python ints from overflowing the ctypes fields.
_INT_MAX = 2 ** 31 - 1

_lock = threading.Lock()
_lib = None            # the torch.library.Library holding the registrations while enabled
_served = 0
_fallback = 0
_reasons = collections.Counter()
_kernels = collections.Counter()


# Statistics -----------------------------------------------------------------------------------

def stats():
    """What ran since the last reset_stats(): ``served`` (calls convbwd computed), ``fallback``
    (calls passed to PyTorch's kernel), ``reasons`` ({reason: calls}: why each fallback happened,
    the library's dispatch message where it refused) and ``kernels`` ({"bwd_data: NAME": calls,
    "bwd_weight: NAME": calls}: the kernels the library ran)."""
    with _lock:
        return {"served": _served, "fallback": _fallback, "reasons": dict(_reasons), "kernels": dict(_kernels)}


def reset_stats():
    global _served, _fallback
    with _lock:
        _served = _fallback = 0
        _reasons.clear()
        _kernels.clear()


def _count_served(names):
    global _served
    with _lock:
        _served += 1
        for n in names:
            _kernels[n] += 1


def _count_fallback(reason):
    global _fallback
    with _lock:
        _fallback += 1
        _reasons[reason] += 1


# Registration ---------------------------------------------------------------------------------

def enabled():
    return _lib is not None


def enable():
    """Registers convbwd's aten::convolution_backward for CPU and CUDA (idempotent)."""
    global _lib
    with _lock:
        if _lib is not None:
            return
        # The fallback calls this kernel by dispatch key: refuse to enable where it is missing.
        if not torch._C._dispatch_has_kernel_for_dispatch_key("aten::convolution_backward", _FALLBACK_KEY):
            raise RuntimeError("convbwd.torch: this PyTorch has no CompositeExplicitAutograd kernel of "
                               "aten::convolution_backward to fall back to; not enabling")
        lib = torch.library.Library("aten", "IMPL")
        with warnings.catch_warnings():
            # PyTorch warns that the CUDA kernel it registered is overridden: that is the point.
            warnings.filterwarnings("ignore", message=".*[Oo]verriding a previously registered kernel.*")
            try:
                lib.impl("convolution_backward", convolution_backward, "CPU")
                lib.impl("convolution_backward", convolution_backward, "CUDA")
            except Exception:
                _destroy(lib)
                raise
        _lib = lib


def _destroy(lib):
    if hasattr(lib, "_destroy"):  # PyTorch 2.x
        lib._destroy()
        return
    # PyTorch 1.13: the registrations live as long as the C++ library object (lib.m).
    impls = getattr(lib, "_op_impls", set())
    for key in list(impls):
        torch.library._impls.discard(key)
    impls.clear()
    if hasattr(lib, "m"):
        del lib.m


def disable():
    """Removes the registrations: PyTorch's own kernels run again (idempotent)."""
    global _lib
    with _lock:
        lib, _lib = _lib, None
        if lib is not None:
            _destroy(lib)


@contextlib.contextmanager
def override():
    """Enables convbwd for the block and restores the previous state after it."""
    was = enabled()
    enable()
    try:
        yield
    finally:
        if not was:
            disable()


# The implementation ---------------------------------------------------------------------------

class _Fallback(Exception):
    """Raised by the planning steps: this call runs PyTorch's kernel, for this reason."""


def _bad(message):
    """A call PyTorch's own kernel would refuse too: an error, never a fallback."""
    return _cb.ConvbwdError(_c.BAD_PARAM, message, "convbwd.torch.convolution_backward")


def _expand(values, n, name):
    values = list(values)
    if len(values) == 1 and n > 1:
        values = values * n
    if len(values) != n:
        raise _bad(f"{name} = {values} has {len(values)} entries; the convolution has {n} spatial dims")
    return [int(v) for v in values]


def _mem_format(layout):
    return torch.channels_last if layout == _c.NHWC else torch.contiguous_format


def _channels_last(t):
    return t.dim() == 4 and t.is_contiguous(memory_format=torch.channels_last) and not t.is_contiguous()


def _packed_strides(sizes, layout):
    n, c, h, w = sizes
    if layout == _c.NCHW:
        return [c * h * w, h * w, w, 1]
    return [h * w * c, 1, w * c, c]


def _operand(t, layout, dtype, packed):
    """(tensor, convbwd.Tensor) for an input: t itself with its strides where the C API can read
    it (innermost dim of the layout at stride 1, every other stride positive), else a packed copy
    in the layout. packed=True: always a packed, freshly allocated (aligned) copy unless t is one."""
    fmt = _mem_format(layout)
    sizes = list(t.shape)
    strides = None
    if t.is_contiguous(memory_format=fmt) and t.data_ptr() % 16 == 0:
        strides = [0, 0, 0, 0]  # packed
    elif not packed:
        st = list(t.stride())
        pk = _packed_strides(sizes, layout)
        inner = 3 if layout == _c.NCHW else 1
        # A dim of extent 1 is never stepped along: any positive stride reads the same elements.
        st = [pk[d] if sizes[d] == 1 else st[d] for d in range(4)]
        if st[inner] == 1 and all(0 < s <= _INT_MAX for s in st):
            strides = st
    if strides is None:
        t = t.clone(memory_format=fmt) if t.is_contiguous(memory_format=fmt) else t.contiguous(memory_format=fmt)
        strides = [0, 0, 0, 0]
    desc = _c.Tensor(t.data_ptr(), dtype, layout, (ctypes.c_int64 * 4)(*strides))
    return t, desc


def _output(t, layout, dtype):
    return _c.Tensor(t.data_ptr(), dtype, layout, (ctypes.c_int64 * 4)(0, 0, 0, 0))


def _plan(grad_output, input, weight, stride, padding, dilation, transposed, groups):
    """Checks the call and builds the problem; raises _Fallback (with the reason) or ConvbwdError."""
    if transposed:
        raise _Fallback("transposed convolution: convbwd has the backward of forward convolutions only")
    tensors = {"grad_output": grad_output, "input": input, "weight": weight}
    for name, t in tensors.items():
        if not isinstance(t, torch.Tensor):
            raise _bad(f"{name} is not a tensor")
        if t.layout != torch.strided:
            raise _Fallback(f"{name} has layout {t.layout}: convbwd takes dense (strided) tensors")
    nd = weight.dim()
    if nd == 5:
        raise _Fallback("3-D convolution (5-D weight): convbwd is 2-D only (1-D runs as 2-D with H = 1)")
    if nd not in (3, 4):
        raise _Fallback(f"{nd}-D weight: convbwd takes 1-D and 2-D convolutions (3-D or 4-D weights)")
    for name, t in tensors.items():
        if t.dim() != nd:
            raise _bad(f"{name} has {t.dim()} dims, weight has {nd}")
    dev = input.device
    if grad_output.device != dev or weight.device != dev:
        raise _Fallback(f"tensors on different devices ({grad_output.device}, {input.device}, {weight.device})")
    dtype = input.dtype
    if dtype not in _DTYPES:
        raise _Fallback(f"dtype {dtype}: convbwd has {_DTYPE_NAMES}")
    if grad_output.dtype != dtype or weight.dtype != dtype:
        raise _Fallback(f"mixed dtypes (grad_output {grad_output.dtype}, input {dtype}, weight {weight.dtype})")
    if min(t.numel() for t in tensors.values()) == 0:
        raise _Fallback("an empty tensor (a size of 0)")
    spatial = nd - 2
    stride = _expand(stride, spatial, "stride")
    padding = _expand(padding, spatial, "padding")
    dilation = _expand(dilation, spatial, "dilation")
    groups = int(groups)
    if spatial == 1:  # 1-D as 2-D with H = 1
        stride, padding, dilation = [1] + stride, [0] + padding, [1] + dilation
        grad_output, input, weight = grad_output.unsqueeze(2), input.unsqueeze(2), weight.unsqueeze(2)
    n, c, h, w = input.shape
    k, cg, r, s = weight.shape
    if max(n, c, h, w, k, r, s, *stride, *dilation, *(abs(v) for v in padding)) > _INT_MAX:
        raise _Fallback("a size, stride, padding or dilation over 2^31-1")
    problem = _c.Problem(n=n, c=c, h=h, w=w, k=k, p=grad_output.shape[2], q=grad_output.shape[3], r=r, s=s,
                         groups=groups, pad_top=padding[0], pad_bottom=padding[0], pad_left=padding[1],
                         pad_right=padding[1], stride_h=stride[0], stride_w=stride[1],
                         dilation_h=dilation[0], dilation_w=dilation[1])
    # What PyTorch's kernel checks too: the tensors must describe one convolution.
    mismatch = None
    if groups < 1 or c % groups or k % groups:
        mismatch = None  # the library names the field
    elif cg * groups != c:
        mismatch = f"weight.shape[1] = {cg} but input has {c} channels in {groups} groups ({c // groups} a group)"
    elif grad_output.shape[0] != n or grad_output.shape[1] != k:
        mismatch = (f"grad_output.shape[:2] = {tuple(grad_output.shape[:2])}, expected ({n}, {k}) "
                    f"(input's batch, weight's output channels)")
    if mismatch:
        raise _bad(mismatch)
    return problem, grad_output, input, weight, spatial


def _torch_accepts(problem):
    """True where PyTorch's own kernel takes this problem (so a refusal by the library is a
    limit of convbwd, to fall back from, not an error)."""
    p = problem
    fields = [p.n, p.c, p.h, p.w, p.k, p.r, p.s, p.groups, p.stride_h, p.stride_w, p.dilation_h, p.dilation_w]
    if min(fields) < 1 or min(p.pad_top, p.pad_left) < 0 or p.c % p.groups or p.k % p.groups:
        return False
    for size, pad, f, st, dil, out in ((p.h, p.pad_top, p.r, p.stride_h, p.dilation_h, p.p),
                                       (p.w, p.pad_left, p.s, p.stride_w, p.dilation_w, p.q)):
        eff = dil * (f - 1) + 1
        if eff > size + 2 * pad or out != (size + 2 * pad - eff) // st + 1:
            return False
    return True


def _target(device):
    if device.type == "cpu":
        return _c.TARGET_HOST, None
    if device.type == "cuda":
        target = _c.TARGET_AMDGPU if getattr(torch.version, "hip", None) else _c.TARGET_CUDA
        return target, torch.cuda.current_stream(device).cuda_stream
    raise _Fallback(f"device {device.type}: convbwd serves cpu and cuda tensors")


# Statuses after which the call runs PyTorch's kernel: the library cannot take this problem or
# these tensors (and wrote nothing). Every other failure is an error.
_FALLBACK_STATUSES = (_c.NOT_SUPPORTED, _c.NO_KERNEL)


def _select(problem, direction, dtype, layout, exec_):
    s, name = _cb.try_select_kernel(problem, direction, dtype, layout, exec_)
    if s != _c.SUCCESS:
        if s in _FALLBACK_STATUSES or (s == _c.BAD_PARAM and _torch_accepts(problem)):
            raise _Fallback(f"convbwd_select_kernel: {_c.STATUS_NAMES[s]}: {name}")
        raise _cb.ConvbwdError(s, name, "convbwd_select_kernel")
    return name


def _run(call, direction, problem, a, b, out, layout, dtype, exec_):
    """Runs convbwd_bwd_data / convbwd_bwd_weight; a status of the tensors (an operand the kernels
    cannot read as strided) is retried once with packed copies."""
    fn = _cb.try_bwd_data if direction == _c.BWD_DATA else _cb.try_bwd_weight
    ta, da = _operand(a, layout, dtype, packed=False)
    tb, db = _operand(b, layout, dtype, packed=False)
    s, msg = fn(problem, da, db, _output(out, layout, dtype), 1.0, 0.0, exec_)
    if s in (_c.NOT_SUPPORTED, _c.NO_KERNEL, _c.BAD_WORKSPACE):
        ta, da = _operand(a, layout, dtype, packed=True)
        tb, db = _operand(b, layout, dtype, packed=True)
        s, msg = fn(problem, da, db, _output(out, layout, dtype), 1.0, 0.0, exec_)
    del ta, tb  # the operands (and copies) lived through the call; on CUDA the caching allocator
    # keeps their blocks for this stream's later work, so the kernels' reads stay ordered before it
    if s != _c.SUCCESS:
        if s in _FALLBACK_STATUSES:
            raise _Fallback(f"{call}: {_c.STATUS_NAMES[s]}: {msg}")
        raise _cb.ConvbwdError(s, msg, call)


def _compute(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed, groups, output_mask):
    problem, dy, x, w, spatial = _plan(grad_output, input, weight, stride, padding, dilation, transposed, groups)
    want_dx, want_dw, want_db = (bool(m) for m in output_mask)
    if want_db and bias_sizes is not None and [int(v) for v in bias_sizes] != [problem.k]:
        raise _bad(f"bias_sizes = {list(bias_sizes)}, but weight has {problem.k} output channels")
    dtype = _DTYPES[x.dtype]
    # The layout PyTorch's kernels pick: channels_last where the input or the weight is.
    layout = _c.NHWC if spatial == 2 and (_channels_last(input) or _channels_last(weight)) else _c.NCHW
    device = x.device
    target, stream = _target(device)
    flags = _c.FLAG_DETERMINISTIC if torch.are_deterministic_algorithms_enabled() else 0
    guard = torch.cuda.device(device) if device.type == "cuda" else contextlib.nullcontext()
    ran = []
    dx = dw = db = None
    with guard:
        exec_ = _c.Exec(target=target, stream=stream, workspace=None, workspace_bytes=0, flags=flags, kernel=None)
        # Select both kernels before anything runs: a fallback then computes every output itself.
        names = {}
        for direction, wanted in ((_c.BWD_DATA, want_dx), (_c.BWD_WEIGHT, want_dw)):
            if wanted:
                names[direction] = _select(problem, direction, dtype, layout, exec_)
        if want_dx:
            dx = torch.empty(x.shape, dtype=x.dtype, device=device, memory_format=_mem_format(layout))
            _run("convbwd_bwd_data", _c.BWD_DATA, problem, dy, w, dx, layout, dtype, exec_)
            ran.append("bwd_data: " + names[_c.BWD_DATA])
        if want_dw:
            s, nbytes = _cb.try_workspace_size(problem, _c.BWD_WEIGHT, dtype, layout, exec_)
            if s != _c.SUCCESS:
                raise _cb.ConvbwdError(s, nbytes, "convbwd_workspace_size")
            ws = torch.empty(max(nbytes, 1), dtype=torch.uint8, device=device)  # PyTorch's allocator
            exec_ = _c.Exec(target=target, stream=stream, workspace=ws.data_ptr(), workspace_bytes=nbytes,
                            flags=flags, kernel=None)
            dw = torch.empty(w.shape, dtype=w.dtype, device=device, memory_format=_mem_format(layout))
            _run("convbwd_bwd_weight", _c.BWD_WEIGHT, problem, x, dy, dw, layout, dtype, exec_)
            del ws
            ran.append("bwd_weight: " + names[_c.BWD_WEIGHT])
    if want_db:
        db = grad_output.sum(dim=[0] + list(range(2, grad_output.dim())))
    if spatial == 1:
        dx = dx.squeeze(2) if dx is not None else None
        dw = dw.squeeze(2) if dw is not None else None
    return (dx, dw, db), ran


def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                         output_padding, groups, output_mask):
    """aten::convolution_backward on convbwd, or PyTorch's own kernel for what convbwd does not take."""
    # Below autograd, as the dispatcher calls a backend kernel (the guard is already set there; it
    # matters where this function is called directly: PyTorch's kernel asserts it).
    with _below_autograd():
        return _convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                                     output_padding, groups, output_mask)


@contextlib.contextmanager
def _below_autograd():
    """Autograd's dispatch keys excluded for the block (at::AutoDispatchBelowAutograd): a context
    manager in PyTorch 2.x, a guard held by reference in 1.13."""
    cls = getattr(torch._C, "_AutoDispatchBelowAutograd", None)
    if cls is None:
        yield
        return
    guard = cls()
    if hasattr(guard, "__enter__"):
        with guard:
            yield
    else:
        try:
            yield
        finally:
            del guard


def _convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                          output_padding, groups, output_mask):
    try:
        out, ran = _compute(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed, groups,
                            output_mask)
    except _Fallback as f:
        _count_fallback(str(f))
        dev = input.device if isinstance(input, torch.Tensor) else None
        with torch.cuda.device(dev) if dev is not None and dev.type == "cuda" else contextlib.nullcontext():
            return _OP._op_dk(_FALLBACK_KEY, grad_output, input, weight, bias_sizes, stride, padding, dilation,
                              transposed, output_padding, groups, output_mask)
    _count_served(ran)
    return out
