#version 450
// 4-bit weight dequantization feeding MulAdd (the proposal's llama.cpp q4_0 example).
// A (M = 64 rows x KT) is stored as q4_0 blocks of 32 weights: a float16 scale d and 16 bytes of
// nibbles (byte j: weight j in its low nibble, weight j + 16 in its high one), weight = (q - 8) d.
// Invocation i dequantizes row i one block at a time into a Private float16_t[32] array, and
// each 16-wide K step takes half of it with OpExtractSubArrayQCOM (start step % 32 + p.shift;
// p.shift is 0 except in the error tests) as its row of A. B (KT x 64) column i is invocation
// i's slice of the activations xb[i][KT], packed into uint32[8] with OpBitCastArrayQCOM.
// C (64 x 64, float32) accumulates A x B and is stored row major.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_QCOM_cooperative_matrix_conversion : require
layout(local_size_x = 64) in;
const uint KT = 64, NB = KT / 32, TILE_K16 = 16;
layout(push_constant) uniform P { int shift; } p;
struct block_q4_0 { float16_t d; uint16_t qs[8]; };
layout(set = 0, binding = 0) readonly buffer BA { block_q4_0 data_a[]; };   // [64][NB]
layout(set = 0, binding = 1) readonly buffer BB { float16_t data_b[]; };    // [64][KT]
layout(set = 0, binding = 2) writeonly buffer BC { float o[]; };            // [64][64]
float16_t vecAh_block[32];         // Private: per invocation, kept across the K steps
void main() {
    uint id = gl_SubgroupInvocationID;
    coopmat<float16_t, gl_ScopeSubgroup, 64, 16, gl_MatrixUseA> matA;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 64, gl_MatrixUseB> matB;
    coopmat<float, gl_ScopeSubgroup, 64, 64, gl_MatrixUseAccumulator> matC =
        coopmat<float, gl_ScopeSubgroup, 64, 64, gl_MatrixUseAccumulator>(0.0);
    float16_t vecAh[TILE_K16], vecBh[TILE_K16];
    for (uint step = 0; step < KT; step += TILE_K16) {
        for (uint k = 0; k < TILE_K16; k++)
            vecBh[k] = data_b[id * KT + step + k];
        if (step % 32 == 0) {
            const uint ib = id * NB + step / 32;
            float d = float(data_a[ib].d);
            for (uint i = 0; i < 4; i++) {
                uint vui = uint(data_a[ib].qs[2 * i]) | (uint(data_a[ib].qs[2 * i + 1]) << 16);
                const vec4 v0 = (vec4(unpack8((vui >> 0) & 0x0F0F0F0F)) - 8.0f) * d;
                const vec4 v1 = (vec4(unpack8((vui >> 4) & 0x0F0F0F0F)) - 8.0f) * d;
                vecAh_block[4 * i + 0] = float16_t(v0.x);
                vecAh_block[4 * i + 1] = float16_t(v0.y);
                vecAh_block[4 * i + 2] = float16_t(v0.z);
                vecAh_block[4 * i + 3] = float16_t(v0.w);
                vecAh_block[4 * i + 16] = float16_t(v1.x);
                vecAh_block[4 * i + 17] = float16_t(v1.y);
                vecAh_block[4 * i + 18] = float16_t(v1.z);
                vecAh_block[4 * i + 19] = float16_t(v1.w);
            }
        }
        extractSubArrayQCOM(vecAh_block, int(step % 32) + p.shift, vecAh);
        vectorToCoopmatQCOM(vecAh, matA);
        uint packedB[8];
        bitcastQCOM(vecBh, packedB);
        vectorToCoopmatQCOM(packedB, matB);
        matC = coopMatMulAdd(matA, matB, matC);
    }
    coopMatStore(matC, o, 0, 64, gl_CooperativeMatrixLayoutRowMajor);
}
