#version 460
// Test data for tests/test_asm.py, compiled with glslang 16.6:
//   glslang -V --target-env vulkan1.3 coopmat_khr.comp -o coopmat_khr.spv
// KHR cooperative matrix: load, multiply-add with saturation, store; a float16 matrix.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require

layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer A { float16_t a[]; };
layout(std430, binding = 1) readonly buffer B { float16_t b[]; };
layout(std430, binding = 2) buffer C { float c[]; };
layout(std430, binding = 3) buffer I { int8_t ia[]; int32_t ic[]; };

void main() {
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> mc;
    coopMatLoad(ma, a, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, b, 0, 16, gl_CooperativeMatrixLayoutColumnMajor);
    coopMatLoad(mc, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    mc = coopMatMulAdd(ma, mb, mc);
    mc = mc * 0.5;
    for (int e = 0; e < mc.length(); ++e) mc[e] += 1.0;
    coopMatStore(mc, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);

    coopmat<int8_t, gl_ScopeSubgroup, 16, 32, gl_MatrixUseA> ia8;
    coopmat<int8_t, gl_ScopeSubgroup, 32, 16, gl_MatrixUseB> ib8;
    coopmat<int32_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> ic32 =
        coopmat<int32_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0);
    coopMatLoad(ia8, ia, 0, 32, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(ib8, ia, 512, 16, gl_CooperativeMatrixLayoutRowMajor);
    ic32 = coopMatMulAdd(ia8, ib8, ic32, gl_MatrixOperandsSaturatingAccumulation);
    coopMatStore(ic32, ic, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
