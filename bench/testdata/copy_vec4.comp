#version 450

// copy_vec4: o[i] = a[i] over vec4 elements, the bandwidth reference of the
// reduction benchmark (bench/baseline/ops.c, copy_16m): it reads and writes
// every byte once. Compiled like shaders/: glslc --target-env=vulkan1.2 -O.
// The output length sets the number of elements; invocations past it exit.

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer A { vec4 a[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { vec4 o[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= o.length()) {
        return;
    }
    o[i] = a[i];
}
