#version 450

// logreg: one full-batch gradient-descent step of logistic regression.
//
// Dispatch exactly one workgroup (1, 1, 1). Every invocation walks the
// samples i = lid, lid + 256, ... and accumulates its share of the gradient
// and of the loss; a shared-memory tree reduction then sums the shares, and
// invocation 0 applies the update.
//
//   x    : m rows of d features, row-major
//   y    : m labels, 0 or 1
//   w    : d weights, updated in place
//   b[0] : bias, updated in place
//   loss : loss[0] = mean binary cross-entropy under the weights read
//          before this step's update
//
// Push constants: m samples, d features, learning rate lr. d must not exceed
// MAX_D; larger values are clamped to MAX_D, which is wrong for the caller's
// data, so hosts must check d first. x's rows are laid out with stride d.

const uint WG = 256;
const uint MAX_D = 16;

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Y { float y[]; };
layout(std430, set = 0, binding = 2) buffer W { float w[]; };
layout(std430, set = 0, binding = 3) buffer Bias { float b[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Loss { float loss[]; };

layout(push_constant) uniform Push {
    uint m;
    uint d;
    float lr;
} pc;

shared float s[WG];

// reduce sums v over the workgroup and returns the total to every
// invocation. It must be called from uniform control flow. It ends with a
// barrier, so the next call may reuse s, and every invocation's earlier reads
// of w and b happen before any invocation returns from it.
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
    uint m = pc.m;
    uint d = min(pc.d, MAX_D);

    // Private copies of the weights as they were before this step.
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

    for (uint i = lid; i < m; i += WG) {
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

    // Reduce one component at a time. The barriers inside reduce() also
    // order every invocation's reads of w and b before the writes below.
    float gsum[MAX_D];
    for (uint k = 0; k < d; ++k) {
        gsum[k] = reduce(gw[k]);
    }
    float gbsum = reduce(gb);
    float lsum = reduce(l);

    barrier();
    if (lid == 0) {
        if (m == 0) {
            // No samples: no gradient; leave w and b as they are.
            loss[0] = 0.0;
            return;
        }
        float fm = float(m);
        for (uint k = 0; k < d; ++k) {
            w[k] -= pc.lr * gsum[k] / fm;
        }
        b[0] -= pc.lr * gbsum / fm;
        loss[0] = lsum / fm;
    }
}
