#version 460
// VK_QCOM_cooperative_matrix_conversion: each invocation's 16 float16 values become its row of
// a 64 x 16 MatrixA (vectorToCoopmatQCOM), stored row major to o; the matrix is read back into
// per-invocation arrays (coopmatToVectorQCOM) in back. Subgroup size 64 (the qualcomm profile).
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_QCOM_cooperative_matrix_conversion : require
layout(local_size_x = 64) in;
struct Row { float16_t v[16]; };
layout(std430, set = 0, binding = 0) readonly buffer I { Row rows[]; };
layout(std430, set = 0, binding = 1) writeonly buffer O { float16_t o[]; };
layout(std430, set = 0, binding = 2) writeonly buffer B { Row back[]; };
void main() {
    uint i = gl_LocalInvocationID.x;
    coopmat<float16_t, gl_ScopeSubgroup, 64, 16, gl_MatrixUseA> a;
    vectorToCoopmatQCOM(rows[i].v, a);
    coopMatStore(a, o, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmatToVectorQCOM(a, back[i].v);
}
