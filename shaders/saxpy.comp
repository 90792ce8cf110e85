#version 450

// saxpy: BLAS-style y := alpha * x + y, updating y in place.
// The length of y sets the number of elements; invocations past it exit.

layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) buffer Y { float y[]; };

layout(push_constant) uniform Push {
    float alpha;
} p;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= y.length()) {
        return;
    }
    y[i] = p.alpha * x[i] + y[i];
}
