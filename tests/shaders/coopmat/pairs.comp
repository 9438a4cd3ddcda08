#version 450
// MulAdds with one A run back to back (computed as pairs: rules.khr_coopmat.muladd_pairs):
// R (8S x 24, f32) = C + A (8S x K, f16) x B (K x 24, f16) as three 8-column tiles, 8 rows for
// each of the workgroup's S subgroups (local size from spec constant 0). Default: acc0, acc1,
// acc2 = MulAdd(ma, mb0/1/2, acc0/1/2), a pair and a third with the same A on its own. DEP:
// acc0 takes mb0 then mb1 (the second reads the first's result: no pair), acc1 takes mb2, acc2
// stays C. INV: every subgroup takes rows 0-7 (no invocation can differ from another: one runs).
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x_id = 0) in;
layout(push_constant) uniform P { uint K; } p;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };
layout(set = 0, binding = 2) buffer BC { float c[]; };
#define ACC coopmat<float, gl_ScopeSubgroup, 8, 8, gl_MatrixUseAccumulator>
#define ROW gl_CooperativeMatrixLayoutRowMajor
void main() {
#ifdef INV
    uint sid = 0;
#else
    uint sid = gl_SubgroupID;
#endif
    uint arow = sid * 8 * p.K, crow = sid * 8 * 24;
    ACC acc0, acc1, acc2;
    coopMatLoad(acc0, c, crow, 24, ROW);
    coopMatLoad(acc1, c, crow + 8, 24, ROW);
    coopMatLoad(acc2, c, crow + 16, 24, ROW);
    for (uint k = 0; k < p.K; k += 8) {
        coopmat<float16_t, gl_ScopeSubgroup, 8, 8, gl_MatrixUseA> ma;
        coopmat<float16_t, gl_ScopeSubgroup, 8, 8, gl_MatrixUseB> mb0, mb1, mb2;
        coopMatLoad(ma, a, arow + k, p.K, ROW);
        coopMatLoad(mb0, b, k * 24, 24, ROW);
        coopMatLoad(mb1, b, k * 24 + 8, 24, ROW);
        coopMatLoad(mb2, b, k * 24 + 16, 24, ROW);
#ifdef DEP
        acc0 = coopMatMulAdd(ma, mb0, acc0);
        acc0 = coopMatMulAdd(ma, mb1, acc0);
        acc1 = coopMatMulAdd(ma, mb2, acc1);
#else
        acc0 = coopMatMulAdd(ma, mb0, acc0);
        acc1 = coopMatMulAdd(ma, mb1, acc1);
        acc2 = coopMatMulAdd(ma, mb2, acc2);
#endif
    }
    coopMatStore(acc0, c, crow, 24, ROW);
    coopMatStore(acc1, c, crow + 8, 24, ROW);
    coopMatStore(acc2, c, crow + 16, 24, ROW);
}
