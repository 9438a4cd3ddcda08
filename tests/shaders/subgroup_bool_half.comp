#version 460
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
#extension GL_KHR_shader_subgroup_clustered : enable
#extension GL_KHR_shader_subgroup_vote : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_EXT_shader_subgroup_extended_types_float16 : enable
// Subgroup operations on bools (LogicalAnd/Or/Xor), on float16 (each step's result a float16:
// rounded), float min/max with NaN operands (a NaN loses to any number), and AllEqual of floats.
// Every invocation active; workgroups of 96. Result k of invocation g at o*[k * NT + g].
layout(local_size_x = 96) in;
layout(std430, binding = 0) readonly buffer U { uint u[]; };
layout(std430, binding = 1) readonly buffer H { float16_t h[]; };
layout(std430, binding = 2) readonly buffer F { float f[]; };
layout(std430, binding = 3) writeonly buffer O { uint o[]; };
layout(std430, binding = 4) writeonly buffer OH { float16_t oh[]; };

void main() {
    uint NT = gl_NumWorkGroups.x * 96u;
    uint g = gl_GlobalInvocationID.x;
    bool b = (u[g] & 1u) != 0u;
    bool c = (u[g] & 2u) != 0u;
    float16_t x = h[g];
    float z = f[g];
    // 0-7: bools
    o[0u * NT + g] = uint(subgroupAnd(b));
    o[1u * NT + g] = uint(subgroupOr(c));
    o[2u * NT + g] = uint(subgroupXor(b));
    o[3u * NT + g] = uint(subgroupInclusiveAnd(c));
    o[4u * NT + g] = uint(subgroupExclusiveOr(b));
    o[5u * NT + g] = uint(subgroupInclusiveXor(c));
    o[6u * NT + g] = uint(subgroupClusteredAnd(b, 4u));
    o[7u * NT + g] = uint(subgroupClusteredXor(c, 8u));
    // 8-11: floats with NaNs, and AllEqual
    o[8u * NT + g] = floatBitsToUint(subgroupMin(z));
    o[9u * NT + g] = floatBitsToUint(subgroupInclusiveMax(z));
    o[10u * NT + g] = uint(subgroupAllEqual(abs(z) < 2.0 ? 1.5 : z));
    o[11u * NT + g] = uint(subgroupAllEqual(vec2(1.0, u[g] & 4u)));
    // float16: oh[k * NT + g]
    oh[0u * NT + g] = subgroupAdd(x);
    oh[1u * NT + g] = subgroupInclusiveAdd(x);
    oh[2u * NT + g] = subgroupExclusiveAdd(x);
    oh[3u * NT + g] = subgroupMul(x);
    oh[4u * NT + g] = subgroupClusteredAdd(x, 4u);
    oh[5u * NT + g] = subgroupMin(x);
    oh[6u * NT + g] = subgroupExclusiveMax(x);
}
