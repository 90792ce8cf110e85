// Package render is a differentiable soft rasterizer on two queues:
// triangles [N, 3, 2] with colours [N, 4] become a premultiplied RGBA
// image [H, W, 4], each pixel covered by sigmoid(d / sigma) of its signed
// distance d to each triangle's edges, the triangles composited with
// "over" in index order (docs/RENDERING.md has the formula, the queues
// and the memory).
//
// SoftRender records the render on an ops.Tape: batches of triangles are
// rasterized into layers on one logical queue (op soft_raster) while the
// layers are blended over the image on another (op over), and Tape.Grad
// differentiates it into a backward graph that also runs on two queues:
// the blender's VJPs walk the layers back to front, and each layer's
// rasterizer VJP (op soft_raster_vjp) turns its cotangent into gradients
// of its triangles with per-workgroup then per-triangle sums in a fixed
// order, no float atomics: the gradients are the same bits at every run.
// Record is the forward-only render with a ring of layers, the rasterizer
// a bounded number of layers ahead of the blender.
//
// The ops register by name when the package is linked (package ops
// imports it), so C and Python call them as any op; Python's
// vkflow.torch.soft_render is the render as a PyTorch function.
package render
