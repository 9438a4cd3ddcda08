#version 460
// Per-lane operations on cooperative vectors: arithmetic, scalar multiply, GLSL.std.450, bit
// operations, conversions, bitcasts, dynamic extract/insert, construct, select/phi, function
// parameters; loads and stores through workgroup memory and buffer_reference pointers.
#extension GL_NV_cooperative_vector : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 16) in;
layout(buffer_reference, std430) buffer Ptr { float d[]; };
layout(set = 0, binding = 0) buffer In { float x[]; } inb;          // 8 per invocation
layout(set = 0, binding = 1) buffer Out { float o[]; } outb;        // 8 x NOUT per invocation
layout(set = 0, binding = 2) buffer IOut { uint o[]; } ioutb;       // 8 x 3 per invocation
layout(push_constant) uniform P { Ptr phys; } pc;
shared float sh[16 * 8];
const int NOUT = 10;
coopvecNV<float, 8> twice(coopvecNV<float, 8> v) { return v + v; }
void main() {
  uint i = gl_LocalInvocationID.x;
  uint g = gl_GlobalInvocationID.x;
  coopvecNV<float, 8> v;
  coopVecLoadNV(v, inb.x, g * 32);
  coopvecNV<float, 8> w = coopvecNV<float, 8>(0.5);
  uint ob = g * 8 * NOUT * 4;
  coopVecStoreNV(v * w - v / (w + coopvecNV<float, 8>(1.0)), outb.o, ob + 0);
  coopVecStoreNV(v * 3.0, outb.o, ob + 32);
  coopVecStoreNV(max(v, coopvecNV<float, 8>(0.0)), outb.o, ob + 64);
  coopVecStoreNV(tanh(v) + exp(-v * v) + atan(v), outb.o, ob + 96);
  coopVecStoreNV(clamp(v, coopvecNV<float, 8>(-0.5), coopvecNV<float, 8>(0.75)) + step(coopvecNV<float, 8>(0.1), v), outb.o, ob + 128);
  coopVecStoreNV(fma(v, v, w) + log(max(v, -v) + coopvecNV<float, 8>(1.0)), outb.o, ob + 160);
  coopvecNV<float, 8> u = v;
  u[i & 7u] = 100.0 + v[(i + 1u) & 7u];
  coopVecStoreNV((g & 1u) == 0u ? u : twice(v), outb.o, ob + 192);
  // through workgroup memory: each invocation writes its vector, reads its neighbour's
  coopVecStoreNV(v, sh, i * 32);
  barrier();
  coopvecNV<float, 8> nb;
  coopVecLoadNV(nb, sh, ((i + 1u) % 16u) * 32);
  coopVecStoreNV(nb, outb.o, ob + 224);
  // through a buffer_reference pointer
  coopvecNV<float, 8> ph;
  coopVecLoadNV(ph, pc.phys.d, g * 32);
  coopVecStoreNV(-ph, pc.phys.d, g * 32);
  coopvecNV<float, 8> acc = coopvecNV<float, 8>(0.0);
  for (int k = 0; k < int(i % 3u) + 1; k++) acc = acc + v;   // a phi of vectors
  coopVecStoreNV(acc, outb.o, ob + 256);
  coopvecNV<float16_t, 8> h = coopvecNV<float16_t, 8>(v);
  coopVecStoreNV(coopvecNV<float, 8>(h * h), outb.o, ob + 288);
  coopvecNV<int32_t, 8> iv = coopvecNV<int32_t, 8>(v * 10.0f);
  coopvecNV<uint32_t, 8> bits = coopvecNV<uint32_t, 8>(iv);
  coopVecStoreNV(((bits << coopvecNV<uint32_t, 8>(3)) ^ (bits >> coopvecNV<uint32_t, 8>(1))) | coopvecNV<uint32_t, 8>(1), ioutb.o, g * 96);
  coopVecStoreNV(coopvecNV<uint32_t, 8>(min(iv, coopvecNV<int32_t, 8>(7)) - iv * coopvecNV<int32_t, 8>(2)), ioutb.o, g * 96 + 32);
  coopVecStoreNV(coopvecNV<uint32_t, 8>(-iv), ioutb.o, g * 96 + 64);
}
