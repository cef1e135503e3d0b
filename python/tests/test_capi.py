"""The ctypes binding of the C API (no PyTorch needed): the library loads, lists its kernels, and
every failure comes back as ConvbwdError carrying the library's status and message."""
import ctypes
import os
import unittest

import convbwd
from convbwd import _capi


def problem(**kw):
    p = dict(n=2, c=8, h=10, w=9, k=16, p=0, q=0, r=3, s=3, groups=1, pad_top=1, pad_bottom=1, pad_left=1,
             pad_right=1, stride_h=1, stride_w=1, dilation_h=1, dilation_w=1)
    p.update(kw)
    return convbwd.Problem(**p)


class CApi(unittest.TestCase):
    def test_library_and_kernels(self):
        self.assertTrue(os.path.exists(convbwd.library_path()) or "/" not in convbwd.library_path())
        ks = convbwd.kernels()
        self.assertGreater(len(ks), 0)
        names = {k["name"] for k in ks}
        # The generic kernels are always built: f32 / f16 / bf16, both layouts, both directions.
        for d in ("bwdd", "bwdw"):
            for t in ("f32", "f16", "bf16"):
                for lay in ("nchw", "nhwc"):
                    self.assertTrue(any(n.startswith(f"{d}_{t}_{lay}_any_any_host") for n in names), (d, t, lay))
        self.assertIn(convbwd.host_isa(), ("avx512", "avx2", "sse41", "baseline"))
        # The last field of convbwd_kernel_desc: a flag (a wrong layout reads garbage or writes past it).
        self.assertTrue(all(k["exact_on_integers"] in (0, 1) for k in ks))
        self.assertTrue(any(k["exact_on_integers"] == 1 for k in ks))

    def test_struct_layout_matches_the_header(self):
        # convbwd.h: 18 ints; a pointer, two enums, 4 int64 strides; exec with size_t and a char*.
        self.assertEqual(ctypes.sizeof(convbwd.Problem), 18 * 4)
        self.assertEqual(ctypes.sizeof(convbwd.Tensor), 8 + 4 + 4 + 32)
        self.assertEqual(convbwd.Exec.kernel.offset, 40)
        # convbwd_kernel_desc: a pointer, four enums, seven pointers, then the int flag.
        self.assertEqual(convbwd._capi.KernelDesc.exact_on_integers.offset, 8 + 4 * 4 + 7 * 8)

    def test_select_and_workspace(self):
        name = convbwd.select_kernel(problem(), convbwd.BWD_DATA, convbwd.F32, convbwd.NCHW)
        self.assertTrue(name.startswith("bwdd_f32_nchw_"), name)
        n = convbwd.workspace_size(problem(), convbwd.BWD_WEIGHT, convbwd.F32, convbwd.NHWC)
        self.assertGreaterEqual(n, 0)
        key = convbwd.problem_key(problem(), convbwd.BWD_WEIGHT, convbwd.F32, convbwd.NHWC)
        self.assertIn("n2-c8-h10-w9-k16", key)

    def test_errors_carry_the_library_message(self):
        with self.assertRaises(convbwd.ConvbwdError) as e:
            convbwd.select_kernel(problem(groups=3), convbwd.BWD_DATA, convbwd.F32, convbwd.NCHW)
        self.assertEqual(e.exception.status, _capi.BAD_PARAM)
        self.assertEqual(e.exception.status_name, "CONVBWD_BAD_PARAM")
        self.assertIn("problem.groups = 3", str(e.exception))
        self.assertIsInstance(e.exception, RuntimeError)
        with self.assertRaises(convbwd.ConvbwdError) as e:
            convbwd.select_kernel(problem(p=7), convbwd.BWD_DATA, convbwd.F32, convbwd.NCHW)
        self.assertIn("problem.p = 7", e.exception.message)
        # A NULL tensor pointer is refused, nothing is touched.
        t = convbwd.Tensor(None, convbwd.F32, convbwd.NCHW)
        with self.assertRaises(convbwd.ConvbwdError) as e:
            convbwd.bwd_data(problem(), t, t, t)
        self.assertEqual(e.exception.status, _capi.NULL_POINTER)
        self.assertIn("dy.data is NULL", e.exception.message)

    def test_host_call_on_buffers(self):
        # dx of a 1x1 convolution with one channel: dx = w * dy.
        p = problem(n=1, c=1, h=2, w=2, k=1, r=1, s=1, pad_top=0, pad_bottom=0, pad_left=0, pad_right=0)
        dy = (ctypes.c_float * 4)(1, 2, 3, 4)
        w = (ctypes.c_float * 1)(0.5)
        dx = (ctypes.c_float * 4)()
        mk = lambda buf: convbwd.Tensor(ctypes.cast(buf, ctypes.c_void_p), convbwd.F32, convbwd.NCHW)  # noqa: E731
        convbwd.bwd_data(p, mk(dy), mk(w), mk(dx))
        self.assertEqual(list(dx), [0.5, 1.0, 1.5, 2.0])
        self.assertEqual(convbwd.last_error(), "")


if __name__ == "__main__":
    unittest.main()
