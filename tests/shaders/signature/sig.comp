#version 460
// tests/test_signature.py: bindings, push constants and spec constants by name. Each output
// reveals whether one named value reached the shader where the block's layout puts it.
//   glslang -V --target-env vulkan1.3 sig.comp -o sig.spv
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_bfloat16 : require
#extension GL_EXT_float_e4m3 : require
#extension GL_EXT_float_e5m2 : require

layout(local_size_x = 32, local_size_x_id = 0) in;
layout(constant_id = 1) const uint SHIFT = 0;           // dst gets (index << SHIFT) added

struct Pair { uint key; float value; };

layout(std430, binding = 0) readonly buffer Src { bfloat16_t src[]; };
layout(std430, binding = 1) buffer Dst { float dst[]; };
layout(std430, binding = 2) writeonly buffer E4 { floate4m3_t e4[]; };
layout(std430, binding = 3) writeonly buffer E5 { floate5m2_t e5[]; };
layout(std430, set = 1, binding = 0) buffer Stats { uint count; float total; Pair pairs[]; } stats;

layout(push_constant) uniform Push {
    vec2 scale;          // +0
    mat2 m;              // +8, column-major, matrix stride 8
    int bias;            // +24
    uint n;              // +28
    float w[3];          // +32, array stride 4
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.n)
        return;
    float x = float(src[i]);
    float y = x * pc.m[0][1] + pc.scale.y + pc.w[2] + float(pc.bias) + float(i << SHIFT);
    dst[i] = y;
    e4[i] = floate4m3_t(x);
    e5[i] = floate5m2_t(x);
    atomicAdd(stats.count, 1u);
    stats.pairs[i].key = i * 7u;
    stats.pairs[i].value = y;
}
