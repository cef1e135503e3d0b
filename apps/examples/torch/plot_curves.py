"""Draws the loss curves of train_cnn.py's curves.json (override on and off) into a PNG.

    python apps/examples/torch/plot_curves.py train-cpu/curves.json [out.png]

Needs matplotlib only (the project's .venv has it), not PyTorch.
"""
import json
import os
import sys


def plot(json_path, png_path=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(json_path) as f:
        r = json.load(f)
    png_path = png_path or os.path.splitext(json_path)[0] + ".png"
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=120)
    runs = (("pytorch", "PyTorch kernels", "tab:blue"), ("convbwd", "convbwd override", "tab:orange"))
    for key, label, color in runs:
        losses = r[key]["losses"]
        ax.plot(range(len(losses)), losses, color=color, alpha=0.35, linewidth=0.8)
        k = r.get("smoothing_window", 1)
        sm = [sum(losses[max(0, i - k + 1):i + 1]) / len(losses[max(0, i - k + 1):i + 1]) for i in range(len(losses))]
        ax.plot(range(len(sm)), sm, color=color, linewidth=1.8,
                label=f"{label}: {r[key]['ms_per_step']:.1f} ms/step")
    if r.get("noise"):
        ax.plot(range(len(r["noise"]["losses"])), r["noise"]["losses"], color="tab:gray", alpha=0.5, linewidth=0.8,
                linestyle=":", label="PyTorch kernels, weights perturbed by 1e-6 (noise floor)")
    ax.set_xlabel("step")
    ax.set_ylabel("training loss (cross-entropy)")
    ax.set_title(f"{r['model']}, batch {r['batch']}, {r['device_name']}, torch {r['torch']}\n"
                 f"largest difference of the smoothed curves {r['max_smoothed_loss_diff']:.3f}"
                 + (f" (noise floor {r['noise']['max_smoothed_loss_diff']:.3f})" if r.get("noise") else ""), fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(png_path)
    plt.close(fig)
    return png_path


if __name__ == "__main__":
    print(plot(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None))
