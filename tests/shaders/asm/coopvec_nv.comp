#version 460
// Test data for tests/test_asm.py, compiled with glslang 16.6:
//   glslang -V --target-env vulkan1.3 coopvec_nv.comp -o coopvec_nv.spv
// NV cooperative vectors: load, matrix-vector multiply(-add), outer product and reduce-sum.
#extension GL_NV_cooperative_vector : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require

layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer Weights { float16_t w[]; };
layout(std430, binding = 1) buffer Inputs { float16_t x[]; };
layout(std430, binding = 2) buffer Outputs { float16_t y[]; };

void main() {
    coopvecNV<float16_t, 16> in16;
    coopVecLoadNV(in16, x, 16 * gl_LocalInvocationIndex * 2);
    coopvecNV<float16_t, 8> out8;
    coopVecMatMulNV(out8, in16, gl_ComponentTypeFloat16NV, w, 0, gl_ComponentTypeFloat16NV,
                    8, 16, gl_CooperativeVectorMatrixLayoutRowMajorNV, false, 32);
    coopVecMatMulAddNV(out8, in16, gl_ComponentTypeFloat16NV, w, 256, gl_ComponentTypeFloat16NV,
                       w, 512, gl_ComponentTypeFloat16NV, 8, 16,
                       gl_CooperativeVectorMatrixLayoutInferencingOptimalNV, false, 0);
    out8 = out8 * float16_t(2.0) + coopvecNV<float16_t, 8>(float16_t(-1.5));
    coopVecStoreNV(out8, y, 16 * gl_LocalInvocationIndex);
    coopVecOuterProductAccumulateNV(out8, in16, w, 1024, 0,
                                    gl_CooperativeVectorMatrixLayoutTrainingOptimalNV,
                                    gl_ComponentTypeFloat16NV);
    coopVecReduceSumAccumulateNV(out8, w, 2048);
}
