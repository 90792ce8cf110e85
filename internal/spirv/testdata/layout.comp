#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

// Test shader for the reflector, compiled for SPIR-V 1.0 so that storage
// buffers take the old form (Uniform storage class + BufferBlock), with a
// push constant block that exercises matrix, row-major, nested struct, bool
// and 64-bit member sizes.
//
// Rebuild with: glslc --target-env=vulkan1.0 -O -o layout.spv layout.comp

layout(local_size_x = 8, local_size_y = 4, local_size_z = 2) in;

layout(std430, set = 2, binding = 5) readonly buffer In { float src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { float dst[]; };
layout(std430, set = 0, binding = 3) buffer Both { uint count; float vals[]; };
layout(std140, set = 1, binding = 0) uniform Params { vec4 bias; } params;

struct Inner {
    vec3 a;   // offset 0
    float b;  // offset 12
};            // 16 bytes

layout(push_constant) uniform Push {
    mat3 m;                    // offset 0, 3 columns x MatrixStride 16 = 48
    layout(row_major) mat2x3 r;// offset 48, 3 rows x MatrixStride 8 = 24
    Inner inner;               // offset 80, 16
    bool flag;                 // offset 96, 4
    uint64_t big;              // offset 104, 8
} pc;                          // 112 bytes

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= dst.length()) {
        return;
    }
    vec3 v = pc.m * vec3(src[i]) + pc.inner.a * pc.inner.b;
    vec3 w = pc.r * v.xy;
    float s = v.x + w.y + params.bias.z + float(pc.big);
    if (pc.flag) {
        s = -s;
    }
    dst[i] = s;
    vals[i] += s;
    atomicAdd(count, 1u);
}
