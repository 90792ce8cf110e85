#version 450

// Test shader for package algorithm: a uniform block at set 0, binding 1,
// which vkflow does not support (it binds storage buffers only).
//
// Rebuild with:
//
//   glslc --target-env=vulkan1.2 -O -o algorithm/testdata/uniform.spv algorithm/testdata/uniform.comp

layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) buffer Data { float data[]; };
layout(std140, set = 0, binding = 1) uniform Params { vec4 scale; } params;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= data.length()) {
        return;
    }
    data[i] *= params.scale.x;
}
