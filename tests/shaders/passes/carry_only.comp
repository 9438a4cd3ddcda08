#version 450
// carry.comp without old_ma and without ma after the loop: the shape where the carried matrices
// share rows with the loop's phis (analysis/matrices._coalesce_merges).
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(push_constant) uniform P { uint steps, skip_a, skip_acc; } p;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer BC { float c[]; };
#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
void main() {
    ACC acc = ACC(0.0);
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma =
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>(0.0);
    for (uint s = 0; s < p.steps; s++) {
        if ((p.skip_a >> s & 1) == 0)
            coopMatLoad(ma, a, s * 16, 16 * p.steps, gl_CooperativeMatrixLayoutRowMajor);
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
        coopMatLoad(mb, b, s * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
        if ((p.skip_acc >> s & 1) == 0)
            acc = coopMatMulAdd(ma, mb, acc);
    }
    coopMatStore(acc, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
