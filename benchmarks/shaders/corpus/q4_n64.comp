#version 460
// A Q4_0 matmul at the token-generation shape, in the style of llama.cpp's mul_mm_cm2:
// D (N x M, f32, one row per token) = W x X^T, W the M x K weights in Q4_0 blocks (32 values per
// block: a float16 scale d and 16 bytes of nibbles; element i is the low nibble of byte i for
// i < 16, the high nibble of byte i - 16 above; value (q - 8) * d) decoded by a DecodeFunc on a
// tensor load, X the N x K activations (f16, one row per token) read through a transposed view,
// the BM x BN accumulator stored through a transposed view. Workgroup scope, 64 x 64 tiles
// (N = 64: one tile column), 128 invocations, K steps of 32.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 128) in;
const uint BM = 64, BN = 64, BK = 32;
layout(push_constant) uniform P { uint M, N, K; } p;
struct block_q4_0 { float16_t d; uint8_t qs[16]; };
layout(set = 0, binding = 0) readonly buffer BW { block_q4_0 w[]; };
layout(set = 0, binding = 1) readonly buffer BX { float16_t x[]; };
layout(set = 0, binding = 2) writeonly buffer BD { float d[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer decodeBufQ4_0 { block_q4_0 block; };

float16_t dequant(const in decodeBufQ4_0 bl, const in uint blockCoords[2], const in uint coordInBlock[2]) {
    const uint idx = coordInBlock[1];
    const uint b = uint(bl.block.qs[idx & 15]);
    return (float16_t(idx < 16 ? (b & 15) : (b >> 4)) - float16_t(8)) * bl.block.d;
}

#define LAYOUT tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV>
void main() {
    const uint m0 = gl_WorkGroupID.x * BM, n0 = gl_WorkGroupID.y * BN;
    LAYOUT tW = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tW = setTensorLayoutBlockSizeNV(tW, 1, BK);
    tW = setTensorLayoutDimensionNV(tW, p.M, p.K);
    LAYOUT tX = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tX = setTensorLayoutDimensionNV(tX, p.N, p.K);
    LAYOUT tD = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tD = setTensorLayoutDimensionNV(tD, p.N, p.M);
    tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);
    coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> sum =
        coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(0.0);
    for (uint k = 0; k < p.K; k += BK) {
        coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> mw;
        coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> mx;
        coopMatLoadTensorNV(mw, w, 0, sliceTensorLayoutNV(tW, m0, BM, k, BK), dequant);
        coopMatLoadTensorNV(mx, x, 0, sliceTensorLayoutNV(tX, n0, BN, k, BK), transposed);
        sum = coopMatMulAdd(mw, mx, sum);
    }
    coopMatStoreTensorNV(sum, d, 0, sliceTensorLayoutNV(tD, n0, BN, m0, BM), transposed);
}
