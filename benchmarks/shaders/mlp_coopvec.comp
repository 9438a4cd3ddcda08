#version 460
// A 3-layer MLP per invocation (64 -> 64 -> 64 -> 16, float16 weights and activations, ReLU)
// with cooperative vectors. Weights row-major (stride 128 bytes), biases after them.
#extension GL_NV_cooperative_vector : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer In { float16_t x[]; } inb;
layout(set = 0, binding = 1) readonly buffer Net { uint8_t w[]; } net;
layout(set = 0, binding = 2) buffer Out { float16_t y[]; } outb;
const uint W1 = 0, W2 = 8192, W3 = 16384, B1 = 18432, B2 = 18560, B3 = 18688;
#define F16 gl_ComponentTypeFloat16NV
#define RM gl_CooperativeVectorMatrixLayoutRowMajorNV
void main() {
  uint i = gl_GlobalInvocationID.x;
  coopvecNV<float16_t, 64> x;
  coopVecLoadNV(x, inb.x, i * 128);
  coopvecNV<float16_t, 64> h;
  coopVecMatMulAddNV(h, x, F16, net.w, W1, F16, net.w, B1, F16, 64, 64, RM, false, 128);
  h = max(h, coopvecNV<float16_t, 64>(0.0));
  coopvecNV<float16_t, 64> g;
  coopVecMatMulAddNV(g, h, F16, net.w, W2, F16, net.w, B2, F16, 64, 64, RM, false, 128);
  g = max(g, coopvecNV<float16_t, 64>(0.0));
  coopvecNV<float16_t, 16> y;
  coopVecMatMulAddNV(y, g, F16, net.w, W3, F16, net.w, B3, F16, 16, 64, RM, false, 128);
  coopVecStoreNV(y, outb.y, i * 32);
}
