#version 450
// 4-bit block-quantized weights with per-block float scales staged in shared memory: a (R, C)
// tensor of 4-bit values, blocks of 1 x 32 (16 bytes each, Blk), scale of block (b0, b1) at
// scales[wg * 64 + b0 * (C / 32) + b1], copied to shared memory before a barrier. Each workgroup
// decodes the 16 x 32 slice starting at row p[2] + 16 * wg, column p[3] and stores it to o[wg].
// p[0], p[1]: R, C (C a multiple of 32, R * C / 32 <= 64).
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_EXT_buffer_reference : enable
#extension GL_KHR_shader_subgroup_basic : enable
layout(local_size_x = 64) in;
layout(set=0, binding=0) readonly buffer Q { uint8_t q[]; };
layout(set=0, binding=1) readonly buffer S { float scales[]; };
layout(set=0, binding=2) buffer O { float o[]; };
layout(set=0, binding=3) readonly buffer P { uint p[]; };
layout(buffer_reference, std430, buffer_reference_align = 1) buffer Blk { uint8_t v[16]; };
shared float ssc[64];
uint blocks_per_row;

float dec(const in Blk b, const in uint32_t bc[2], const in uint32_t cib[2]) {
    uint x = uint(b.v[cib[1] >> 1]);
    uint nib = (cib[1] & 1) == 0 ? (x & 15) : (x >> 4);
    return (float(nib) - 8.0) * ssc[bc[0] * blocks_per_row + bc[1]];
}

void main() {
    uint wg = gl_WorkGroupID.x;
    ssc[gl_LocalInvocationID.x] = scales[wg * 64 + gl_LocalInvocationID.x];
    blocks_per_row = p[1] / 32;
    barrier();
    tensorLayoutNV<2> t = createTensorLayoutNV(2);
    t = setTensorLayoutBlockSizeNV(t, 1, 32);
    t = setTensorLayoutDimensionNV(t, p[0], p[1]);
    t = sliceTensorLayoutNV(t, p[2] + 16 * wg, 16, p[3], 32);
    coopmat<float, gl_ScopeSubgroup, 16, 32, gl_MatrixUseAccumulator> m;
    coopMatLoadTensorNV(m, q, 0, t, dec);
    if (gl_SubgroupID == 0)
        coopMatStore(m, o, wg * 512, 32, gl_CooperativeMatrixLayoutRowMajor);
}
