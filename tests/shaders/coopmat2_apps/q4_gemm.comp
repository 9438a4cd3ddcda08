#version 460
// A 4-bit block-quantized GEMM in the style of llama.cpp's mul_mm_cm2: D (M x N, f32) =
// A (M x K, f16, row major) x dequant(B)^T, B holding N rows of K/32 Q4_0 blocks (a float16 scale
// and 16 bytes of nibbles: element i of a block is low nibble of byte i for i < 16, the high nibble
// of byte i - 16 above, value (q - 8) * d). Workgroup-scope matrices, BM x BN tiles, K step BK.
// SHARED_SCALES: the scales come from a separate buffer, staged per K step in shared memory
// before a barrier, and the decode function reads them there. DECODE_VEC: a DecodeVectorFunc
// decodes 8 consecutive elements of a block per call as well.
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_EXT_buffer_reference : enable
#extension GL_EXT_control_flow_attributes : enable
#ifdef DECODE_VEC
#extension GL_NV_cooperative_matrix_decode_vector : enable
#extension GL_EXT_long_vector : enable
#endif

layout(local_size_x = 256) in;
layout(constant_id = 1) const uint BM = 128;
layout(constant_id = 2) const uint BN = 128;
const uint BK = 32;

layout(push_constant) uniform P { uint M; uint N; uint K; } p;

struct block_q4_0 { float16_t d; uint8_t qs[16]; };

layout(set = 0, binding = 0) readonly buffer A { float16_t data_a[]; };
layout(set = 0, binding = 1) readonly buffer B { block_q4_0 data_b[]; };
layout(set = 0, binding = 2) writeonly buffer D { float data_d[]; };
layout(set = 0, binding = 3) readonly buffer S { float16_t scales[]; };

layout(buffer_reference, std430, buffer_reference_align = 2) buffer decodeBufQ4_0 { block_q4_0 block; };

#ifdef SHARED_SCALES
shared float16_t sh_scale[BN];
uint tile_n0;        // first row of B in this workgroup's tile (the same in every invocation)

float16_t dequant(const in decodeBufQ4_0 bl, const in uint blockCoords[2], const in uint coordInBlock[2]) {
    const uint idx = coordInBlock[1];
    const uint b = uint(bl.block.qs[idx & 15]);
    const uint q = idx < 16 ? (b & 15) : (b >> 4);
    return (float16_t(q) - float16_t(8)) * sh_scale[blockCoords[0] - tile_n0];
}
#else
float16_t dequant(const in decodeBufQ4_0 bl, const in uint blockCoords[2], const in uint coordInBlock[2]) {
    const float16_t d = bl.block.d;
    const uint idx = coordInBlock[1];
    const uint b = uint(bl.block.qs[idx & 15]);
    const uint q = idx < 16 ? (b & 15) : (b >> 4);
    return (float16_t(q) - float16_t(8)) * d;
}
#endif

#ifdef DECODE_VEC
vector<float16_t, 8> dequant8(const in decodeBufQ4_0 bl, const in uint blockCoords[2], const in uint coordInBlock[2]) {
    const float16_t d = bl.block.d;
    const uint idx = coordInBlock[1];           // a multiple of 8: 8 low or 8 high nibbles
    vector<float16_t, 8> r;
    [[unroll]] for (uint i = 0; i < 8; i++) {
        const uint b = uint(bl.block.qs[(idx + i) & 15]);
        r[i] = (float16_t(idx < 16 ? (b & 15) : (b >> 4)) - float16_t(8)) * d;
    }
    return r;
}
#define DECODE dequant, dequant8
#else
#define DECODE dequant
#endif

void main() {
    const uint ir = gl_WorkGroupID.x;
    const uint ic = gl_WorkGroupID.y;

    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tA =
        createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tA = setTensorLayoutDimensionNV(tA, p.M, p.K);
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tB =
        createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tB = setTensorLayoutBlockSizeNV(tB, 1, BK);
    tB = setTensorLayoutDimensionNV(tB, p.N, p.K);
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tD =
        createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tD = setTensorLayoutDimensionNV(tD, p.M, p.N);
    tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);

#ifdef SHARED_SCALES
    tile_n0 = ic * BN;
#endif
    coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> sum =
        coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(0.0);
    for (uint k = 0; k < p.K; k += BK) {
#ifdef SHARED_SCALES
        barrier();
        for (uint i = gl_LocalInvocationIndex; i < BN; i += gl_WorkGroupSize.x) {
            const uint n = ic * BN + i;
            sh_scale[i] = n < p.N ? scales[n * (p.K / BK) + k / BK] : float16_t(0);
        }
        barrier();
#endif
        coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> a;
        coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> b;
        coopMatLoadTensorNV(a, data_a, 0, sliceTensorLayoutNV(tA, ir * BM, BM, k, BK));
        coopMatLoadTensorNV(b, data_b, 0, sliceTensorLayoutNV(tB, ic * BN, BN, k, BK), transposed, DECODE);
        sum = coopMatMulAdd(a, b, sum);
    }
    coopMatStoreTensorNV(sum, data_d, 0, sliceTensorLayoutNV(tD, ir * BM, BM, ic * BN, BN));
}
