#version 460
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_EXT_shader_atomic_int64 : enable
#extension GL_EXT_shader_atomic_float : enable
// Atomics from many workgroups (running on several threads): every result is exact.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer C {
  uint64_t sum64; int64_t min64; int64_t max64; uint64_t or64;
  uint cnt; int smin; uint umax; uint xr; uint cas; float fsum; uint slots[];
} c;
void main() {
  uint g = gl_GlobalInvocationID.x;
  atomicAdd(c.sum64, uint64_t(g) * 4294967296ul + 1ul);
  atomicMin(c.min64, -int64_t(g) * 3000000000l);
  atomicMax(c.max64, int64_t(g) * 3000000000l);
  atomicOr(c.or64, 1ul << (g % 64u));
  uint ticket = atomicAdd(c.cnt, 1u);
  c.slots[ticket] = g + 1u;          // every ticket distinct: each slot written once
  atomicMin(c.smin, int(g) - 1000);
  atomicMax(c.umax, g * 3u);
  atomicXor(c.xr, g);
  atomicCompSwap(c.cas, g, g + 1u);  // a chain: only the invocation holding the current value moves it
  atomicAdd(c.fsum, 0.5);
}
