#version 460
// A block-quantized matrix multiplication written the way llama.cpp's Vulkan backend writes its
// coopmat2 one (the shape of ggml-vulkan's mul_mm_cm2.comp for q4_0/q8_0 weights; written here,
// for tests/test_coopmat2_prod.py).
//
// Convention: ggml_mul_mat's, which llama.cpp's shader keeps. A holds the weights: M rows of K
// values, q4_0 or q8_0 blocks of 32 along K. B holds the activations: N rows (tokens) of K
// float16 values. D gets N rows of M float32 values:
//
//     D[n][m] = sum_k B[n][k] * dequant(A)[m][k]          that is, D = B dequant(A)^T
//
// As matrices the shader forms the transposed product: dequant(A) (BM x BK, Use A, decoded by a
// DecodeFunc) times B^T (BK x BN, Use B, read row-major through a transposing view) into a
// BM x BN accumulator, stored through the transposing view again into D's rows of M.
//
//  - tile sizes, workgroup size and weight type are specialization constants (ggml-vulkan
//    builds one pipeline per (tile, type)); the two decode functions read block structs of
//    their own size from the one weight binding, seen as an array of either block;
//  - workgroup-scope matrices; a workgroup computes a BM x BN tile of D^T: gl_WorkGroupID.x is
//    (K split, row tile of A), .y the tile of B's rows, .z the batch;
//  - a fast path for tiles wholly inside A and B (padded_N rows of B may be read) with K steps
//    whole: unclamped layouts, a partially unrolled K loop, and, with few activation rows
//    (token generation), a matrix BN / 2 or BN / 4 wide instead of multiplying padding;
//  - everywhere else (the ragged edge: M, N or K not a multiple of the tile) the K loop reads
//    through Constant-clamped layouts that give 0 past the ends; D is stored through a clamped
//    layout, which drops what lies past N and M;
//  - batches: B and D matrix z = i13 * ne12 + i12 use A matrix
//    (i13 / broadcast3) * ne02 + i12 / broadcast2, so one weight matrix can serve several
//    activation matrices;
//  - split-K: K in ranges of k_split, range ik written to D's ik-th set of batches (summed
//    afterwards by whoever dispatched it).
//
// Memory: A (binding 0) ne02 x ne03 matrices batch_stride_a values apart (a multiple of 256, so
// each starts 16-byte aligned), rows stride_a values apart; B (binding 1) float16, rows stride_b
// apart, matrices batch_stride_b apart (a multiple of 8); D (binding 2) float32, rows stride_d
// apart, matrices batch_stride_d apart (a multiple of 4), K ranges gl_NumWorkGroups.z matrices
// apart. Values past the ends of the rows that the strides leave are never read.
//   build.sh: glslang -V --target-env vulkan1.3, then spirv-opt -O
#extension GL_EXT_control_flow_attributes : enable
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_EXT_buffer_reference : enable
#extension GL_GOOGLE_include_directive : enable

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

layout(constant_id = 0) const uint BLOCK_SIZE = 256;   // invocations: the matrices' scope
layout(constant_id = 1) const uint BM = 128;           // rows of A (columns of D) per tile
layout(constant_id = 2) const uint BN = 128;           // rows of B (rows of D) per tile
layout(constant_id = 3) const uint BK = 32;            // K step, a multiple of QUANT_K
layout(constant_id = 4) const bool enable_smaller_matrices = false;
layout(constant_id = 5) const uint TYPE_A = 0;         // TYPE_Q4_0 or TYPE_Q8_0

const uint TYPE_Q4_0 = 0, TYPE_Q8_0 = 1;
const uint QUANT_K = 32;                               // values per block
const uint UNROLL = 4;                                 // K steps per pass of the fast loop
const uint BN2 = enable_smaller_matrices ? BN / 2 : BN;
const uint BN4 = enable_smaller_matrices ? BN / 4 : BN;

layout(push_constant) uniform parameter {
    uint M;              // rows of A, columns of D
    uint N;              // rows of B and D
    uint K;              // a multiple of QUANT_K
    uint stride_a;       // values from one row of A to the next (a multiple of QUANT_K)
    uint stride_b;
    uint stride_d;
    uint batch_stride_a; // values from one matrix of A to the next
    uint batch_stride_b;
    uint batch_stride_d;
    uint k_split;        // K values per range (a multiple of BK; K itself for no split)
    uint ne02;           // matrices of A along dimension 2
    uint ne12;           // matrices of B along dimension 2 (gl_NumWorkGroups.z = ne12 x ne13)
    uint broadcast2;     // ne12 / ne02
    uint broadcast3;     // ne13 / ne03
    uint padded_N;       // rows of B that may be read, >= N; D stops at N
} p;

// q4_0: value j is (nibble - 8) * d, the low nibble of qs[j] for j < 16, the high nibble of
// qs[j - 16] above. q8_0: value j is qs[j] * d. (18 and 34 bytes in std430.)
struct block_q4_0 { float16_t d; uint8_t qs[QUANT_K / 2]; };
struct block_q8_0 { float16_t d; int8_t qs[QUANT_K]; };

// One weight binding, declared once per block type: the element offset of a load counts blocks
// of the type the load uses.
layout(binding = 0) readonly buffer A_Q4_0 { block_q4_0 data_a_q4_0[]; };
layout(binding = 0) readonly buffer A_Q8_0 { block_q8_0 data_a_q8_0[]; };
layout(binding = 1) readonly buffer B { float16_t data_b[]; };
layout(binding = 2) writeonly buffer D { float data_d[]; };

layout(buffer_reference, std430, buffer_reference_align = 2) buffer decodeBufQ4_0 { block_q4_0 block; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer decodeBufQ8_0 { block_q8_0 block; };

float16_t dequantFuncQ4_0(const in decodeBufQ4_0 bl, const in uint blockCoords[2], const in uint coordInBlock[2]) {
    const uint j = coordInBlock[1];
    const uint nibble = (uint(bl.block.qs[j & 15u]) >> ((j & 16u) >> 2)) & 15u;
    return (float16_t(nibble) - float16_t(8)) * bl.block.d;
}

float16_t dequantFuncQ8_0(const in decodeBufQ8_0 bl, const in uint blockCoords[2], const in uint coordInBlock[2]) {
    return float16_t(bl.block.qs[coordInBlock[1]]) * bl.block.d;
}

#define MAT_A coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA>
#define MAT_B(W) coopmat<float16_t, gl_ScopeWorkgroup, BK, W, gl_MatrixUseB>
#define ACC(W) coopmat<float, gl_ScopeWorkgroup, BM, W, gl_MatrixUseAccumulator>
#define CLAMPED gl_CooperativeMatrixClampModeConstantNV

// Where this workgroup works (set once by main, the same in every invocation).
uint ir;       // row tile of A
uint ic;       // row tile of B
uint pos_a;    // first block of this batch's A
uint pos_b;    // first value of this batch's B
uint pos_d;    // first value of this batch's (and K range's) D

// A's BM x BK tile at K offset k, decoded as TYPE_A says. A tile that reaches past M or past the
// end of its K range reads through the clamped layout (zeros there; the decode function is not
// called for them).
MAT_A load_a(const in tensorLayoutNV<2> tA, const in tensorLayoutNV<2, CLAMPED> tAClamp,
             const bool inside, const uint k) {
    MAT_A a;
    if (inside) {
        if (TYPE_A == TYPE_Q4_0) {
            coopMatLoadTensorNV(a, data_a_q4_0, pos_a, sliceTensorLayoutNV(tA, ir * BM, BM, k, BK), dequantFuncQ4_0);
        } else {
            coopMatLoadTensorNV(a, data_a_q8_0, pos_a, sliceTensorLayoutNV(tA, ir * BM, BM, k, BK), dequantFuncQ8_0);
        }
    } else {
        if (TYPE_A == TYPE_Q4_0) {
            coopMatLoadTensorNV(a, data_a_q4_0, pos_a, sliceTensorLayoutNV(tAClamp, ir * BM, BM, k, BK), dequantFuncQ4_0);
        } else {
            coopMatLoadTensorNV(a, data_a_q8_0, pos_a, sliceTensorLayoutNV(tAClamp, ir * BM, BM, k, BK), dequantFuncQ8_0);
        }
    }
    return a;
}

// The fast path, once per width of the tile: mul_mm_fast (BN), mul_mm_fast_half (BN / 2),
// mul_mm_fast_quarter (BN / 4).
#define TILE_N BN
#define TILE_FN mul_mm_fast
#include "mul_mm_q_fast.glsl"
#undef TILE_N
#undef TILE_FN
#define TILE_N BN2
#define TILE_FN mul_mm_fast_half
#include "mul_mm_q_fast.glsl"
#undef TILE_N
#undef TILE_FN
#define TILE_N BN4
#define TILE_FN mul_mm_fast_quarter
#include "mul_mm_q_fast.glsl"
#undef TILE_N
#undef TILE_FN

void main() {
    ic = gl_WorkGroupID.y;
    const uint batch = gl_WorkGroupID.z;
    const uint i13 = batch / p.ne12;
    const uint i12 = batch % p.ne12;
    const uint batch_a = (i13 / p.broadcast3) * p.ne02 + i12 / p.broadcast2;

    const uint blocks_m = (p.M + BM - 1) / BM;
    ir = gl_WorkGroupID.x % blocks_m;
    const uint ik = gl_WorkGroupID.x / blocks_m;
    const uint start_k = ik * p.k_split;
    const uint end_k = min(p.K, start_k + p.k_split);

    pos_a = batch_a * (p.batch_stride_a / QUANT_K);
    pos_b = batch * p.batch_stride_b;
    pos_d = (ik * gl_NumWorkGroups.z + batch) * p.batch_stride_d;

    // A is bounded by its K range, so a range's last tile reads zeros past it rather than the
    // next range's values; B by padded_N, D by N.
    tensorLayoutNV<2> tA = createTensorLayoutNV(2);
    tensorLayoutNV<2, CLAMPED> tAClamp = createTensorLayoutNV(2, CLAMPED);
    tensorLayoutNV<2> tB = createTensorLayoutNV(2);
    tensorLayoutNV<2, CLAMPED> tBClamp = createTensorLayoutNV(2, CLAMPED);
    tensorLayoutNV<2, CLAMPED> tD = createTensorLayoutNV(2, CLAMPED);
    tA = setTensorLayoutBlockSizeNV(tA, 1, QUANT_K);
    tAClamp = setTensorLayoutBlockSizeNV(tAClamp, 1, QUANT_K);
    tA = setTensorLayoutDimensionNV(tA, p.M, end_k);
    tAClamp = setTensorLayoutDimensionNV(tAClamp, p.M, end_k);
    tB = setTensorLayoutDimensionNV(tB, p.padded_N, end_k);
    tBClamp = setTensorLayoutDimensionNV(tBClamp, p.padded_N, end_k);
    tD = setTensorLayoutDimensionNV(tD, p.N, p.M);
    // What the padding reads must add nothing to the sums (0 is also the default value).
    tAClamp = setTensorLayoutClampValueNV(tAClamp, 0);
    tBClamp = setTensorLayoutClampValueNV(tBClamp, 0);
    tA = setTensorLayoutStrideNV(tA, p.stride_a / QUANT_K, 1);
    tAClamp = setTensorLayoutStrideNV(tAClamp, p.stride_a / QUANT_K, 1);
    tB = setTensorLayoutStrideNV(tB, p.stride_b, 1);
    tBClamp = setTensorLayoutStrideNV(tBClamp, p.stride_b, 1);
    tD = setTensorLayoutStrideNV(tD, p.stride_d, 1);

    if ((ir + 1) * BM <= p.M && (ic + 1) * BN <= p.padded_N && start_k % BK == 0 && end_k % BK == 0) {
        if (enable_smaller_matrices && ic * BN + BN4 >= p.N) {
            mul_mm_fast_quarter(tA, tAClamp, tB, tD, start_k, end_k);
        } else if (enable_smaller_matrices && ic * BN + BN2 >= p.N) {
            mul_mm_fast_half(tA, tAClamp, tB, tD, start_k, end_k);
        } else {
            mul_mm_fast(tA, tAClamp, tB, tD, start_k, end_k);
        }
        return;
    }

    tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);
    ACC(BN) sum = ACC(BN)(0.0);
    [[dont_unroll]]
    for (uint k = start_k; k < end_k; k += BK) {
        MAT_A a = load_a(tA, tAClamp, (ir + 1) * BM <= p.M && k + BK <= end_k, k);
        MAT_B(BN) b;
        coopMatLoadTensorNV(b, data_b, pos_b, sliceTensorLayoutNV(tBClamp, ic * BN, BN, k, BK), transposed);
        sum = coopMatMulAdd(a, b, sum);
    }
    coopMatStoreTensorNV(sum, data_d, pos_d, sliceTensorLayoutNV(tD, ic * BN, BN, ir * BM, BM), transposed);
}
