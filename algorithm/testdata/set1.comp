#version 450

// Test shader for package algorithm: a storage buffer in descriptor set 1,
// which vkflow does not support (it binds set 0 only).
//
// Rebuild with:
//
//   glslc --target-env=vulkan1.2 -O -o algorithm/testdata/set1.spv algorithm/testdata/set1.comp

layout(local_size_x = 64) in;

layout(std430, set = 1, binding = 0) buffer Data { float data[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= data.length()) {
        return;
    }
    data[i] *= 2.0;
}
