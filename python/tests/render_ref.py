"""A straightforward PyTorch implementation of the soft rasterizer's
formula (docs/RENDERING.md, issue 30), differentiable by autograd in
float32 and float64: the reference vkflow.torch.soft_render is checked
against (test_render.py), benchmarked beside (bench/render.sh) and can
stand in for (examples/inverse-render, VKFLOW_RENDER_REF=1).

It is what a user would write: the signed distances vectorized over all
triangles and pixels ([N, H, W] tensors), then a Python loop that
composites the triangles in order. ``python3 render_ref.py`` runs its
self-check (gradcheck in float64; no NaN with a vertex on a pixel centre
or a degenerate edge).
"""

import torch


def pixel_centres(h, w, dtype):
    """[H, W, 2]: the (x, y) of each pixel's centre, (j + 0.5, i + 0.5)."""
    ys = torch.arange(h, dtype=dtype) + 0.5
    xs = torch.arange(w, dtype=dtype) + 0.5
    py, px = torch.meshgrid(ys, xs, indexing="ij")
    return torch.stack([px, py], -1)


def signed_distance(tri, p):
    """[N, H, W]: the distance from each pixel centre p ([H, W, 2]) to the
    nearest point of each triangle's three edge segments, positive where p
    is inside or on the triangle, negative outside."""
    p = p[None]                                    # [1, H, W, 2]
    dists, sides = [], []
    for k in range(3):
        a = tri[:, k, None, None, :]               # [N, 1, 1, 2]
        b = tri[:, (k + 1) % 3, None, None, :]
        e = b - a
        ap = p - a                                 # [N, H, W, 2]
        len2 = (e * e).sum(-1)                     # [N, 1, 1]
        # A degenerate edge (a == b) has e = 0, so the dot product is 0:
        # t = 0 and the distance is |p - a|, with no division by zero.
        safe = torch.where(len2 > 0, len2, torch.ones_like(len2))
        t = ((ap * e).sum(-1) / safe).clamp(0, 1)  # [N, H, W]
        q = ap - t[..., None] * e                  # p minus its nearest point on the edge
        # vector_norm's gradient at 0 is 0 (never NaN): a vertex on a pixel centre.
        dists.append(torch.linalg.vector_norm(q, dim=-1))
        # The edge function (its sign only: no gradient needed).
        ed, apd = e.detach(), ap.detach()
        sides.append(ed[..., 0] * apd[..., 1] - ed[..., 1] * apd[..., 0])
    # The nearest edge: one of the three (the first on a tie), the gradient
    # going to that one.
    d = torch.stack(dists).min(0).values           # [N, H, W]
    s = torch.stack(sides)                         # [3, N, H, W]
    inside = (s >= 0).all(0) | (s <= 0).all(0)     # zero counts as either sign
    return torch.where(inside, d, -d)


def soft_render_ref(tri, rgba, size, sigma=1.0):
    """tri [N, 3, 2] (vertex x, y in pixels), rgba [N, 4] (straight colour
    and opacity) -> [H, W, 4] premultiplied RGBA, the triangles composited
    in index order with "over" onto a transparent image."""
    h, w = size
    dtype = tri.dtype
    d = signed_distance(tri, pixel_centres(h, w, dtype))
    cover = rgba[:, 3, None, None] * torch.sigmoid(d / sigma)  # A: [N, H, W]
    one = torch.ones(1, dtype=dtype)
    img = torch.zeros(h, w, 4, dtype=dtype)
    for i in range(tri.shape[0]):
        a = cover[i][..., None]                    # [H, W, 1]
        src = torch.cat([rgba[i, :3], one])        # (c, 1): premultiplied by a below
        img = src * a + img * (1 - a)
    return img


def _self_check():
    f64 = torch.float64
    # gradcheck away from the points where d is not differentiable (d = 0
    # at a pixel centre, a degenerate edge: a segment grows one way only).
    tri = torch.tensor([[[1.13, 1.27], [5.2, 2.1], [2.3, 5.4]],
                        [[0.6, 0.8], [4.4, 1.3], [3.1, 3.7]],
                        [[2.2, 0.3], [6.1, 4.4], [4.6, 4.1]]],
                       dtype=f64, requires_grad=True)
    rgba = torch.tensor([[0.2, 0.4, 0.6, 0.8], [0.9, 0.1, 0.3, 0.5], [0.3, 0.7, 0.2, 0.6]],
                        dtype=f64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, b: soft_render_ref(a, b, (5, 6), 0.7), (tri, rgba))
    # A vertex exactly on a pixel centre (d = 0 there, and on the edges
    # through it), a degenerate edge and a point-like triangle: finite
    # image and gradients, in both dtypes.
    for dtype in (torch.float32, f64):
        tri = torch.tensor([[[2.5, 1.5], [6.5, 2.5], [3.5, 5.5]],
                            [[1.5, 1.5], [1.5, 1.5], [4.5, 4.5]],
                            [[3.5, 3.5], [3.5, 3.5], [3.5, 3.5]]], dtype=dtype, requires_grad=True)
        rgba = torch.tensor([[0.2, 0.4, 0.6, 0.8], [0.9, 0.1, 0.3, 0.5], [0.5, 0.5, 0.5, 0.5]],
                            dtype=dtype, requires_grad=True)
        img = soft_render_ref(tri, rgba, (8, 8))
        assert img.dtype == dtype and img.shape == (8, 8, 4)
        img.square().sum().backward()
        for x in (img, tri.grad, rgba.grad):
            assert bool(torch.isfinite(x).all()), (dtype, x)
        # The pixel (row 1, column 2) has the first triangle's vertex at its
        # centre: d = 0 there, so D = 1/2.
        d = signed_distance(tri.detach(), pixel_centres(8, 8, dtype))
        assert float(d[0, 1, 2]) == 0.0 and float(d[2, 3, 3]) == 0.0
    # One opaque-ish triangle far inside: a pixel deep inside gets its colour.
    tri = torch.tensor([[[-50.0, -50.0], [150.0, -50.0], [-50.0, 150.0]]], dtype=f64)
    img = soft_render_ref(tri, torch.tensor([[0.2, 0.4, 0.6, 1.0]], dtype=f64), (4, 4))
    assert torch.allclose(img[1, 1], torch.tensor([0.2, 0.4, 0.6, 1.0], dtype=f64))
    print("render_ref: ok (gradcheck, no NaN at d = 0 or on degenerate edges)")


if __name__ == "__main__":
    _self_check()
