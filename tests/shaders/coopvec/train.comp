#version 460
// Training accumulation from many workgroups: outer products into a float16 TrainingOptimal and
// a float32 row-major matrix, and reduce-sums into float16 and float32 arrays.
#extension GL_NV_cooperative_vector : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer A { float16_t a[]; } av;    // 8 per invocation
layout(set = 0, binding = 1) readonly buffer B { float16_t b[]; } bv;    // 4 per invocation
layout(set = 0, binding = 2) buffer G16 { float16_t g[]; } g16;          // 8x4 training-optimal
layout(set = 0, binding = 3) buffer G32 { float g[]; } g32;              // 8x4 row-major, stride 32
layout(set = 0, binding = 4) buffer S16 { float16_t s[]; } s16;          // 8
layout(set = 0, binding = 5) buffer S32 { float s[]; } s32;              // 4
void main() {
  uint i = gl_GlobalInvocationID.x;
  coopvecNV<float16_t, 8> x;
  coopvecNV<float16_t, 4> y;
  coopVecLoadNV(x, av.a, i * 16);
  coopVecLoadNV(y, bv.b, i * 8);
  if ((i & 1u) == 0u) {     // divergent: even lanes accumulate here, odd lanes below
    coopVecOuterProductAccumulateNV(x, y, g16.g, 0, 0, gl_CooperativeVectorMatrixLayoutTrainingOptimalNV, gl_ComponentTypeFloat16NV);
  } else {
    coopVecOuterProductAccumulateNV(x, y, g16.g, 0, 0, gl_CooperativeVectorMatrixLayoutTrainingOptimalNV, gl_ComponentTypeFloat16NV);
  }
  coopVecOuterProductAccumulateNV(x, y, g32.g, 0, 32, gl_CooperativeVectorMatrixLayoutRowMajorNV, gl_ComponentTypeFloat32NV);
  coopVecReduceSumAccumulateNV(x, s16.s, 0);
  coopvecNV<float, 4> yf = coopvecNV<float, 4>(y);
  coopVecReduceSumAccumulateNV(yf, s32.s, 0);
}
