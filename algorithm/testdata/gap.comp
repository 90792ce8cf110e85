#version 450

// Test shader for package algorithm: storage buffers at set 0, bindings 0
// and 2, with binding 1 missing; vkflow needs bindings 0..n-1.
//
// Rebuild with:
//
//   glslc --target-env=vulkan1.2 -O -o algorithm/testdata/gap.spv algorithm/testdata/gap.comp

layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { float o[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= o.length()) {
        return;
    }
    o[i] = a[i];
}
