#version 450
// A two-layer network (the proposal's neural texture decompression example): the accumulator of
// layer 1 goes back to the invocations (OpCompositeExtractCoopMatQCOM), through a ReLU per
// invocation, and becomes matrix A of layer 2 (OpCompositeConstructCoopMatQCOM). Invocation i of
// subgroup q holds the 16 input features of sample 64 q + i and gets its 16 outputs:
//   y = f16(relu(f16(x W0 + b0)) W1 + b1), W0 and W1 16 x 16 row major, b0 and b1 16 wide;
// each bias becomes an accumulator whose every row is the bias (every invocation's array).
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_QCOM_cooperative_matrix_conversion : require
layout(local_size_x = 64) in;
struct V16 { float16_t v[16]; };
layout(set = 0, binding = 0) readonly buffer BX { V16 x[]; };
layout(set = 0, binding = 1) readonly buffer BW { float16_t w[]; };      // W0 then W1
layout(set = 0, binding = 2) readonly buffer BB { V16 bias[2]; };
layout(set = 0, binding = 3) writeonly buffer BY { V16 y[]; };
void main() {
    uint g = gl_GlobalInvocationID.x;
    coopmat<float16_t, gl_ScopeSubgroup, 64, 16, gl_MatrixUseA> matA0, matA1;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> matB0, matB1;
    coopmat<float16_t, gl_ScopeSubgroup, 64, 16, gl_MatrixUseAccumulator> matC1, matC2;
    coopMatLoad(matB0, w, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(matB1, w, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    vectorToCoopmatQCOM(bias[0].v, matC1);
    vectorToCoopmatQCOM(bias[1].v, matC2);

    float16_t vecA0[16] = x[g].v;
    vectorToCoopmatQCOM(vecA0, matA0);
    matC1 = coopMatMulAdd(matA0, matB0, matC1);

    float16_t vecA1[16];
    coopmatToVectorQCOM(matC1, vecA1);
    for (int i = 0; i < 16; i++) vecA1[i] = max(vecA1[i], float16_t(0));
    vectorToCoopmatQCOM(vecA1, matA1);
    matC2 = coopMatMulAdd(matA1, matB1, matC2);

    float16_t vecC2[16];
    coopmatToVectorQCOM(matC2, vecC2);
    y[g].v = vecC2;
}
