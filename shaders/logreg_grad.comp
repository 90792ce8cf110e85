#version 450

// logreg_grad: pass 1 of a full-batch gradient-descent step of logistic
// regression (pass 2 is logreg_update). Each workgroup sums, over its block
// of ROWS*WG consecutive samples, the gradient of the cross-entropy with
// respect to w and b and the loss itself, and writes the sums to its slot
// in partial. Dispatch ceil(m / (ROWS*WG)) workgroups: every invocation
// handles at most ROWS samples, so no loop grows with m.
//
//   x       : m rows of d features, row-major (read-only)
//   y       : m labels, 0 or 1 (read-only)
//   w       : d weights (read-only here)
//   b[0]    : bias (read-only here)
//   partial : per workgroup g, STRIDE floats from g*STRIDE: the d gradient
//             sums, then at MAX_D the bias gradient sum, at MAX_D+1 the loss
//             sum (write-only)
//
// Push constants: m samples, d features. d must not exceed MAX_D; larger
// values are clamped, which is wrong for the caller's data, so hosts check d.

const uint WG = 256;
const uint ROWS = 16;
const uint MAX_D = 16;
const uint STRIDE = MAX_D + 2;

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Y { float y[]; };
layout(std430, set = 0, binding = 2) readonly buffer W { float w[]; };
layout(std430, set = 0, binding = 3) readonly buffer Bias { float b[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Partial { float partial[]; };

layout(push_constant) uniform Push {
    uint m;
    uint d;
} pc;

shared float s[WG];

// reduce sums v over the workgroup and returns the total to every
// invocation. It must be called from uniform control flow; it ends with a
// barrier, so the next call may reuse s.
float reduce(float v) {
    uint lid = gl_LocalInvocationID.x;
    s[lid] = v;
    barrier();
    for (uint stride = WG / 2; stride > 0; stride >>= 1) {
        if (lid < stride) {
            s[lid] += s[lid + stride];
        }
        barrier();
    }
    float total = s[0];
    barrier();
    return total;
}

void main() {
    uint lid = gl_LocalInvocationID.x;
    uint g = gl_WorkGroupID.x;
    uint m = pc.m;
    uint d = min(pc.d, MAX_D);

    float wl[MAX_D];
    float gw[MAX_D];
    for (uint k = 0; k < MAX_D; ++k) {
        wl[k] = 0.0;
        gw[k] = 0.0;
    }
    for (uint k = 0; k < d; ++k) {
        wl[k] = w[k];
    }
    float bias = b[0];
    float gb = 0.0;
    float l = 0.0;

    // Consecutive invocations read consecutive rows.
    uint first = g * (ROWS * WG);
    for (uint r = 0; r < ROWS; ++r) {
        uint i = first + r * WG + lid;
        if (i >= m) {
            break;
        }
        uint row = i * pc.d;
        float z = bias;
        for (uint k = 0; k < d; ++k) {
            z += wl[k] * x[row + k];
        }
        float prob = 1.0 / (1.0 + exp(-z));
        float diff = prob - y[i];
        for (uint k = 0; k < d; ++k) {
            gw[k] += diff * x[row + k];
        }
        gb += diff;
        float pl = clamp(prob, 1e-7, 1.0 - 1e-7);
        l -= y[i] * log(pl) + (1.0 - y[i]) * log(1.0 - pl);
    }

    uint slot = g * STRIDE;
    for (uint k = 0; k < d; ++k) {
        float t = reduce(gw[k]);
        if (lid == 0) {
            partial[slot + k] = t;
        }
    }
    float tb = reduce(gb);
    float tl = reduce(l);
    if (lid == 0) {
        partial[slot + MAX_D] = tb;
        partial[slot + MAX_D + 1] = tl;
    }
}
