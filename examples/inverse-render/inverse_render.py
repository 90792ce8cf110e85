"""Inverse rendering with vkflow's soft rasterizer (docs/RENDERING.md).

A target picture is made of triangles. Starting from random triangles (positions and colours), Adam
(torch.optim) moves them until their render matches the target. Every step renders and differentiates
on the Vulkan device through vkflow.torch.soft_render: layers rasterized on one queue, blended on
another, gradients back to the vertices and colours.

Writes target.png, start.png and result.png (composited over white) and loss.png (the loss per step, log
scale) into --out, and exits 1 unless the result reaches the stated PSNR (see --help).

--check runs two small recoveries with known answers instead: one triangle's sub-pixel translation (to
0.05 px) and the colours of triangles at fixed positions (to an image MSE under 1e-5). --quick is a
small, fast version of the demo. VKFLOW_RENDER_REF=1 renders with the plain PyTorch implementation of
the formula instead (python/tests/render_ref.py), for comparison.
"""

import argparse
import math
import os
import struct
import sys
import time
import zlib

import numpy as np
import torch

import vkflow.torch as vt

# The PSNR (dB, over white, against the target) the demo must reach.
PSNR_GOAL = 22.0
PSNR_GOAL_QUICK = 24.0


def renderer():
    """The render function: vkflow's, or the reference's with VKFLOW_RENDER_REF=1."""
    if os.environ.get("VKFLOW_RENDER_REF") == "1":
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path.insert(0, os.path.join(here, "..", "..", "python", "tests"))
        from render_ref import soft_render_ref  # noqa: E402 (only when asked for)
        return lambda tri, rgba, size, sigma, batch: soft_render_ref(tri, rgba, size, sigma)
    return lambda tri, rgba, size, sigma, batch: vt.soft_render(tri, rgba, size, sigma=sigma, batch=batch)


render = renderer()


# --- PNG files without PIL ----------------------------------------------------------------

def write_png(path, rgb):
    """rgb: [H, W, 3] floats in [0, 1] -> an 8-bit PNG."""
    a = (np.clip(np.asarray(rgb, dtype=np.float64), 0, 1) * 255 + 0.5).astype(np.uint8)
    h, w, _ = a.shape
    raw = b"".join(b"\x00" + a[i].tobytes() for i in range(h))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))
    with open(path, "wb") as f:
        f.write(png)


def over_white(img):
    """A premultiplied RGBA image composited over white, as numpy RGB."""
    img = img.detach().double().cpu().numpy()
    return img[..., :3] + (1 - img[..., 3:4])


def plot_loss(path, losses, width=480, height=260):
    """The loss per step on a log scale, as a PNG (axes, a grid line per decade)."""
    canvas = np.ones((height, width, 3))
    left, right, top, bottom = 40, width - 10, 10, height - 25
    logs = np.log10(np.maximum(np.asarray(losses, dtype=np.float64), 1e-300))
    lo, hi = math.floor(logs.min()), math.ceil(logs.max())
    if hi == lo:
        hi = lo + 1

    def y_of(v):
        return bottom - (v - lo) / (hi - lo) * (bottom - top)
    for dec in range(lo, hi + 1):  # decade grid lines
        canvas[int(round(y_of(dec))), left:right] = 0.85
    canvas[top:bottom + 1, left] = 0
    canvas[bottom, left:right + 1] = 0
    n = len(logs)
    xs = left + np.arange(n) / max(n - 1, 1) * (right - left)
    ys = y_of(logs)
    for i in range(n - 1):  # the curve, sampled densely between points
        for t in np.linspace(0, 1, 8):
            x = int(round(xs[i] + t * (xs[i + 1] - xs[i])))
            y = int(round(ys[i] + t * (ys[i + 1] - ys[i])))
            canvas[max(y - 1, 0):y + 1, x] = (0.1, 0.3, 0.8)
    write_png(path, canvas)


# --- scenes -------------------------------------------------------------------------------

def random_scene(n, size, gen, dtype=torch.float32):
    """n triangles of a few to a third of the image, colours and opacities in (0.3, 0.95)."""
    h, w = size
    scale = torch.tensor([w, h], dtype=torch.float64)
    centre = (0.1 + 0.8 * torch.rand(n, 1, 2, generator=gen, dtype=torch.float64)) * scale
    r = (0.08 + 0.25 * torch.rand(n, 1, 1, generator=gen, dtype=torch.float64)) * min(h, w)
    ang = torch.rand(n, 1, generator=gen, dtype=torch.float64) * 2 * math.pi \
        + torch.tensor([0.0, 2.1, 4.2], dtype=torch.float64) \
        + 0.4 * torch.rand(n, 3, generator=gen, dtype=torch.float64)
    tri = centre + r * torch.stack([torch.cos(ang), torch.sin(ang)], -1)
    rgba = 0.3 + 0.65 * torch.rand(n, 4, generator=gen, dtype=torch.float64)
    return tri.to(dtype), rgba.to(dtype)


def logit(p):
    return torch.log(p / (1 - p))


def progress(step, steps, loss, width=30):
    done = int(width * step / steps)
    sys.stdout.write("\r[%s%s] step %4d/%d  loss %.3e" % ("#" * done, "." * (width - done), step, steps, loss))
    sys.stdout.flush()


def psnr(a, b):
    mse = float(np.mean((a - b) ** 2))
    return float("inf") if mse == 0 else 10 * math.log10(1 / mse)


# --- the demo -----------------------------------------------------------------------------

def demo(args):
    size = (args.size, args.size)
    target_tri, target_rgba = random_scene(args.tris, size, torch.Generator().manual_seed(args.seed))
    with torch.no_grad():
        target = render(target_tri, target_rgba, size, args.sigma, args.batch)
    start_tri, start_rgba = random_scene(args.tris, size, torch.Generator().manual_seed(args.seed + 1))
    tri = start_tri.clone().requires_grad_()
    col = logit(start_rgba.clamp(0.02, 0.98)).requires_grad_()  # colours through a sigmoid: in (0, 1)
    opt = torch.optim.Adam([{"params": [tri], "lr": args.size * 0.02}, {"params": [col], "lr": 0.05}])
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, args.steps, eta_min=0.0)
    os.makedirs(args.out, exist_ok=True)
    with torch.no_grad():
        write_png(os.path.join(args.out, "target.png"), over_white(target))
        write_png(os.path.join(args.out, "start.png"),
                  over_white(render(tri, torch.sigmoid(col), size, args.sigma, args.batch)))
    print("inverse rendering: %d triangles, %dx%d, sigma %g, %d steps of Adam" % (args.tris, size[0], size[1],
                                                                                 args.sigma, args.steps))
    losses = []
    targets = {args.sigma: target}
    t0 = time.perf_counter()
    for step in range(1, args.steps + 1):
        opt.zero_grad()
        # Coarse to fine: softer edges first (their gradients reach pixels farther away), the target's
        # sigma for the last half.
        frac = step / args.steps
        sigma = args.sigma * (4 if frac <= 0.25 else 2 if frac <= 0.5 else 1)
        img = render(tri, torch.sigmoid(col), size, sigma, args.batch)
        if sigma not in targets:
            with torch.no_grad():
                targets[sigma] = render(target_tri, target_rgba, size, sigma, args.batch)
        goal = targets[sigma]
        loss = (img - goal).square().mean()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss))
        progress(step, args.steps, losses[-1])
    took = time.perf_counter() - t0
    print()
    with torch.no_grad():
        result = render(tri, torch.sigmoid(col), size, args.sigma, args.batch)
    write_png(os.path.join(args.out, "result.png"), over_white(result))
    plot_loss(os.path.join(args.out, "loss.png"), losses)
    got = psnr(over_white(result), over_white(target))
    start = psnr(over_white(render(start_tri, start_rgba, size, args.sigma, args.batch)), over_white(target))
    goal = PSNR_GOAL_QUICK if args.quick else PSNR_GOAL
    print("%.1f ms a step (forward and backward); PSNR over white: start %.1f dB, result %.1f dB (goal %.0f dB)"
          % (took / args.steps * 1e3, start, got, goal))
    print("wrote %s/{target,start,result,loss}.png" % args.out)
    if not got >= goal:
        print("FAIL: the result's PSNR %.1f dB is below %.0f dB" % (got, goal))
        return 1
    return 0


# --- the checks with known answers --------------------------------------------------------

def check_translation(steps=300):
    """One triangle, translated by a known sub-pixel offset: recover the offset."""
    size, sigma = (32, 32), 1.0
    base = torch.tensor([[[8.3, 9.1], [24.6, 12.2], [13.4, 25.7]]], dtype=torch.float64)
    rgba = torch.tensor([[0.9, 0.4, 0.2, 0.85]], dtype=torch.float64)
    true = torch.tensor([1.37, -0.81], dtype=torch.float64)
    with torch.no_grad():
        target = render(base + true, rgba, size, sigma, 8)
    v = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([v], lr=0.1)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps, eta_min=0.0)
    for _ in range(steps):
        opt.zero_grad()
        loss = (render(base + v, rgba, size, sigma, 8) - target).square().sum()
        loss.backward()
        opt.step()
        sched.step()
    err = float((v.detach() - true).abs().max())
    print("translation: found (%.4f, %.4f), true (%.2f, %.2f): off by %.4f px (goal < 0.05)"
          % (float(v[0]), float(v[1]), float(true[0]), float(true[1]), err))
    return err < 0.05


def check_colours(steps=300):
    """Triangles at fixed positions: recover their colours and opacities."""
    size, sigma = (32, 32), 1.0
    tri, true = random_scene(5, size, torch.Generator().manual_seed(3), torch.float64)
    with torch.no_grad():
        target = render(tri, true, size, sigma, 8)
    col = torch.zeros(5, 4, dtype=torch.float64, requires_grad=True)  # sigmoid(0) = 0.5
    opt = torch.optim.Adam([col], lr=0.1)
    for _ in range(steps):
        opt.zero_grad()
        loss = (render(tri, torch.sigmoid(col), size, sigma, 8) - target).square().mean()
        loss.backward()
        opt.step()
    loss = float(loss)
    print("colours: image MSE %.2e (goal < 1e-5), largest colour error %.2e"
          % (loss, float((torch.sigmoid(col) - true).abs().max())))
    return loss < 1e-5


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                epilog="The demo must reach a PSNR of %.0f dB over white (--quick: %.0f dB)."
                                       % (PSNR_GOAL, PSNR_GOAL_QUICK))
    p.add_argument("--steps", type=int, default=None, help="Adam steps (default 400; --quick 150)")
    p.add_argument("--size", type=int, default=None, help="image width and height (default 96; --quick 48)")
    p.add_argument("--tris", type=int, default=None, help="triangles (default 12; --quick 6)")
    p.add_argument("--sigma", type=float, default=1.0, help="soft edge width in pixels")
    p.add_argument("--batch", type=int, default=8, help="triangles per layer")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="inverse-render-out", help="folder for the PNGs")
    p.add_argument("--check", action="store_true", help="run the recoveries with known answers")
    p.add_argument("--quick", action="store_true", help="a small, fast demo")
    args = p.parse_args(argv)
    if args.check:
        ok = check_translation() & check_colours()
        print("check:", "OK" if ok else "FAIL")
        return 0 if ok else 1
    quick = {"steps": 150, "size": 48, "tris": 6}
    full = {"steps": 400, "size": 96, "tris": 12}
    for k, v in (quick if args.quick else full).items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    return demo(args)


if __name__ == "__main__":
    sys.exit(main())
