#version 460
// Every invocation adds the same vector, read at gl_WorkGroupID, into one float32 sum
// (coopVecReduceSumAccumulateNV: an atomic add per component). Nothing tells the invocations
// apart, so jitcoop runs one invocation's code per workgroup (jitcoop/analysis/invariance.py),
// yet the accumulation is a collective over every invocation: s[i] = 64 * sum over workgroups
// of x[wg * 4 + i].
#extension GL_NV_cooperative_vector : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer X { float x[]; } xv;
layout(set = 0, binding = 1) buffer S { float s[]; } sv;
void main() {
  coopvecNV<float, 4> v;
  coopVecLoadNV(v, xv.x, gl_WorkGroupID.x * 16);
  coopVecReduceSumAccumulateNV(v, sv.s, 0);
}
