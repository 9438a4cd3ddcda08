#version 460
// Flash attention in the style of llama.cpp's flash_attn_cm2, with workgroup-scope matrices:
// O = softmax(scale * Q K^T + mask) V for one block of Br query rows per workgroup, streaming Bc
// keys at a time with the running row max M and row sum L (online softmax). Row max and row sum
// are OpCooperativeMatrixReduceNV with max/add combiners; the exponentials, rescaling and the
// final division are per-element operations; the mask is read through a Constant-clamped tensor
// layout whose clamp value is float16 -inf (0xFC00), so keys past N are masked out.
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable

layout(local_size_x = 128) in;
const uint Br = 32;
const uint Bc = 32;
const uint D = 64;

layout(push_constant) uniform P { uint Nq; uint N; float scale; uint use_mask; } p;

layout(set = 0, binding = 0) readonly buffer Qb { float16_t q[]; };      // Nq x D
layout(set = 0, binding = 1) readonly buffer Kb { float16_t k[]; };      // N x D
layout(set = 0, binding = 2) readonly buffer Vb { float16_t v[]; };      // N x D
layout(set = 0, binding = 3) readonly buffer Mb { float16_t msk[]; };    // Nq x N (added to scores)
layout(set = 0, binding = 4) writeonly buffer Ob { float o[]; };         // Nq x D

float maxf(const in float a, const in float b) { return max(a, b); }
float addf(const in float a, const in float b) { return a + b; }
// exp(x - m): P from the scores, and the factor that rescales old sums when the max grows
float expdiff(const in uint r, const in uint c, const in float x, const in float m) { return exp(x - m); }
float maxpe(const in uint r, const in uint c, const in float x, const in float y) { return max(x, y); }
float lupdate(const in uint r, const in uint c, const in float l, const in float alpha, const in float s) { return l * alpha + s; }
float mulpe(const in uint r, const in uint c, const in float x, const in float y) { return x * y; }
float divpe(const in uint r, const in uint c, const in float x, const in float y) { return x / y; }

#define MAT(T, R, C, U) coopmat<T, gl_ScopeWorkgroup, R, C, gl_MatrixUse##U>

void main() {
    const uint i0 = gl_WorkGroupID.x * Br;
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tQ = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tQ = setTensorLayoutDimensionNV(tQ, p.Nq, D);
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tK = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tK = setTensorLayoutDimensionNV(tK, p.N, D);
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tM = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tM = setTensorLayoutDimensionNV(tM, p.Nq, p.N);
    tM = setTensorLayoutClampValueNV(tM, 0xFC00);
    tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);

    MAT(float16_t, Br, D, A) Q;
    coopMatLoadTensorNV(Q, q, 0, sliceTensorLayoutNV(tQ, i0, Br, 0, D));
    MAT(float, Br, D, Accumulator) O = MAT(float, Br, D, Accumulator)(0.0);
    MAT(float, Br, D, Accumulator) Ld = MAT(float, Br, D, Accumulator)(0.0);
    MAT(float, Br, D, Accumulator) Md = MAT(float, Br, D, Accumulator)(-1e30);
    MAT(float, Br, Bc, Accumulator) Mc = MAT(float, Br, Bc, Accumulator)(-1e30);

    for (uint j = 0; j < p.N; j += Bc) {
        MAT(float16_t, D, Bc, B) Kt;
        coopMatLoadTensorNV(Kt, k, 0, sliceTensorLayoutNV(tK, j, Bc, 0, D), transposed);
        MAT(float, Br, Bc, Accumulator) S = coopMatMulAdd(Q, Kt, MAT(float, Br, Bc, Accumulator)(0.0));
        S = S * p.scale;
        MAT(float16_t, Br, Bc, Accumulator) Mk = MAT(float16_t, Br, Bc, Accumulator)(0.0);
        if (p.use_mask != 0) {
            coopMatLoadTensorNV(Mk, msk, 0, sliceTensorLayoutNV(tM, i0, Br, j, Bc));
        } else {
            // keys past N still masked: the mask's first row for every query row (stride 0),
            // clamped to -inf past N
            tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tZ = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
            tZ = setTensorLayoutDimensionNV(tZ, 1u << 30, p.N);
            tZ = setTensorLayoutStrideNV(tZ, 0, 1);
            tZ = setTensorLayoutClampValueNV(tZ, 0xFC00);
            coopMatLoadTensorNV(Mk, msk, 0, sliceTensorLayoutNV(tZ, 0, Br, j, Bc));
        }
        S += MAT(float, Br, Bc, Accumulator)(Mk);

        MAT(float, Br, Bc, Accumulator) rowmax_c;
        MAT(float, Br, D, Accumulator) rowmax_d;
        coopMatReduceNV(rowmax_c, S, gl_CooperativeMatrixReduceRowNV, maxf);
        coopMatReduceNV(rowmax_d, S, gl_CooperativeMatrixReduceRowNV, maxf);
        MAT(float, Br, Bc, Accumulator) Mc_new;
        MAT(float, Br, D, Accumulator) Md_new;
        coopMatPerElementNV(Mc_new, Mc, maxpe, rowmax_c);
        coopMatPerElementNV(Md_new, Md, maxpe, rowmax_d);

        MAT(float, Br, Bc, Accumulator) P;
        coopMatPerElementNV(P, S, expdiff, Mc_new);
        MAT(float, Br, D, Accumulator) alpha;
        coopMatPerElementNV(alpha, Md, expdiff, Md_new);
        MAT(float, Br, D, Accumulator) rowsum;
        coopMatReduceNV(rowsum, P, gl_CooperativeMatrixReduceRowNV, addf);
        coopMatPerElementNV(Ld, Ld, lupdate, alpha, rowsum);
        coopMatPerElementNV(O, O, mulpe, alpha);

        MAT(float16_t, Bc, D, B) Vt;
        coopMatLoadTensorNV(Vt, v, 0, sliceTensorLayoutNV(tK, j, Bc, 0, D));
        MAT(float16_t, Br, Bc, A) P16 = MAT(float16_t, Br, Bc, A)(P);
        O = coopMatMulAdd(P16, Vt, O);
        Mc = Mc_new;
        Md = Md_new;
    }
    coopMatPerElementNV(O, O, divpe, Ld);
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tO = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tO = setTensorLayoutDimensionNV(tO, p.Nq, D);
    coopMatStoreTensorNV(O, o, 0, sliceTensorLayoutNV(tO, i0, Br, 0, D));
}
