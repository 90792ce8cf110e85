#version 450

// Test shader for the reflector: a workgroup size from a specialization
// constant, specialization constants of each scalar kind, and a push
// constant block whose size depends on vector and array layout.
//
// Rebuild with:
//
//   glslc --target-env=vulkan1.2 -O -o spec.spv spec.comp
//   glslc --target-env=vulkan1.3 -O -o spec_vk13.spv spec.comp
//
// For Vulkan 1.2 (SPIR-V 1.5) glslc expresses the workgroup size as a
// specialization constant composite decorated BuiltIn WorkgroupSize; for
// Vulkan 1.3 (SPIR-V 1.6) it uses OpExecutionModeId LocalSizeId instead.

layout(local_size_x_id = 0, local_size_y = 4) in;

layout(constant_id = 1) const float SCALE = 2.0;
layout(constant_id = 2) const int N = 3;
layout(constant_id = 3) const bool FLAG = true;

layout(std430, set = 0, binding = 0) buffer Data { float data[]; };
layout(std140, set = 1, binding = 0) uniform Params { vec4 bias; } params;

layout(push_constant) uniform Push {
    vec4 v;       // offset 0, 16 bytes
    float f[3];   // offset 16, stride 4, 12 bytes
} pc;             // 28 bytes

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= data.length()) {
        return;
    }
    float acc = data[i] * SCALE + pc.v.x + params.bias.y;
    for (int k = 0; k < N; ++k) {
        acc += pc.f[k % 3];
    }
    if (FLAG) {
        acc = -acc;
    }
    data[i] = acc;
}
