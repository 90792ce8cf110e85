#version 450

// logreg_update: pass 2 of a full-batch gradient-descent step of logistic
// regression (pass 1 is logreg_grad). One workgroup sums the groups partial
// slots that pass 1 wrote and applies the update. Every invocation adds
// ceil(groups / WG) slots, then a shared-memory tree sums the invocations.
//
//   partial : groups slots of STRIDE floats, as logreg_grad writes them
//             (read-only)
//   w       : d weights, updated in place
//   b[0]    : bias, updated in place
//   loss    : loss[0] = mean binary cross-entropy under the weights read
//             by pass 1, before this update (write-only)
//
// Push constants: m samples (at least 1), d features (at most MAX_D),
// learning rate lr, groups (pass 1's workgroup count). Dispatch (1, 1, 1).

const uint WG = 256;
const uint MAX_D = 16;
const uint STRIDE = MAX_D + 2;

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer Partial { float partial[]; };
layout(std430, set = 0, binding = 1) buffer W { float w[]; };
layout(std430, set = 0, binding = 2) buffer Bias { float b[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Loss { float loss[]; };

layout(push_constant) uniform Push {
    uint m;
    uint d;
    float lr;
    uint groups;
} pc;

shared float s[WG];

// reduce sums v over the workgroup and returns the total to every
// invocation; called from uniform control flow, it ends with a barrier.
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

// column sums component k of every slot this invocation owns, then over
// the workgroup.
float column(uint k) {
    float v = 0.0;
    for (uint g = gl_LocalInvocationID.x; g < pc.groups; g += WG) {
        v += partial[g * STRIDE + k];
    }
    return reduce(v);
}

void main() {
    uint lid = gl_LocalInvocationID.x;
    uint d = min(pc.d, MAX_D);
    float fm = float(max(pc.m, 1u));
    float scale = pc.lr / fm;
    for (uint k = 0; k < d; ++k) {
        float t = column(k);
        if (lid == 0) {
            w[k] -= scale * t;
        }
    }
    float tb = column(MAX_D);
    float tl = column(MAX_D + 1);
    if (lid == 0) {
        b[0] -= scale * tb;
        loss[0] = tl / fm;
    }
}
