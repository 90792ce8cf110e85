#version 450

// add_vec4: element-wise o[i] = a[i] + b[i] over vec4 elements.
// The output length sets the number of elements; invocations past it exit.

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer A { vec4 a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { vec4 b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { vec4 o[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= o.length()) {
        return;
    }
    o[i] = a[i] + b[i];
}
