#version 460
// Multi-head flash attention in the shape of llama.cpp's flash_attn_cm2, workgroup scope:
// O = softmax(scale * Q K^T) V per head, one block of Br query rows per workgroup (workgroup y:
// the head), streaming Bc keys at a time with a running row max and row sum (online softmax).
// Q, K, V: H x N x D f16 (head-major), O: H x Nq x D f32. Row max and row sum are
// OpCooperativeMatrixReduceNV; the exponentials, rescaling and the final division per-element
// operations; K^T read through a transposed tensor view; P converted to f16 for P x V.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 256) in;
const uint Br = 64, Bc = 64, D = 64;
layout(push_constant) uniform P { uint Nq, N; float scale; } p;
layout(set = 0, binding = 0) readonly buffer Qb { float16_t q[]; };
layout(set = 0, binding = 1) readonly buffer Kb { float16_t k[]; };
layout(set = 0, binding = 2) readonly buffer Vb { float16_t v[]; };
layout(set = 0, binding = 3) writeonly buffer Ob { float o[]; };

float maxf(const in float a, const in float b) { return max(a, b); }
float addf(const in float a, const in float b) { return a + b; }
float expdiff(const in uint r, const in uint c, const in float x, const in float m) { return exp(x - m); }
float maxpe(const in uint r, const in uint c, const in float x, const in float y) { return max(x, y); }
float lupdate(const in uint r, const in uint c, const in float l, const in float alpha, const in float s) { return l * alpha + s; }
float mulpe(const in uint r, const in uint c, const in float x, const in float y) { return x * y; }
float divpe(const in uint r, const in uint c, const in float x, const in float y) { return x / y; }

#define MAT(T, R, C, U) coopmat<T, gl_ScopeWorkgroup, R, C, gl_MatrixUse##U>
#define LAYOUT tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV>

void main() {
    const uint i0 = gl_WorkGroupID.x * Br, head = gl_WorkGroupID.y;
    const uint qbase = head * p.Nq * D, kvbase = head * p.N * D;
    LAYOUT tQ = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tQ = setTensorLayoutDimensionNV(tQ, p.Nq, D);
    LAYOUT tK = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tK = setTensorLayoutDimensionNV(tK, p.N, D);
    tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);

    MAT(float16_t, Br, D, A) Q;
    coopMatLoadTensorNV(Q, q, qbase, sliceTensorLayoutNV(tQ, i0, Br, 0, D));
    MAT(float, Br, D, Accumulator) O = MAT(float, Br, D, Accumulator)(0.0);
    MAT(float, Br, D, Accumulator) L = MAT(float, Br, D, Accumulator)(0.0);
    MAT(float, Br, D, Accumulator) Md = MAT(float, Br, D, Accumulator)(-1e30);
    MAT(float, Br, Bc, Accumulator) Mc = MAT(float, Br, Bc, Accumulator)(-1e30);

    for (uint j = 0; j < p.N; j += Bc) {
        MAT(float16_t, D, Bc, B) Kt;
        coopMatLoadTensorNV(Kt, k, kvbase, sliceTensorLayoutNV(tK, j, Bc, 0, D), transposed);
        MAT(float, Br, Bc, Accumulator) S = coopMatMulAdd(Q, Kt, MAT(float, Br, Bc, Accumulator)(0.0));
        S = S * p.scale;

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
        coopMatPerElementNV(L, L, lupdate, alpha, rowsum);
        coopMatPerElementNV(O, O, mulpe, alpha);

        MAT(float16_t, Bc, D, B) Vm;
        coopMatLoadTensorNV(Vm, v, kvbase, sliceTensorLayoutNV(tK, j, Bc, 0, D));
        O = coopMatMulAdd(MAT(float16_t, Br, Bc, A)(P), Vm, O);
        Mc = Mc_new;
        Md = Md_new;
    }
    coopMatPerElementNV(O, O, divpe, L);
    coopMatStoreTensorNV(O, o, qbase, sliceTensorLayoutNV(tQ, i0, Br, 0, D));
}
