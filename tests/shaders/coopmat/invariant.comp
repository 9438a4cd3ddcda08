#version 450
// Lane-invariant (jitcoop/analysis/invariance.py): nothing here tells the invocations apart, so
// jitcoop runs one invocation's code per workgroup. Two subgroups per workgroup (local size 64)
// compute the same tile, with a matrix phi through a loop and element-wise lane code on matrices:
//   o[tile wg] = f16(alpha * (steps * A[wg] x B) + 1)
// A: (G*16) x 16 f16 row-major, B: 16 x 16 f16, o: (G*16) x 16 f16.
// With -DCOUNT every invocation also adds 1 to count[wg] (an atomic: not invariant any more).
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 64) in;
layout(push_constant) uniform P { float alpha; uint steps; } p;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer BO { float16_t o[]; };
layout(set = 0, binding = 3) buffer BC { uint count[]; };
#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
void main() {
    uint wg = gl_WorkGroupID.x;
    ACC acc = ACC(0.0);
    for (uint s = 0; s < p.steps; s++) {
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
        coopMatLoad(ma, a, wg * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(mb, b, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
        acc = coopMatMulAdd(ma, mb, acc);
    }
    acc = acc * p.alpha + ACC(1.0);
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> h =
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(acc);
    coopMatStore(h, o, wg * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
#ifdef COUNT
    atomicAdd(count[wg], 1u);
#endif
}
