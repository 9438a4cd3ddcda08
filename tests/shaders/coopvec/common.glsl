// Shared by the mm_*.comp shaders: IN_T/ISZ (input type and size), OUT_T/OSZ (result), KIN
// (input components), NVAR (variants) and a CASES macro of `case N: ...; break;` lines.
#extension GL_NV_cooperative_vector : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 32) in;
layout(constant_id = 0) const int M = 6;
layout(constant_id = 1) const int K = 10;
layout(set = 0, binding = 0) buffer In { IN_T x[]; } inb;
layout(set = 0, binding = 1) readonly buffer Mat { uint8_t m[]; } mat;
layout(set = 0, binding = 2) readonly buffer Bias { uint8_t b[]; } bias;
layout(set = 0, binding = 3) buffer Out { OUT_T r[]; } outb;
// variant < 0: lane i runs variant i % NVAR (lanes of one workgroup reach different MatMuls)
layout(set = 0, binding = 4) readonly buffer Params { uint mat_off[16]; uint bias_off[16]; uint stride[16]; int variant; } prm;
#define MMA(II, MI, BI, LAY, TR) coopVecMatMulAddNV(r, v, II, mat.m, mo, MI, bias.b, bo, BI, M, K, LAY, TR, st)
#define MM(II, MI, LAY, TR) coopVecMatMulNV(r, v, II, mat.m, mo, MI, M, K, LAY, TR, st)
#define RM gl_CooperativeVectorMatrixLayoutRowMajorNV
#define CM gl_CooperativeVectorMatrixLayoutColumnMajorNV
#define IO gl_CooperativeVectorMatrixLayoutInferencingOptimalNV
#define TO gl_CooperativeVectorMatrixLayoutTrainingOptimalNV
void main() {
  uint lane = gl_GlobalInvocationID.x;
  coopvecNV<IN_T, KIN> v;
  coopVecLoadNV(v, inb.x, lane * KIN * ISZ);
  int var = prm.variant >= 0 ? prm.variant : int(lane % NVAR);
  uint mo = prm.mat_off[var], bo = prm.bias_off[var], st = prm.stride[var];
  coopvecNV<OUT_T, M> r = coopvecNV<OUT_T, M>(0);
  switch (var) {
    CASES
  }
  coopVecStoreNV(r, outb.r, lane * M * OSZ);
}
