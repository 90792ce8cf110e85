#version 450

// sum8: o[i] = a0[i] + a1[i] + ... + a7[i] over float elements: the join
// of the diamond benchmarks (bench/graph_test.go), which reads all eight
// branches. Compiled like shaders/: glslc --target-env=vulkan1.2 -O.
// The output length sets the number of elements; invocations past it exit.

layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer A0 { float a0[]; };
layout(std430, set = 0, binding = 1) readonly buffer A1 { float a1[]; };
layout(std430, set = 0, binding = 2) readonly buffer A2 { float a2[]; };
layout(std430, set = 0, binding = 3) readonly buffer A3 { float a3[]; };
layout(std430, set = 0, binding = 4) readonly buffer A4 { float a4[]; };
layout(std430, set = 0, binding = 5) readonly buffer A5 { float a5[]; };
layout(std430, set = 0, binding = 6) readonly buffer A6 { float a6[]; };
layout(std430, set = 0, binding = 7) readonly buffer A7 { float a7[]; };
layout(std430, set = 0, binding = 8) writeonly buffer Out { float o[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= o.length()) {
        return;
    }
    o[i] = ((a0[i] + a1[i]) + (a2[i] + a3[i])) + ((a4[i] + a5[i]) + (a6[i] + a7[i]));
}
