#version 450

// Test shader for package algorithm: the workgroup size and two scalar
// constants are specialization constants.
//
//   o[i] = a[i] * SCALE + float(OFFSET)
//
// Rebuild with:
//
//   glslc --target-env=vulkan1.2 -O -o algorithm/testdata/spec.spv algorithm/testdata/spec.comp

layout(local_size_x_id = 0) in;

layout(constant_id = 1) const float SCALE = 1.0;
layout(constant_id = 2) const uint OFFSET = 0;

layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { float o[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= o.length()) {
        return;
    }
    o[i] = a[i] * SCALE + float(OFFSET);
}
