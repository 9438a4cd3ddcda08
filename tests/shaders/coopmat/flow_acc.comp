#version 450
// A loop-carried accumulator whose old value is still used after the MulAdd that replaces it
// (the phi and the MulAdd result must not share storage), and one whose is not (they may):
// out[i] = the accumulator before step i, then the final one; acc2 = the same sum, kept apart.
// Built with spirv-opt -O so that both are phis.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(push_constant) uniform P { uint n; } p;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer BO { float o[]; };
#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
void main() {
    ACC acc = ACC(0.0), acc2 = ACC(1.0);
    for (uint i = 0; i < p.n; i++) {
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
        coopMatLoad(ma, a, i * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(mb, b, i * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
        ACC prev = acc;
        acc = coopMatMulAdd(ma, mb, acc);
        acc2 = coopMatMulAdd(ma, mb, acc2);
        coopMatStore(prev, o, i * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    }
    coopMatStore(acc, o, p.n * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(acc2, o, (p.n + 1) * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
}
