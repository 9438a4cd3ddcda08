#version 460
// C = A x B for float16 A (M x K) and B (K x N), float32 C (M x N), row-major, all sizes multiples
// of 16. One subgroup per workgroup computes one 16 x 16 tile of C with cooperative matrices;
// dispatch (N / 16, M / 16). The workgroup size is spec constant 0 (local_size_x): give it the
// device's subgroup size.
//   glslang -V --target-env vulkan1.3 gemm_f16.comp -o gemm_f16.spv
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require

layout(local_size_x = 32, local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer MatA { float16_t a[]; };
layout(std430, binding = 1) readonly buffer MatB { float16_t b[]; };
layout(std430, binding = 2) writeonly buffer MatC { float c[]; };
layout(push_constant) uniform Shape { uint M, N, K; } shape;

void main() {
    uint row = gl_WorkGroupID.y * 16, col = gl_WorkGroupID.x * 16;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    for (uint k = 0; k < shape.K; k += 16) {
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
        coopMatLoad(ma, a, row * shape.K + k, shape.K, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(mb, b, k * shape.N + col, shape.N, gl_CooperativeMatrixLayoutRowMajor);
        acc = coopMatMulAdd(ma, mb, acc);
    }
    coopMatStore(acc, c, row * shape.N + col, shape.N, gl_CooperativeMatrixLayoutRowMajor);
}
