#version 450
// Implicit-im2col convolution (the VK_QCOM_cooperative_matrix_conversion proposal's first
// example): NHWC float16 input x [images][H][W][CIN], filter f [FH][FW][CIN][COUT] float16,
// output o [images][H * W][COUT] float32; stride 1, dilation 1, zero padding ("same" size).
// One subgroup per image: invocation i computes output pixel i (a row of the M = H * W = 64 tile).
// Per filter tap and 16-channel step, each invocation reads its shifted input pixel's channels as
// a vector (zero outside the image), the vectors become matrix A (OpCompositeConstructCoopMatQCOM),
// the filter slice is matrix B (coopMatLoad), and C += A x B.
// The image and output position are computed where they are used, inside the loop; built with
// -DPOSITION_BEFORE_LOOP (conv_outer.spv) they are set once before it, which trips a jitcoop spill
// bug (tests/test_coopmat_qcom.py, test_conv_position_before_the_loop: a strict xfail).
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_QCOM_cooperative_matrix_conversion : require
layout(local_size_x = 64) in;
const int H = 8, W = 8, CIN = 32, COUT = 32, FH = 3, FW = 3, STRIDE = 1, DILATION = 1;
const uint TILE_M = 64, TILE_K = 16, TILE_N = COUT;
layout(set = 0, binding = 0) readonly buffer BX { float16_t x[]; };
layout(set = 0, binding = 1) readonly buffer BF { float16_t f[]; };
layout(set = 0, binding = 2) writeonly buffer BO { float o[]; };
void main() {
#ifdef POSITION_BEFORE_LOOP
    int img = int(gl_WorkGroupID.x);
    int out_row = int(gl_SubgroupInvocationID) / W, out_col = int(gl_SubgroupInvocationID) % W;
#else
#define img int(gl_WorkGroupID.x)
#endif
    coopmat<float, gl_ScopeSubgroup, TILE_M, TILE_N, gl_MatrixUseAccumulator> matC =
        coopmat<float, gl_ScopeSubgroup, TILE_M, TILE_N, gl_MatrixUseAccumulator>(0.0);
    for (int step = 0; step < CIN; step += int(TILE_K)) {
        for (int filter_row = 0; filter_row < FH; filter_row++) {
            for (int filter_col = 0; filter_col < FW; filter_col++) {
                coopmat<float16_t, gl_ScopeSubgroup, TILE_K, TILE_N, gl_MatrixUseB> matB;
                coopMatLoad(matB, f, ((filter_row * FW + filter_col) * CIN + step) * COUT, COUT,
                            gl_CooperativeMatrixLayoutRowMajor);
#ifndef POSITION_BEFORE_LOOP
                int out_row = int(gl_SubgroupInvocationID) / W;
                int out_col = int(gl_SubgroupInvocationID) % W;
#endif
                int input_row = STRIDE * out_row + DILATION * (filter_row - FH / 2);
                int input_col = STRIDE * out_col + DILATION * (filter_col - FW / 2);
                float16_t vecA[TILE_K];
                if (input_row < 0 || input_row >= H || input_col < 0 || input_col >= W) {
                    for (int i = 0; i < TILE_K; i++) vecA[i] = float16_t(0);
                } else {
                    for (int i = 0; i < TILE_K; i++)
                        vecA[i] = x[((img * H + input_row) * W + input_col) * CIN + step + i];
                }
                coopmat<float16_t, gl_ScopeSubgroup, TILE_M, TILE_K, gl_MatrixUseA> matA;
                vectorToCoopmatQCOM(vecA, matA);
                matC = coopMatMulAdd(matA, matB, matC);
            }
        }
    }
    coopMatStore(matC, o, img * TILE_M * TILE_N, TILE_N, gl_CooperativeMatrixLayoutRowMajor);
}
