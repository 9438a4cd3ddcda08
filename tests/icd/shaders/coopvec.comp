#version 460
// VK_NV_cooperative_vector: each invocation computes r = M x v + bias for its own 8 float16
// inputs, with an 8 x 8 float16 matrix (row major, stride 16 bytes, or inferencing-optimal when
// built with -DOPTIMAL) and a float16 bias at byte 128 of the same buffer.
#extension GL_NV_cooperative_vector : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 32) in;
layout(std430, set = 0, binding = 0) readonly buffer In { float16_t x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Mat { uint8_t m[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { float16_t r[]; };
#ifdef OPTIMAL
#define LAYOUT gl_CooperativeVectorMatrixLayoutInferencingOptimalNV
#define BIAS 512
#else
#define LAYOUT gl_CooperativeVectorMatrixLayoutRowMajorNV
#define BIAS 128
#endif
void main() {
    uint i = gl_GlobalInvocationID.x;
    coopvecNV<float16_t, 8> v;
    coopVecLoadNV(v, x, i * 16);
    coopvecNV<float16_t, 8> res = coopvecNV<float16_t, 8>(0);
    coopVecMatMulAddNV(res, v, gl_ComponentTypeFloat16NV, m, 0, gl_ComponentTypeFloat16NV, m, BIAS,
                       gl_ComponentTypeFloat16NV, 8, 8, LAYOUT, false, 16);
    coopVecStoreNV(res, r, i * 16);
}
