"""convbwd.torch against PyTorch's own gradients.

The library has no float64 kernels, so torch.autograd.gradcheck (float64) cannot run on it; each
case instead computes convbwd's gradients in float32 / float16 / bfloat16 on fresh random inputs
and compares them with PyTorch's own kernel run in float64 on the same (rounded) inputs: the
largest error, relative to the largest reference value, must stay within the dtype's tolerance
(TOL). stats() must show that convbwd served the call (and with which kernels); the calls convbwd
cannot take must fall back to PyTorch's kernel with a reason, and bad tensors must raise
ConvbwdError with the library's message.

CONVBWD_TEST_DEVICE=cuda runs the same cases on the GPU (scripts/gpu_torch.sh).
"""
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import unittest

import torch
import torch.nn.functional as F

import convbwd
import convbwd.torch as cbt

DEVICE = torch.device(os.environ.get("CONVBWD_TEST_DEVICE", "cpu"))
if DEVICE.type == "cuda":
    # PyTorch's own kernels in true float32 (no TF32) and cuDNN's deterministic algorithms: the
    # stock runs compared with convbwd's, and with each other, compute what the tests assume.
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
OP = torch.ops.aten.convolution_backward.default
STOCK = torch._C.DispatchKey.CompositeExplicitAutograd
# Largest |ours - reference| / max |reference|: float32 reductions of up to a few thousand terms;
# float16 / bfloat16 outputs are rounded to 11 / 8 significant bits (and accumulate in float32).
TOL = {torch.float32: 2e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}
MASKS = [(True, True, True), (True, False, False), (False, True, False), (False, False, True),
         (True, True, False), (False, True, True), (True, False, True)]


def stock(dy, x, w, bias_sizes, stride, padding, dilation, transposed, output_padding, groups, mask):
    """PyTorch's own kernel (the one the override falls back to), whatever is registered; below
    autograd, as the dispatcher would call it."""
    with cbt._below_autograd():
        return OP._op_dk(STOCK, dy, x, w, bias_sizes, stride, padding, dilation, transposed, output_padding,
                         groups, mask)


def rel_err(ours, ref):
    ours, ref = ours.detach().double().cpu(), ref.detach().double().cpu()
    assert ours.shape == ref.shape, (ours.shape, ref.shape)
    scale = ref.abs().max().item()
    return (ours - ref).abs().max().item() / (scale if scale > 0 else 1.0)


class Case:
    """One convolution: sizes, stride, padding, dilation, groups, channels_last."""

    def __init__(self, name, n, c, k, spatial, kernel, stride=1, padding=0, dilation=1, groups=1,
                 channels_last=False):
        nd = len(spatial)
        tup = lambda v: list(v) if isinstance(v, (tuple, list)) else [v] * nd  # noqa: E731
        self.name, self.n, self.c, self.k, self.spatial = name, n, c, k, list(spatial)
        self.kernel, self.stride, self.padding, self.dilation = tup(kernel), tup(stride), tup(padding), tup(dilation)
        self.groups, self.channels_last = groups, channels_last

    def tensors(self, dtype, gen):
        nd = len(self.spatial)
        x = torch.randn([self.n, self.c] + self.spatial, generator=gen)
        w = torch.randn([self.k, self.c // self.groups] + self.kernel, generator=gen)
        out = [(s + 2 * p - d * (r - 1) - 1) // st + 1
               for s, p, d, r, st in zip(self.spatial, self.padding, self.dilation, self.kernel, self.stride)]
        dy = torch.randn([self.n, self.k] + out, generator=gen)
        ts = [t.to(dtype).to(DEVICE) for t in (dy, x, w)]
        if self.channels_last:
            assert nd == 2
            ts = [t.contiguous(memory_format=torch.channels_last) for t in ts]
        return ts

    def args(self, dy, x, w, mask):
        nd = len(self.spatial)
        return (dy, x, w, [self.k], self.stride, self.padding, self.dilation, False, [0] * nd, self.groups,
                list(mask))


CASES = [
    Case("3x3 s1 p1", 2, 8, 16, (10, 9), 3, padding=1),
    Case("1x1 s1", 2, 16, 8, (7, 7), 1),
    Case("3x3 s2 p1", 2, 8, 8, (11, 10), 3, stride=2, padding=1),
    Case("1x1 s2", 2, 8, 16, (8, 9), 1, stride=2),
    Case("5x3 stride (2,1) pad (2,0) dil (1,2)", 2, 4, 6, (12, 11), (5, 3), stride=(2, 1), padding=(2, 0),
         dilation=(1, 2)),
    Case("3x3 dil 2 pad 2", 1, 6, 4, (9, 9), 3, padding=2, dilation=2),
    Case("2x2 s3 (empty phases)", 2, 4, 4, (10, 10), 2, stride=3),
    Case("7x7 s2 p3 stem", 2, 3, 16, (20, 20), 7, stride=2, padding=3),
    Case("groups 2", 2, 8, 12, (9, 8), 3, padding=1, groups=2),
    Case("depthwise", 2, 8, 8, (9, 9), 3, padding=1, groups=8),
    Case("depthwise x2", 2, 4, 8, (8, 8), 3, stride=2, padding=1, groups=4),
    Case("3x3 s1 p1 channels_last", 2, 8, 16, (10, 9), 3, padding=1, channels_last=True),
    Case("3x3 s2 p1 groups 2 channels_last", 2, 8, 8, (11, 10), 3, stride=2, padding=1, groups=2,
         channels_last=True),
    Case("1x1 channels_last", 2, 16, 8, (6, 7), 1, channels_last=True),
    Case("depthwise channels_last", 2, 8, 8, (9, 9), 3, padding=1, groups=8, channels_last=True),
    Case("conv1d k3 p1", 3, 8, 16, (17,), 3, padding=1),
    Case("conv1d k5 s2 d2 groups 2", 2, 8, 8, (30,), 5, stride=2, padding=3, dilation=2, groups=2),
]


class Override(unittest.TestCase):
    def setUp(self):
        cbt.enable()
        cbt.reset_stats()
        self.gen = torch.Generator().manual_seed(hash(self.id()) % (2 ** 31))

    def tearDown(self):
        cbt.disable()

    def check_case(self, case, dtype, masks=MASKS):
        for mask in masks:
            with self.subTest(case=case.name, dtype=str(dtype), mask=mask):
                dy, x, w = case.tensors(dtype, self.gen)
                cbt.reset_stats()
                got = OP(*case.args(dy, x, w, mask))
                st = cbt.stats()
                self.assertEqual((st["served"], st["fallback"]), (1, 0), st)
                kernels = list(st["kernels"])
                self.assertEqual(any(k.startswith("bwd_data: ") for k in kernels), mask[0], st)
                self.assertEqual(any(k.startswith("bwd_weight: ") for k in kernels), mask[1], st)
                ref = stock(*case.args(dy.double().cpu(), x.double().cpu(), w.double().cpu(), mask))
                for i, name in enumerate(("grad_input", "grad_weight", "grad_bias")):
                    if not mask[i]:
                        self.assertIsNone(got[i], name)
                        continue
                    self.assertEqual(got[i].dtype, dtype)
                    self.assertEqual(got[i].device.type, DEVICE.type)
                    self.assertLessEqual(rel_err(got[i], ref[i]), TOL[dtype], name)
                if case.channels_last and mask[0]:
                    self.assertTrue(got[0].is_contiguous(memory_format=torch.channels_last))

    def test_float32_every_case_and_mask(self):
        for case in CASES:
            self.check_case(case, torch.float32)

    def test_float16_bfloat16(self):
        for dtype in (torch.float16, torch.bfloat16):
            for case in CASES[:4] + CASES[8:9] + CASES[11:12] + CASES[15:16]:
                self.check_case(case, dtype, masks=[(True, True, True)])

    def test_autograd_conv1d_conv2d(self):
        # The path a training step takes: F.conv*d forward, .backward() -> aten::convolution_backward.
        for dims, fn in ((1, F.conv1d), (2, F.conv2d)):
            for channels_last in ((False, True) if dims == 2 else (False,)):
                with self.subTest(dims=dims, channels_last=channels_last):
                    shape = [2, 6] + [11] * dims
                    x = torch.randn(shape, generator=self.gen).to(DEVICE)
                    w = torch.randn([8, 3] + [3] * dims, generator=self.gen).to(DEVICE)
                    b = torch.randn(8, generator=self.gen).to(DEVICE)
                    if channels_last:
                        x, w = x.contiguous(memory_format=torch.channels_last), w.contiguous(
                            memory_format=torch.channels_last)
                    leaves = [t.detach().clone().requires_grad_() for t in (x, w, b)]
                    ref_leaves = [t.detach().double().cpu().requires_grad_() for t in (x, w, b)]
                    cbt.reset_stats()
                    y = fn(*leaves, stride=2, padding=1, groups=2)
                    g = torch.randn(y.shape, generator=self.gen).to(DEVICE)
                    y.backward(g)
                    st = cbt.stats()
                    self.assertEqual((st["served"], st["fallback"]), (1, 0), st)
                    with cbt.override():
                        pass  # nested use keeps the outer enable
                    self.assertTrue(cbt.enabled())
                    cbt.disable()
                    yr = fn(*ref_leaves, stride=2, padding=1, groups=2)
                    yr.backward(g.double().cpu())
                    cbt.enable()
                    for a, r in zip(leaves, ref_leaves):
                        self.assertLessEqual(rel_err(a.grad, r.grad), TOL[torch.float32])

    def test_input_not_requiring_grad(self):
        # First layers: output_mask (False, True, True).
        x = torch.randn(2, 3, 12, 12, generator=self.gen).to(DEVICE)
        conv = torch.nn.Conv2d(3, 8, 3, padding=1).to(DEVICE)
        conv(x).square().sum().backward()
        st = cbt.stats()
        self.assertEqual(st["served"], 1, st)
        self.assertFalse(any(k.startswith("bwd_data") for k in st["kernels"]), st)

    def test_strided_and_expanded_operands(self):
        # A sliced input (strides, an offset) and an expanded grad_output (stride 0).
        case = Case("3x3 s1 p1", 2, 8, 16, (10, 9), 3, padding=1)
        dy, x, w = case.tensors(torch.float32, self.gen)
        big = torch.randn(2, 12, 13, 11, generator=self.gen).to(DEVICE)
        x = big[:, 2:10, 1:11, 1:10]
        dy = torch.randn(1, 16, 1, 9, generator=self.gen).to(DEVICE).expand(2, 16, 10, 9)
        got = OP(*case.args(dy, x, w, (True, True, False)))
        ref = stock(*case.args(dy.double().cpu(), x.double().cpu(), w.double().cpu(), (True, True, False)))
        self.assertEqual(cbt.stats()["served"], 1)
        for i in range(2):
            self.assertLessEqual(rel_err(got[i], ref[i]), TOL[torch.float32])

    def test_double_backward(self):
        # create_graph=True: autograd records the backward's own backward above the override, which
        # runs below it; the second-order gradient matches PyTorch's in float64.
        def second_order(on, dtype, device):
            g = torch.Generator().manual_seed(7)
            x = torch.randn(2, 4, 9, 9, generator=g).to(dtype).to(device).requires_grad_()
            w = torch.randn(6, 4, 3, 3, generator=g).to(dtype).to(device).requires_grad_()
            with cbt.override() if on else contextlib.nullcontext():
                y = F.conv2d(x, w, stride=2, padding=1)
                gx, gw = torch.autograd.grad(y.square().sum(), (x, w), create_graph=True)
                (gx.square().sum() + gw.sum()).backward()
            return x.grad, w.grad

        cbt.disable()
        cbt.reset_stats()
        got = second_order(True, torch.float32, DEVICE)
        self.assertGreaterEqual(cbt.stats()["served"], 1, cbt.stats())
        ref = second_order(False, torch.float64, torch.device("cpu"))
        for a, r in zip(got, ref):
            self.assertLessEqual(rel_err(a, r), 1e-4)

    @unittest.skipUnless(DEVICE.type == "cuda", "CUDA only")
    def test_cuda_stream_and_caching_allocator(self):
        # On a side stream, the workspace and outputs from PyTorch's caching allocator.
        case = Case("3x3 s1 p1", 8, 32, 32, (28, 28), 3, padding=1)
        dy, x, w = case.tensors(torch.float32, self.gen)
        p = convbwd.Problem(n=8, c=32, h=28, w=28, k=32, r=3, s=3, groups=1, pad_top=1, pad_bottom=1, pad_left=1,
                            pad_right=1, stride_h=1, stride_w=1, dilation_h=1, dilation_w=1)
        target = convbwd.TARGET_AMDGPU if torch.version.hip else convbwd.TARGET_CUDA
        ws = convbwd.workspace_size(p, convbwd.BWD_WEIGHT, convbwd.F32, convbwd.NCHW, convbwd.Exec(target=target))
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        before = torch.cuda.memory_stats()["allocation.all.allocated"]
        with torch.cuda.stream(side):
            got = OP(*case.args(dy, x, w, (False, True, False)))
        after = torch.cuda.memory_stats()["allocation.all.allocated"]
        side.synchronize()
        self.assertGreaterEqual(after - before, 2 if ws > 0 else 1)  # dw (+ the workspace)
        ref = stock(*case.args(dy.double().cpu(), x.double().cpu(), w.double().cpu(), (False, True, False)))
        self.assertLessEqual(rel_err(got[1], ref[1]), TOL[torch.float32])
        self.assertEqual(cbt.stats()["served"], 1)

    def test_deterministic_flag_bitwise_repeatable(self):
        was = torch.are_deterministic_algorithms_enabled()
        torch.use_deterministic_algorithms(True)
        try:
            case = Case("3x3 s1 p1", 4, 16, 16, (14, 14), 3, padding=1)
            dy, x, w = case.tensors(torch.float32, self.gen)
            first = OP(*case.args(dy, x, w, (True, True, True)))
            for _ in range(3):
                again = OP(*case.args(dy, x, w, (True, True, True)))
                for a, b in zip(first, again):
                    self.assertTrue(torch.equal(a, b))
            self.assertEqual(cbt.stats()["served"], 4)
        finally:
            torch.use_deterministic_algorithms(was)

    def test_fallbacks_have_reasons_and_are_stock_exact(self):
        gen = self.gen
        cases = [
            ("transposed", "transposed convolution",
             lambda: (torch.randn(2, 4, 9, 9, generator=gen), torch.randn(2, 6, 5, 5, generator=gen),
                      torch.randn(6, 4, 3, 3, generator=gen), [4], [2, 2], [1, 1], [1, 1], True, [0, 0], 1)),
            ("conv3d", "3-D convolution",
             lambda: (torch.randn(1, 4, 4, 4, 4, generator=gen), torch.randn(1, 2, 6, 6, 6, generator=gen),
                      torch.randn(4, 2, 3, 3, 3, generator=gen), [4], [1, 1, 1], [0, 0, 0], [1, 1, 1], False,
                      [0, 0, 0], 1)),
            ("float64", "dtype torch.float64",
             lambda: (torch.randn(2, 4, 6, 6, generator=gen).double(), torch.randn(2, 3, 8, 8, generator=gen).double(),
                      torch.randn(4, 3, 3, 3, generator=gen).double(), [4], [1, 1], [0, 0], [1, 1], False, [0, 0], 1)),
            ("empty batch", "empty tensor",
             lambda: (torch.randn(0, 4, 6, 6), torch.randn(0, 3, 8, 8), torch.randn(4, 3, 3, 3, generator=gen),
                      [4], [1, 1], [0, 0], [1, 1], False, [0, 0], 1)),
        ]
        for name, reason, make in cases:
            with self.subTest(name=name):
                args = [a.to(DEVICE) if isinstance(a, torch.Tensor) else a for a in make()]
                cbt.reset_stats()
                got = OP(*args, [True, True, True])
                st = cbt.stats()
                self.assertEqual((st["served"], st["fallback"]), (0, 1), st)  # once: no re-entry
                (why,) = st["reasons"]
                self.assertIn(reason, why)
                ref = stock(*args, [True, True, True])
                for a, b in zip(got, ref):
                    if b is None:
                        self.assertIsNone(a)
                    else:
                        self.assertTrue(torch.equal(a, b), name)

    def test_stride_past_the_input_is_served(self):
        # PyTorch takes a stride past the padded input (one output row, where the stride takes
        # no part); the library runs it as the problem with stride = the padded extent.
        gen = self.gen
        args = [a.to(DEVICE) if isinstance(a, torch.Tensor) else a for a in
                (torch.randn(2, 4, 1, 3, generator=gen), torch.randn(2, 3, 5, 5, generator=gen),
                 torch.randn(4, 3, 3, 3, generator=gen), [4], [9, 1], [0, 0], [1, 1], False, [0, 0], 1)]
        cbt.reset_stats()
        got = OP(*args, [True, True, True])
        st = cbt.stats()
        self.assertEqual((st["served"], st["fallback"]), (1, 0), st)
        ref = stock(*[a.double() if isinstance(a, torch.Tensor) else a for a in args], [True, True, True])
        for a, b in zip(got, ref):
            self.assertLessEqual(rel_err(a, b), TOL[torch.float32])

    def test_transposed_through_autograd(self):
        x = torch.randn(2, 4, 7, 7, generator=self.gen).to(DEVICE).requires_grad_()
        w = torch.randn(4, 6, 3, 3, generator=self.gen).to(DEVICE).requires_grad_()
        F.conv_transpose2d(x, w, stride=2).sum().backward()
        st = cbt.stats()
        self.assertEqual((st["served"], st["fallback"]), (0, 1), st)
        self.assertTrue(all("transposed" in r for r in st["reasons"]))

    def test_bad_tensors_raise_the_library_message(self):
        case = Case("3x3 s1 p1", 2, 8, 16, (10, 9), 3, padding=1)
        dy, x, w = case.tensors(torch.float32, self.gen)
        bad = [
            # grad_output's height disagrees with the convolution: the library names problem.p.
            ("grad_output height", lambda: case.args(dy[:, :, :7], x, w, (True, True, False)), "problem.p = 7"),
            ("negative padding", lambda: (dy, x, w, [16], [1, 1], [-1, 1], [1, 1], False, [0, 0], 1,
                                          [True, False, False]), "problem.pad_top = -1"),
            ("groups not dividing", lambda: (dy, x, w, [16], [1, 1], [1, 1], [1, 1], False, [0, 0], 3,
                                             [True, True, False]), "problem.groups = 3"),
            ("filter larger than the input", lambda: (dy, x[:, :, :1, :1], w, [16], [1, 1], [0, 0], [1, 1], False,
                                                      [0, 0], 1, [True, True, False]), "does not fit"),
            ("weight channels", lambda: (dy, x, w[:, :5], [16], [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
                                         [True, True, False]), "weight.shape[1] = 5"),
            ("grad_output channels", lambda: (dy[:, :3], x, w, [16], [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
                                              [True, True, False]), "grad_output.shape[:2]"),
        ]
        for name, make, message in bad:
            with self.subTest(name=name):
                with self.assertRaises(RuntimeError) as e:
                    OP(*make())
                self.assertIn(message, str(e.exception))
        st = cbt.stats()
        self.assertEqual((st["served"], st["fallback"]), (0, 0), st)

    def test_enable_disable_override(self):
        conv = torch.nn.Conv2d(4, 4, 3).to(DEVICE)
        x = torch.randn(1, 4, 8, 8, generator=self.gen).to(DEVICE)
        cbt.enable()  # idempotent
        conv(x).sum().backward()
        self.assertEqual(cbt.stats()["served"], 1)
        cbt.disable()
        cbt.disable()  # idempotent
        self.assertFalse(cbt.enabled())
        conv(x).sum().backward()
        self.assertEqual(cbt.stats()["served"], 1)  # PyTorch's kernel ran: not counted
        with cbt.override():
            self.assertTrue(cbt.enabled())
            conv(x).sum().backward()
        self.assertFalse(cbt.enabled())
        self.assertEqual(cbt.stats()["served"], 2)

    def test_training_steps_match_stock(self):
        # A few SGD steps from one seed with the override on and off: the losses agree.
        def run(on):
            torch.manual_seed(0)
            model = torch.nn.Sequential(
                torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(8, 8, 3, stride=2, groups=2),
                torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(8 * 7 * 7, 5),
            ).to(DEVICE)
            opt = torch.optim.SGD(model.parameters(), lr=0.05)
            data = torch.randn(16, 3, 16, 16, generator=torch.Generator().manual_seed(1)).to(DEVICE)
            labels = torch.randint(0, 5, (16,), generator=torch.Generator().manual_seed(2)).to(DEVICE)
            losses = []
            with cbt.override() if on else contextlib.nullcontext():
                for _ in range(5):
                    opt.zero_grad()
                    loss = F.cross_entropy(model(data), labels)
                    loss.backward()
                    opt.step()
                    losses.append(loss.item())
            return losses

        cbt.disable()
        cbt.reset_stats()
        on = run(True)
        self.assertEqual(cbt.stats()["served"], 10)  # two convs, five steps
        off = run(False)
        for a, b in zip(on, off):
            self.assertAlmostEqual(a, b, delta=1e-4 * max(1.0, abs(b)))


class Example(unittest.TestCase):
    def test_training_example_runs(self):
        # apps/examples/torch/train_cnn.py, a few steps: both runs start from the same model, so the
        # first loss (a forward only) is the same bit for bit; convbwd served every convolution.
        script = os.path.join(os.path.dirname(__file__), "..", "..", "apps", "examples", "torch", "train_cnn.py")
        with tempfile.TemporaryDirectory() as tmp:
            r = subprocess.run([sys.executable, script, "--device", str(DEVICE), "--steps", "4", "--batch", "8",
                                "--samples", "64", "--warmup", "1", "--no-noise-run", "--out", tmp], capture_output=True, text=True,
                               timeout=600)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            with open(os.path.join(tmp, "curves.json")) as f:
                j = json.load(f)
        on, off = j["convbwd"], j["pytorch"]
        self.assertEqual(on["losses"][0], off["losses"][0])
        self.assertGreater(on["stats"]["served"], 0)
        self.assertEqual(on["stats"]["fallback"], 0, on["stats"])
        self.assertEqual(off["stats"]["served"], 0)


if __name__ == "__main__":
    unittest.main()
