#version 460
// Flash attention written the way production inference engines write their coopmat2 kernels
// (the shape of llama.cpp's flash_attn_cm2; written here, for tests/test_flash_attn_prod.py):
//
//  - one module for every K/V type: TYPE_K / TYPE_V are specialization constants, the decode
//    functions switch on them and read block structs whose size depends on them; float16 K/V
//    take the plain load (a branch on a specialization-constant boolean);
//  - grouped-query attention: a workgroup handles GQA query heads that share one K/V head, its
//    Br matrix rows are (head, query) pairs, head-major, read and written through 3-D layouts
//    and a permuting view (1, 0, 2);
//  - online softmax with row reductions (max and sum combiners, and a "smear" combiner that
//    widens a row value to another column count), per-element exponentials and maxima, the
//    mask read through a Constant-clamped layout whose clamp value is float16 -inf (0xFC00) and
//    whose query-head dimension has stride 0, key blocks the mask hides entirely skipped
//    (`continue`), padding conditions written as production code writes them
//    (`Clamp != 0 && (a || b)`: glslang's short-circuit blocks and boolean phis);
//  - split-K: with k_num > 1 each workgroup (z) covers one range of keys and scatters its
//    unnormalized O and its row max M and row sum L through per-element operations.
//
// O[q][h][:] = softmax(scale * Q[q][h] K[:][h / GQA]^T + mask[q][:]) V[:][h / GQA]
//
// Memory (bindings): Q f32 [N][Hq][HSK]; K, V: per K/V head a region of k_head_bytes /
// v_head_bytes (16-byte multiples) holding KV rows of HSK (HSV) elements, float16 or blocks of
// 32 (q8_0: float16 d, int8 q[32], value q*d; q4_0: float16 d, uint8 qs[16], element j < 16 the
// low nibble of qs[j], j >= 16 the high nibble of qs[j-16], value (nibble - 8) * d); mask f16
// [N][KV]; O f32 [N][Hq][HSV], or with split-K: O parts [k_num][N][Hq][HSV], then L
// [k_num][N][Hq], then M [k_num][N][Hq].
//   glslang -V --target-env vulkan1.3 flash_attn.comp -o flash_attn.spv  (build.sh)
#extension GL_EXT_control_flow_attributes : enable
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_EXT_buffer_reference : enable

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

layout(constant_id = 0) const uint WorkGroupSize = 128;
layout(constant_id = 1) const uint Br = 32;        // matrix rows: GQA heads x Br / GQA queries
layout(constant_id = 2) const uint Bc = 32;        // keys per step
layout(constant_id = 3) const uint HSK = 64;
layout(constant_id = 4) const uint HSV = 64;
layout(constant_id = 5) const uint Clamp = gl_CooperativeMatrixClampModeConstantNV;
layout(constant_id = 6) const uint TYPE_K = 0;     // FA_F16, FA_Q8_0 or FA_Q4_0
layout(constant_id = 7) const uint TYPE_V = 0;
layout(constant_id = 8) const uint Flags = 1;      // bit 0: mask
layout(constant_id = 9) const uint GQA = 1;

const uint FA_F16 = 0, FA_Q8_0 = 1, FA_Q4_0 = 2;
const bool MASK_ENABLE = (Flags & 1) != 0;
const uint HSK_pad = (HSK + 15) & ~15;
const uint HSV_pad = (HSV + 15) & ~15;
const uint Bq = Br / GQA;                          // query rows per head

layout(push_constant) uniform Parameters {
    uint N;              // queries
    uint KV;             // keys
    uint Hq;             // query heads (K/V heads x GQA)
    uint k_head_bytes;   // bytes from one K/V head to the next
    uint v_head_bytes;
    uint k_row;          // from one key to the next, in elements (float16) or blocks
    uint v_row;
    float scale;
    uint k_num;          // key ranges (split-K); 1: one workgroup sees every key
    uint kv_per_split;   // keys per range, a multiple of Bc
} p;

layout(binding = 0) readonly buffer Qb { float data_q[]; };
layout(binding = 1) readonly buffer Kb { uint8_t data_k[]; };
layout(binding = 2) readonly buffer Vb { uint8_t data_v[]; };
layout(binding = 3) readonly buffer Mb { float16_t data_m[]; };
layout(binding = 4) writeonly buffer Ob { float data_o[]; };

// The block of each type, and the block the decode functions receive: as many bytes as the
// type's block has (the struct's size follows the specialization constant).
uint block_elems(uint t) { return t == FA_F16 ? 1u : 32u; }
const uint BlockBytesK = TYPE_K == FA_Q8_0 ? 34 : (TYPE_K == FA_Q4_0 ? 18 : 2);
const uint BlockBytesV = TYPE_V == FA_Q8_0 ? 34 : (TYPE_V == FA_Q4_0 ? 18 : 2);
layout(buffer_reference, std430, buffer_reference_align = 2) buffer decodeBufK { uint8_t raw[BlockBytesK]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer decodeBufV { uint8_t raw[BlockBytesV]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer blockQ8_0 { float16_t d; int8_t qs[32]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer blockQ4_0 { float16_t d; uint8_t qs[16]; };

float16_t dequantQ8_0(const in blockQ8_0 bl, const in uint blockCoords[2], const in uint coordInBlock[2]) {
    return float16_t(bl.qs[coordInBlock[1]]) * bl.d;
}

float16_t dequantQ4_0(const in blockQ4_0 bl, const in uint blockCoords[2], const in uint coordInBlock[2]) {
    const uint idx = coordInBlock[1];
    const uint byte = uint(bl.qs[idx & 15u]);
    const uint nib = idx < 16u ? (byte & 15u) : (byte >> 4);
    return (float16_t(nib) - float16_t(8)) * bl.d;
}

float16_t faDecodeK(const in decodeBufK bl, const in uint blockCoords[2], const in uint coordInBlock[2]) {
    switch (TYPE_K) {
        case FA_Q8_0: return dequantQ8_0(blockQ8_0(bl), blockCoords, coordInBlock);
        case FA_Q4_0: return dequantQ4_0(blockQ4_0(bl), blockCoords, coordInBlock);
        default: return float16_t(0);
    }
}

float16_t faDecodeV(const in decodeBufV bl, const in uint blockCoords[2], const in uint coordInBlock[2]) {
    switch (TYPE_V) {
        case FA_Q8_0: return dequantQ8_0(blockQ8_0(bl), blockCoords, coordInBlock);
        case FA_Q4_0: return dequantQ4_0(blockQ4_0(bl), blockCoords, coordInBlock);
        default: return float16_t(0);
    }
}

// Where this workgroup is (set once in main; the per-element functions read them).
uint i;             // query tile: queries i * Bq ..
uint hk;            // K/V head; query heads hk * GQA ..
uint split_k_index; // key range

float maxReduce(const in float x, const in float y) { return max(x, y); }
float16_t maxReduceFp16(const in float16_t x, const in float16_t y) { return max(x, y); }
float sumReduce(const in float x, const in float y) { return x + y; }
float smearReduce(const in float x, const in float y) { return x; }

float Exp(const in uint32_t row, const in uint32_t col, const in float elem) { return exp(elem); }
float Max(const in uint32_t row, const in uint32_t col, const in float elem0, const in float elem1) {
    return max(elem0, elem1);
}

// Elements of query rows past the last query (rows are head-major (g, q)) or of keys past the
// last key become `replace`.
float replacePadding(const in uint32_t row, const in uint32_t col, const in float elem,
                     const in float replace, const in uint32_t numQueries, const in uint32_t numCols) {
    if (row % Bq >= numQueries || col >= numCols) {
        return replace;
    }
    return elem;
}

// split-K: scatter this range's unnormalized O, and L / M (their column 0) after the O parts.
float perElemOpStoreO(const in uint32_t r, const in uint32_t c, const in float elem) {
    const uint q = i * Bq + r % Bq, h = hk * GQA + r / Bq;
    if (q < p.N && c < HSV) {
        data_o[((split_k_index * p.N + q) * p.Hq + h) * HSV + c] = elem;
    }
    return elem;
}

float perElemOpStoreCol0(const in uint32_t r, const in uint32_t c, const in float elem, const in uint32_t base) {
    const uint q = i * Bq + r % Bq, h = hk * GQA + r / Bq;
    if (q < p.N && c == 0) {
        data_o[base + (split_k_index * p.N + q) * p.Hq + h] = elem;
    }
    return elem;
}

#define MAT(T, R, C, U) coopmat<T, gl_ScopeWorkgroup, R, C, gl_MatrixUse##U>

void main() {
    i = gl_WorkGroupID.x;
    hk = gl_WorkGroupID.y;
    split_k_index = gl_WorkGroupID.z;

    // (query, head, column) tensors seen as matrices of (head, query) rows
    tensorViewNV<3, false, 1, 0, 2> headsMajor = createTensorViewNV(3, false, 1, 0, 2);
    tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);

    tensorLayoutNV<3, gl_CooperativeMatrixClampModeConstantNV> tensorLayoutQ = createTensorLayoutNV(3, gl_CooperativeMatrixClampModeConstantNV);
    tensorLayoutQ = setTensorLayoutDimensionNV(tensorLayoutQ, p.N, p.Hq, HSK);

    tensorLayoutNV<2, Clamp> tensorLayoutK = createTensorLayoutNV(2, Clamp);
    tensorLayoutNV<2, Clamp> tensorLayoutV = createTensorLayoutNV(2, Clamp);
    const uint bs_k = block_elems(TYPE_K);
    const uint bs_v = block_elems(TYPE_V);
    tensorLayoutK = setTensorLayoutBlockSizeNV(tensorLayoutK, 1, bs_k);
    tensorLayoutV = setTensorLayoutBlockSizeNV(tensorLayoutV, 1, bs_v);
    tensorLayoutK = setTensorLayoutDimensionNV(tensorLayoutK, p.KV, HSK);
    tensorLayoutV = setTensorLayoutDimensionNV(tensorLayoutV, p.KV, HSV);
    tensorLayoutK = setTensorLayoutStrideNV(tensorLayoutK, p.k_row, 1);
    tensorLayoutV = setTensorLayoutStrideNV(tensorLayoutV, p.v_row, 1);

    MAT(float, Br, HSK_pad, Accumulator) Q;
    coopMatLoadTensorNV(Q, data_q, 0, sliceTensorLayoutNV(tensorLayoutQ, i * Bq, Bq, hk * GQA, GQA, 0, HSK_pad), headsMajor);
    MAT(float16_t, Br, HSK_pad, A) Qf16 = MAT(float16_t, Br, HSK_pad, A)(Q);
    Qf16 *= float16_t(p.scale);

    MAT(float, Br, HSV_pad, Accumulator) O = MAT(float, Br, HSV_pad, Accumulator)(0);
    MAT(float, Br, Bc, Accumulator) L, M;
    // -FLT_MAX / 2 rather than -inf: Mold - M stays a number for rows every key masks
    const float NEG_FLT_MAX_OVER_2 = uintBitsToFloat(0xFEFFFFFF);
    L = MAT(float, Br, Bc, Accumulator)(0);
    M = MAT(float, Br, Bc, Accumulator)(NEG_FLT_MAX_OVER_2);

    const uint k_offset = hk * p.k_head_bytes;
    const uint v_offset = hk * p.v_head_bytes;
    const uint start_j = split_k_index * p.kv_per_split / Bc;
    const uint end_j = min(p.KV, (split_k_index + 1) * p.kv_per_split);
    const uint last_j = (end_j + Bc - 1) / Bc;

    [[dont_unroll]]
    for (uint j = start_j; j < last_j; ++j) {
        MAT(float16_t, Br, Bc, Accumulator) mv = MAT(float16_t, Br, Bc, Accumulator)(0);
        if (MASK_ENABLE) {
            // the same mask row for every head of the group: a stride-0 head dimension; queries
            // past N are -inf (the clamp value) where the last query tile is ragged
            bool n_bounds_check = !(GQA > 1) && (p.N % Bq) != 0;
            MAT(float16_t, Br, Bc, Accumulator) mvmax;
            if (n_bounds_check) {
                tensorLayoutNV<3, gl_CooperativeMatrixClampModeConstantNV> tensorLayoutM = createTensorLayoutNV(3, gl_CooperativeMatrixClampModeConstantNV);
                tensorLayoutM = setTensorLayoutDimensionNV(tensorLayoutM, p.N, GQA, p.KV);
                tensorLayoutM = setTensorLayoutStrideNV(tensorLayoutM, p.KV, 0, 1);
                tensorLayoutM = setTensorLayoutClampValueNV(tensorLayoutM, 0xfc00);   // -inf in float16_t
                coopMatLoadTensorNV(mv, data_m, 0, sliceTensorLayoutNV(tensorLayoutM, i * Bq, Bq, 0, GQA, j * Bc, Bc), headsMajor);
                // skip the block if the mask is entirely -inf
                coopMatReduceNV(mvmax, mv, gl_CooperativeMatrixReduceRowAndColumnNV, maxReduceFp16);
                if (mvmax[0] <= NEG_FLT_MAX_OVER_2) {
                    continue;
                }
            } else {
                tensorLayoutNV<3, Clamp> tensorLayoutM = createTensorLayoutNV(3, Clamp);
                tensorLayoutM = setTensorLayoutDimensionNV(tensorLayoutM, p.N, GQA, p.KV);
                tensorLayoutM = setTensorLayoutStrideNV(tensorLayoutM, p.KV, 0, 1);
                tensorLayoutM = setTensorLayoutClampValueNV(tensorLayoutM, 0xfc00);
                coopMatLoadTensorNV(mv, data_m, 0, sliceTensorLayoutNV(tensorLayoutM, i * Bq, Bq, 0, GQA, j * Bc, Bc), headsMajor);
                coopMatReduceNV(mvmax, mv, gl_CooperativeMatrixReduceRowAndColumnNV, maxReduceFp16);
                if (mvmax[0] <= NEG_FLT_MAX_OVER_2) {
                    continue;
                }
            }
        }

        MAT(float, Br, Bc, Accumulator) S = MAT(float, Br, Bc, Accumulator)(0);
        MAT(float16_t, HSK_pad, Bc, B) K_T;
        const bool k_use_decode = bs_k > 1u;
        if (k_use_decode) {
            coopMatLoadTensorNV(K_T, data_k, k_offset, sliceTensorLayoutNV(tensorLayoutK, j * Bc, Bc, 0, HSK_pad), transposed, faDecodeK);
        } else {
            coopMatLoadTensorNV(K_T, data_k, k_offset, sliceTensorLayoutNV(tensorLayoutK, j * Bc, Bc, 0, HSK_pad), transposed);
        }
        S = coopMatMulAdd(Qf16, K_T, S);

        if (MASK_ENABLE) {
            S += MAT(float, Br, Bc, Accumulator)(mv);
        }

        // padding (queries past N, keys past this range) to -FLT_MAX/2: no part in the row max
        if (Clamp != 0 &&
            ((j + 1) * Bc > end_j ||
             (i + 1) * Bq > p.N)) {
            uint R = ((i + 1) * Bq > p.N) ? (p.N % Bq) : Bq;
            uint C = ((j + 1) * Bc > end_j) ? (end_j % Bc) : Bc;
            coopMatPerElementNV(S, S, replacePadding, NEG_FLT_MAX_OVER_2, R, C);
        }

        MAT(float, Br, Bc, Accumulator) rowmax, P, rowsum, eM;
        coopMatReduceNV(rowmax, S, gl_CooperativeMatrixReduceRowNV, maxReduce);

        MAT(float, Br, Bc, Accumulator) Mold = M;
        // M = max(rowmax, Mold); P = e^(S - M); eM = e^(Mold - M)
        coopMatPerElementNV(M, rowmax, Max, Mold);
        coopMatPerElementNV(P, S - M, Exp);
        coopMatPerElementNV(eM, Mold - M, Exp);
        // and to 0 in P: no part in the row sum
        if (Clamp != 0 &&
            ((j + 1) * Bc > end_j ||
             (i + 1) * Bq > p.N)) {
            uint R = ((i + 1) * Bq > p.N) ? (p.N % Bq) : Bq;
            uint C = ((j + 1) * Bc > end_j) ? (end_j % Bc) : Bc;
            coopMatPerElementNV(P, P, replacePadding, 0.0, R, C);
        }

        MAT(float16_t, Br, Bc, A) P_A = MAT(float16_t, Br, Bc, A)(P);
        coopMatReduceNV(rowsum, P, gl_CooperativeMatrixReduceRowNV, sumReduce);

        MAT(float16_t, Bc, HSV_pad, B) V;
        const bool v_use_decode = bs_v > 1u;
        if (v_use_decode) {
            coopMatLoadTensorNV(V, data_v, v_offset, sliceTensorLayoutNV(tensorLayoutV, j * Bc, Bc, 0, HSV_pad), faDecodeV);
        } else {
            coopMatLoadTensorNV(V, data_v, v_offset, sliceTensorLayoutNV(tensorLayoutV, j * Bc, Bc, 0, HSV_pad));
        }

        L = eM * L + rowsum;

        // eM widened to O's columns: every column of a row holds the row's value
        MAT(float, Br, HSV_pad, Accumulator) eMdiag;
        coopMatReduceNV(eMdiag, eM, gl_CooperativeMatrixReduceRowNV, smearReduce);
        O *= eMdiag;
        O = coopMatMulAdd(P_A, V, O);
    }

    if (p.k_num > 1) {
        // split-K: the reduction of the ranges happens elsewhere
        coopMatPerElementNV(O, O, perElemOpStoreO);
        const uint lm_base = p.k_num * p.N * p.Hq * HSV;
        coopMatPerElementNV(L, L, perElemOpStoreCol0, lm_base);
        coopMatPerElementNV(M, M, perElemOpStoreCol0, lm_base + p.k_num * p.N * p.Hq);
        return;
    }

    MAT(float, Br, HSV_pad, Accumulator) Ldiag;
    coopMatReduceNV(Ldiag, L, gl_CooperativeMatrixReduceRowNV, smearReduce);
    [[unroll]]
    for (int k = 0; k < Ldiag.length(); ++k) {
        Ldiag[k] = (Ldiag[k] == 0.0) ? 0.0 : (1.0 / Ldiag[k]);
    }
    O = Ldiag * O;

    tensorLayoutNV<3, gl_CooperativeMatrixClampModeConstantNV> tensorLayoutD = createTensorLayoutNV(3, gl_CooperativeMatrixClampModeConstantNV);
    tensorLayoutD = setTensorLayoutDimensionNV(tensorLayoutD, p.N, p.Hq, HSV);
    coopMatStoreTensorNV(O, data_o, 0, sliceTensorLayoutNV(tensorLayoutD, i * Bq, Bq, hk * GQA, GQA, 0, HSV_pad), headsMajor);
}
