"""Trains a small CNN twice from one seed, with convbwd serving aten::convolution_backward and
with PyTorch's own kernels, and writes both loss curves (JSON, and a PNG where matplotlib is
importable; plot_curves.py draws it from the JSON otherwise).

    python apps/examples/torch/train_cnn.py --device cpu --steps 300 --out train-cpu

The model is torchvision's ResNet-18 definition (no weights fetched: random init), or with
--model small, or where torchvision is missing, a four-layer CNN defined here. The data is
generated: ten classes of smooth random 32x32 textures, each sample one of them shifted at random
and noised (the same from a seed everywhere, nothing downloaded; make_data).

Times each step (after --warmup steps, synchronized on CUDA) and prints the table scripts/
gpu_torch.sh shows: time per step on/off, final losses, the largest difference of the curves.
On CUDA, TF32 is off for both runs unless --tf32 (convbwd computes in float32).

Two float32 runs of SGD drift apart however right both are: the gradients differ in their last
bits (another summation order) and training amplifies that step by step. So the noise floor is
measured too (unless --no-noise-run): PyTorch's kernels again, from the same weights each scaled
by (1 + 1e-6 * N(0, 1)); the override's curve should differ from the stock one by no more than
that run does.
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import convbwd.torch as cbt


def make_data(n, classes, size, gen):
    """Textures: one smooth random pattern shared by every class plus half as much of a pattern of
    the class's own (low-frequency noise, upsampled), normalized; a sample = its class's texture
    circularly shifted anywhere, plus noise of 1.5 times its spread. A few hundred steps of
    ResNet-18 take the loss from 2.3 to about 0.2."""
    def smooth_noise(count):
        low = torch.randn(count, 3, size // 8, size // 8, generator=gen)
        return F.interpolate(low, size=(size, size), mode="bicubic", align_corners=False)

    templates = smooth_noise(1) + 0.5 * smooth_noise(classes)
    templates = (templates - templates.mean()) / templates.std()
    labels = torch.randint(0, classes, (n,), generator=gen)
    shifts = torch.randint(0, size, (n, 2), generator=gen)
    images = torch.empty(n, 3, size, size)
    for i in range(n):
        images[i] = torch.roll(templates[labels[i]], shifts=(int(shifts[i, 0]), int(shifts[i, 1])), dims=(1, 2))
    images += 1.5 * torch.randn(images.shape, generator=gen)
    return images, labels


class SmallCNN(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.Conv2d(64, 64, 3, padding=1, groups=4), nn.BatchNorm2d(64), nn.ReLU(),
            nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.BatchNorm2d(128), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, classes))

    def forward(self, x):
        return self.body(x)


def make_model(name, classes):
    if name == "resnet18":
        try:
            import torchvision
            return torchvision.models.resnet18(weights=None, num_classes=classes), "torchvision resnet18"
        except ImportError as e:
            print(f"torchvision not importable ({e}): using the small CNN", file=sys.stderr)
    return SmallCNN(classes), "small CNN (4 conv layers, defined in train_cnn.py)"


def train(args, on, device, perturb=0.0):
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    images, labels = make_data(args.samples, 10, args.image, gen)
    model, model_name = make_model(args.model, 10)
    if perturb:
        noise = torch.Generator().manual_seed(args.seed + 2)
        with torch.no_grad():
            for p in model.parameters():
                p.mul_(1 + perturb * torch.randn(p.shape, generator=noise))
    model = model.to(device)
    fmt = torch.channels_last if args.channels_last else torch.contiguous_format
    model = model.to(memory_format=fmt)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    order = torch.Generator().manual_seed(args.seed + 1)
    losses, times = [], []
    cbt.reset_stats()
    if on:
        cbt.enable()
    try:
        model.train()
        for step in range(args.steps):
            idx = torch.randint(0, args.samples, (args.batch,), generator=order)
            x = images[idx].to(device).contiguous(memory_format=fmt)
            y = labels[idx].to(device)
            if device.type == "cuda":
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            if device.type == "cuda":
                torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
            losses.append(loss.item())
            if args.verbose and (step % 50 == 0 or step == args.steps - 1):
                print(f"  [{'convbwd' if on else 'pytorch'}] step {step:4d} loss {losses[-1]:.4f} "
                      f"{times[-1] * 1e3:.1f} ms", flush=True)
    finally:
        if on:
            cbt.disable()
    st = cbt.stats()
    timed = times[args.warmup:] or times
    return {"losses": losses, "ms_per_step": 1e3 * statistics.median(timed),
            "ms_per_step_mean": 1e3 * statistics.fmean(timed), "stats": st, "model": model_name}


def device_name(device):
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    model = "CPU"
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{model}, {torch.get_num_threads()} threads"


def smooth(xs, k):
    out, acc = [], 0.0
    for i, v in enumerate(xs):
        acc += v
        if i >= k:
            acc -= xs[i - k]
        out.append(acc / min(i + 1, k))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--samples", type=int, default=2048)
    ap.add_argument("--image", type=int, default=32)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--warmup", type=int, default=5, help="steps left out of the time per step")
    ap.add_argument("--model", choices=("resnet18", "small"), default="resnet18")
    ap.add_argument("--channels-last", action="store_true")
    ap.add_argument("--tf32", action="store_true", help="leave TF32 on for PyTorch's CUDA kernels")
    ap.add_argument("--out", default="train-out", help="folder for curves.json and curves.png")
    ap.add_argument("--no-noise-run", action="store_true", help="leave out the perturbed stock run")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = args.tf32
        torch.backends.cudnn.allow_tf32 = args.tf32
    os.makedirs(args.out, exist_ok=True)

    off = train(args, False, device)
    on = train(args, True, device)
    noise = None if args.no_noise_run else train(args, False, device, perturb=1e-6)
    k = max(1, args.steps // 20)

    def diffs(a, b):
        return (max(abs(x - y) for x, y in zip(a, b)),
                max(abs(x - y) for x, y in zip(smooth(a, k), smooth(b, k))))

    diff, sdiff = diffs(on["losses"], off["losses"])
    ndiff, nsdiff = diffs(noise["losses"], off["losses"]) if noise else (None, None)
    tail = max(1, args.steps // 10)
    result = {
        "device": str(device), "device_name": device_name(device), "torch": torch.__version__, "model": on["model"], "steps": args.steps, "batch": args.batch,
        "image": args.image, "channels_last": args.channels_last, "tf32": args.tf32 if device.type == "cuda" else None,
        "convbwd": {k_: v for k_, v in on.items() if k_ != "model"},
        "pytorch": {k_: v for k_, v in off.items() if k_ != "model"},
        "max_loss_diff": diff, "max_smoothed_loss_diff": sdiff, "smoothing_window": k,
        "noise": {"losses": noise["losses"], "perturbation": 1e-6, "max_loss_diff": ndiff,
                  "max_smoothed_loss_diff": nsdiff} if noise else None,
        "final_loss_convbwd": statistics.fmean(on["losses"][-tail:]),
        "final_loss_pytorch": statistics.fmean(off["losses"][-tail:]),
    }
    path = os.path.join(args.out, "curves.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    st = on["stats"]
    print(f"model: {on['model']}, {args.steps} steps of batch {args.batch} ({args.image}x{args.image}), "
          f"device {result['device_name']}, torch {torch.__version__}")
    print(f"convbwd served {st['served']} convolution backward calls, fell back on {st['fallback']}"
          + (": " + "; ".join(f"{n}x {r}" for r, n in st["reasons"].items()) if st["reasons"] else ""))
    print()
    print("| run | time per step (median) | final loss (mean of last 10%) |")
    print("|---|---|---|")
    print(f"| PyTorch kernels | {off['ms_per_step']:.2f} ms | {result['final_loss_pytorch']:.4f} |")
    print(f"| convbwd override | {on['ms_per_step']:.2f} ms | {result['final_loss_convbwd']:.4f} |")
    print(f"largest loss difference at one step: {diff:.4f}; of the curves smoothed over {k} steps: {sdiff:.4f}")
    if noise:
        print(f"noise floor (PyTorch's kernels, weights perturbed by 1e-6): {ndiff:.4f}; smoothed: {nsdiff:.4f}")
    print(f"wrote {path}")
    try:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import plot_curves
        print(f"wrote {plot_curves.plot(path, os.path.join(args.out, 'curves.png'))}")
    except ImportError as e:
        print(f"no PNG here ({e}): python apps/examples/torch/plot_curves.py {path}")
    ok = all(math.isfinite(v) for v in on["losses"] + off["losses"])
    return 0 if ok and st["served"] > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
