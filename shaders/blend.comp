#version 450

// blend: composites a layer over an image with the "over" operator, in
// place:
//
//   dst.rgb = src.rgb * src.a + dst.rgb * (1 - src.a)
//   dst.a   = src.a + dst.a * (1 - src.a)
//
// src is straight (not premultiplied) colour and alpha, as raster writes it;
// dst accumulates premultiplied colour, so an image that starts transparent
// (all zero) ends as premultiplied RGBA. The length of dst (in vec4) sets the
// number of pixels; src must be at least as long; invocations past it exit.
// No push constants.

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer Src { vec4 src[]; };
layout(std430, set = 0, binding = 1) buffer Dst { vec4 dst[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= uint(dst.length())) {
        return;
    }
    vec4 s = src[i];
    vec4 d = dst[i];
    dst[i] = vec4(s.rgb * s.a + d.rgb * (1.0 - s.a), s.a + d.a * (1.0 - s.a));
}
