#version 450
// A 16 x 64 tile per subgroup (spec constant 0: the subgroup size) as four named accumulators in a
// row, the K loop unrolled by two by hand (named operands, a K step of 32), A row-major and B
// column-major (stored N x K), both loaded straight from the storage buffers.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
layout(push_constant) uniform P { uint M, N, K; } p;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer BC { float c[]; };
#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define MA coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define MB coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
void main() {
    uint row0 = gl_WorkGroupID.y * 16, col0 = gl_WorkGroupID.x * 64;
    ACC c0 = ACC(0.0), c1 = ACC(0.0), c2 = ACC(0.0), c3 = ACC(0.0);
    for (uint k = 0; k < p.K; k += 32) {
        MA a0, a1; MB b00, b01, b02, b03, b10, b11, b12, b13;
        coopMatLoad(a0, a, row0 * p.K + k, p.K, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(a1, a, row0 * p.K + k + 16, p.K, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(b00, b, (col0 + 0) * p.K + k, p.K, gl_CooperativeMatrixLayoutColumnMajor);
        coopMatLoad(b01, b, (col0 + 16) * p.K + k, p.K, gl_CooperativeMatrixLayoutColumnMajor);
        coopMatLoad(b02, b, (col0 + 32) * p.K + k, p.K, gl_CooperativeMatrixLayoutColumnMajor);
        coopMatLoad(b03, b, (col0 + 48) * p.K + k, p.K, gl_CooperativeMatrixLayoutColumnMajor);
        coopMatLoad(b10, b, (col0 + 0) * p.K + k + 16, p.K, gl_CooperativeMatrixLayoutColumnMajor);
        coopMatLoad(b11, b, (col0 + 16) * p.K + k + 16, p.K, gl_CooperativeMatrixLayoutColumnMajor);
        coopMatLoad(b12, b, (col0 + 32) * p.K + k + 16, p.K, gl_CooperativeMatrixLayoutColumnMajor);
        coopMatLoad(b13, b, (col0 + 48) * p.K + k + 16, p.K, gl_CooperativeMatrixLayoutColumnMajor);
        c0 = coopMatMulAdd(a0, b00, c0); c1 = coopMatMulAdd(a0, b01, c1);
        c2 = coopMatMulAdd(a0, b02, c2); c3 = coopMatMulAdd(a0, b03, c3);
        c0 = coopMatMulAdd(a1, b10, c0); c1 = coopMatMulAdd(a1, b11, c1);
        c2 = coopMatMulAdd(a1, b12, c2); c3 = coopMatMulAdd(a1, b13, c3);
    }
    coopMatStore(c0, c, row0 * p.N + col0, p.N, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(c1, c, row0 * p.N + col0 + 16, p.N, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(c2, c, row0 * p.N + col0 + 32, p.N, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(c3, c, row0 * p.N + col0 + 48, p.N, gl_CooperativeMatrixLayoutRowMajor);
}
