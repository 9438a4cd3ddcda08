#version 460
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
#extension GL_KHR_shader_subgroup_clustered : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_EXT_shader_subgroup_extended_types_int64 : enable
// Subgroup reductions and scans with every invocation active (uint, int, float, a few vectors,
// 64-bit). Workgroups of 96 invocations: at subgroup size 64 the second subgroup has 32.
// Invocation g writes result k to o[k * NT + g] (NT = invocations of the whole dispatch).
layout(local_size_x = 96) in;
layout(std430, binding = 0) readonly buffer U { uint u[]; };
layout(std430, binding = 1) readonly buffer F { float f[]; };
layout(std430, binding = 2) readonly buffer D { double d[]; };
layout(std430, binding = 3) writeonly buffer O { uint o[]; };
layout(std430, binding = 4) writeonly buffer W { uint64_t w[]; };

void main() {
    uint NT = gl_NumWorkGroups.x * 96u;
    uint g = gl_GlobalInvocationID.x;
    uint x = u[g];
    int y = int(x);
    float z = f[g];
    // 0-20: unsigned Add Mul Min Max And Or Xor: reduce, inclusive scan, exclusive scan
    o[0u * NT + g] = subgroupAdd(x);
    o[1u * NT + g] = subgroupInclusiveAdd(x);
    o[2u * NT + g] = subgroupExclusiveAdd(x);
    o[3u * NT + g] = subgroupMul(x);
    o[4u * NT + g] = subgroupInclusiveMul(x);
    o[5u * NT + g] = subgroupExclusiveMul(x);
    o[6u * NT + g] = subgroupMin(x);
    o[7u * NT + g] = subgroupInclusiveMin(x);
    o[8u * NT + g] = subgroupExclusiveMin(x);
    o[9u * NT + g] = subgroupMax(x);
    o[10u * NT + g] = subgroupInclusiveMax(x);
    o[11u * NT + g] = subgroupExclusiveMax(x);
    o[12u * NT + g] = subgroupAnd(x);
    o[13u * NT + g] = subgroupInclusiveAnd(x);
    o[14u * NT + g] = subgroupExclusiveAnd(x);
    o[15u * NT + g] = subgroupOr(x);
    o[16u * NT + g] = subgroupInclusiveOr(x);
    o[17u * NT + g] = subgroupExclusiveOr(x);
    o[18u * NT + g] = subgroupXor(x);
    o[19u * NT + g] = subgroupInclusiveXor(x);
    o[20u * NT + g] = subgroupExclusiveXor(x);
    // 21-26: signed Min Max: reduce, inclusive, exclusive
    o[21u * NT + g] = uint(subgroupMin(y));
    o[22u * NT + g] = uint(subgroupInclusiveMin(y));
    o[23u * NT + g] = uint(subgroupExclusiveMin(y));
    o[24u * NT + g] = uint(subgroupMax(y));
    o[25u * NT + g] = uint(subgroupInclusiveMax(y));
    o[26u * NT + g] = uint(subgroupExclusiveMax(y));
    // 27-34: float (values whose sums and products are exact in any order)
    o[27u * NT + g] = floatBitsToUint(subgroupAdd(z));
    o[28u * NT + g] = floatBitsToUint(subgroupInclusiveAdd(z));
    o[29u * NT + g] = floatBitsToUint(subgroupExclusiveAdd(z));
    o[30u * NT + g] = floatBitsToUint(subgroupMin(z));
    o[31u * NT + g] = floatBitsToUint(subgroupMax(z));
    o[32u * NT + g] = floatBitsToUint(subgroupMul(z));
    o[33u * NT + g] = floatBitsToUint(subgroupExclusiveMin(z));
    o[34u * NT + g] = floatBitsToUint(subgroupInclusiveMax(z));
    // 35-41: clustered (cluster sizes up to 8 fit every subgroup size tested)
    uvec2 ca = subgroupClusteredAdd(uvec2(x, x >> 16), 2u);
    o[35u * NT + g] = ca.x ^ (ca.y << 7);
    o[36u * NT + g] = subgroupClusteredMul(x, 4u);
    o[37u * NT + g] = uint(subgroupClusteredMin(y, 8u));
    o[38u * NT + g] = subgroupClusteredXor(x, 1u);
    vec3 cm = subgroupClusteredMax(vec3(z, -z, 1.0), 4u);
    o[39u * NT + g] = floatBitsToUint(cm.x);
    o[40u * NT + g] = floatBitsToUint(cm.y);
    o[41u * NT + g] = floatBitsToUint(cm.z);
    // 64-bit: w[k * NT + g]
    w[0u * NT + g] = subgroupAdd(uint64_t(x) << 20);
    w[1u * NT + g] = uint64_t(subgroupInclusiveMax(int64_t(y) * -3000000000l));
    w[2u * NT + g] = doubleBitsToUint64(subgroupInclusiveAdd(d[g]));
}
