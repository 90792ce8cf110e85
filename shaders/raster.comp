#version 450

// raster: rasterizes one batch of triangles into an RGBA layer, one
// invocation per pixel.
//
//   tri   : triangles, 3 vec4 each: (x0, y0, x1, y1), (x2, y2, -, -),
//           (r, g, b, a); vertices in pixel coordinates, multiples of 1/16 in
//           [0, 1024]. Every batch has count triangles, batch k starting at
//           triangle k*count.
//   batch : batch[0] = k, the batch to rasterize, a whole number in a float
//   layer : width*height vec4, row-major; receives, for each pixel, the
//           colour and alpha of the last triangle of the batch that covers
//           it, or (0, 0, 0, 0) where none does
//
// Coverage: the vertices are converted to fixed point with 4 fraction bits
// (exact, since they are multiples of 1/16) and tested against the pixel
// centre (x + 1/2, y + 1/2) with integer edge functions, so the result is
// exact and a CPU implementation of the same rule agrees on every pixel. A
// pixel is covered when the three edge functions have one sign (zero counts as
// both: edges are inclusive, there is no top-left rule); a triangle of zero
// area covers nothing. The [0, 1024] range keeps the products in 32 bits.
// A batch past the end of tri leaves the layer transparent.
//
// Every invocation walks the whole batch, first to last, and keeps the last
// hit: on lavapipe this branch-free loop over vec4 loads is about twice as
// fast as a loop from the last triangle that stops at the first hit.
//
// Push constants: uint width, uint height, uint count (12 bytes).
// Dispatch (ceil(width/16), ceil(height/16), 1).

layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, set = 0, binding = 0) readonly buffer Tri { vec4 tri[]; };
layout(std430, set = 0, binding = 1) readonly buffer Batch { float batch[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Layer { vec4 layer[]; };

layout(push_constant) uniform Push {
    uint width;
    uint height;
    uint count;
} p;

const uint STRIDE = 3; // vec4 per triangle

// edge is twice the signed area of the triangle (a, b, c); its sign says on
// which side of the line a→b the point c lies.
int edge(ivec2 a, ivec2 b, ivec2 c) {
    return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
}

void main() {
    uvec2 xy = gl_GlobalInvocationID.xy;
    if (xy.x >= p.width || xy.y >= p.height) {
        return;
    }
    ivec2 c = ivec2(xy) * 16 + 8;
    uint first = uint(batch[0]) * p.count;
    int hit = -1;
    if ((first + p.count) * STRIDE <= uint(tri.length())) {
        for (uint t = 0; t < p.count; t++) {
            uint base = (first + t) * STRIDE;
            ivec4 v01 = ivec4(round(tri[base] * 16.0));
            ivec2 v0 = v01.xy;
            ivec2 v1 = v01.zw;
            ivec2 v2 = ivec2(round(tri[base + 1].xy * 16.0));
            int w0 = edge(v1, v2, c);
            int w1 = edge(v2, v0, c);
            int w2 = edge(v0, v1, c);
            bool inside = (w0 >= 0 && w1 >= 0 && w2 >= 0) || (w0 <= 0 && w1 <= 0 && w2 <= 0);
            hit = inside && edge(v0, v1, v2) != 0 ? int(t) : hit;
        }
    }
    vec4 colour = vec4(0.0);
    if (hit >= 0) {
        colour = tri[(first + uint(hit)) * STRIDE + 2];
    }
    layer[xy.y * p.width + xy.x] = colour;
}
