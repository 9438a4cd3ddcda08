#version 450
// One subgroup-scope MulAdd per workgroup: D = A x B + C, each matrix loaded from its own
// buffer with its own layout and stride (spec constants pick the types and shapes).
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x_id = 10) in;
layout(constant_id = 0) const uint M = 16;
layout(constant_id = 1) const uint N = 16;
layout(constant_id = 2) const uint K = 16;
layout(constant_id = 3) const bool A_COLMAJOR = false;
layout(constant_id = 4) const bool B_COLMAJOR = false;
layout(constant_id = 5) const bool C_COLMAJOR = false;
layout(constant_id = 6) const bool D_COLMAJOR = false;
layout(push_constant) uniform P { uint sa, sb, sc, sd; } p;
layout(set = 0, binding = 0) readonly buffer BA { ATYPE a[]; };
layout(set = 0, binding = 1) readonly buffer BB { BTYPE b[]; };
layout(set = 0, binding = 2) readonly buffer BC { CTYPE c[]; };
layout(set = 0, binding = 3) writeonly buffer BD { RTYPE d[]; };
void main() {
    coopmat<ATYPE, gl_ScopeSubgroup, M, K, gl_MatrixUseA> ma;
    coopmat<BTYPE, gl_ScopeSubgroup, K, N, gl_MatrixUseB> mb;
    coopmat<CTYPE, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator> mc;
    coopMatLoad(ma, a, 0, p.sa, A_COLMAJOR ? gl_CooperativeMatrixLayoutColumnMajor : gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, b, 0, p.sb, B_COLMAJOR ? gl_CooperativeMatrixLayoutColumnMajor : gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mc, c, 0, p.sc, C_COLMAJOR ? gl_CooperativeMatrixLayoutColumnMajor : gl_CooperativeMatrixLayoutRowMajor);
    coopmat<RTYPE, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator> md = coopMatMulAdd(ma, mb, MC_CAST(mc) FLAGS);
    coopMatStore(md, d, 0, p.sd, D_COLMAJOR ? gl_CooperativeMatrixLayoutColumnMajor : gl_CooperativeMatrixLayoutRowMajor);
}
