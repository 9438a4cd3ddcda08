#version 450
// Matrices carried over the K steps whose guard fails: one subgroup, 16 x 16 tiles, K = 16 x p.steps.
// Step s loads A's tile s into ma unless bit s of p.skip_a is set (ma keeps the last one loaded,
// zero before any), B's tile into mb always, and adds ma x mb into acc unless bit s of p.skip_acc
// is set. Beside them, old_ma x mb into acc2, old_ma being ma as it was before step s's load (the
// loop's ma still live after the guarded load), and ma after the loop into d.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(push_constant) uniform P { uint steps, skip_a, skip_acc; } p;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer BC { float c[]; };
layout(set = 0, binding = 3) writeonly buffer BD { float16_t d[]; };
#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
void main() {
    ACC acc = ACC(0.0), acc2 = ACC(0.0);
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma =
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>(0.0);
    for (uint s = 0; s < p.steps; s++) {
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> old_ma = ma;
        if ((p.skip_a >> s & 1) == 0)
            coopMatLoad(ma, a, s * 16, 16 * p.steps, gl_CooperativeMatrixLayoutRowMajor);
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
        coopMatLoad(mb, b, s * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
        if ((p.skip_acc >> s & 1) == 0)
            acc = coopMatMulAdd(ma, mb, acc);
        acc2 = coopMatMulAdd(old_ma, mb, acc2);
    }
    coopMatStore(acc, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(acc2, c, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(ma, d, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
