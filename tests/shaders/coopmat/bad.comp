#version 450
// Misuse of cooperative matrix instructions, chosen by p.mode (one kernel for all):
//   0: correct: copy the 16 x 16 float32 matrix x to y
//   1: the load is reached by lanes 0..15 only (divergent branch)
//   2: the Stride differs between lanes (not dynamically uniform)
//   3: the Pointer differs between lanes
//   4: the store is reached by lanes 16..31 only
//   5: the MulAdd is reached by lanes 0..30 only
//   6: two loads back to back (the scheduler runs them one after the other, with no lane code
//      between), the second with a Pointer that differs between lanes
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 32) in;
layout(push_constant) uniform P { uint mode, stride; } p;
layout(set = 0, binding = 0) readonly buffer BX { float x[]; };
layout(set = 0, binding = 1) buffer BY { float y[]; };
layout(set = 0, binding = 2) readonly buffer BH { float16_t h[]; };
void main() {
    uint lane = gl_SubgroupInvocationID;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> b;
    if (p.mode == 1) {
        if (lane < 16) coopMatLoad(m, x, 0, p.stride, gl_CooperativeMatrixLayoutRowMajor);
    } else if (p.mode == 2) {
        coopMatLoad(m, x, 0, p.stride + (lane & 1), gl_CooperativeMatrixLayoutRowMajor);
    } else if (p.mode == 3) {
        coopMatLoad(m, x, lane / 8, p.stride, gl_CooperativeMatrixLayoutRowMajor);
    } else {
        coopMatLoad(m, x, 0, p.stride, gl_CooperativeMatrixLayoutRowMajor);
    }
    if (p.mode == 5) {
        coopMatLoad(a, h, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(b, h, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
        if (lane < 31) m = coopMatMulAdd(a, b, m);
    }
    if (p.mode == 6) {
        coopMatLoad(a, h, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(b, h, lane / 8, 16, gl_CooperativeMatrixLayoutRowMajor);
        m = coopMatMulAdd(a, b, m);
    }
    if (p.mode != 4 || lane >= 16)
        coopMatStore(m, y, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
