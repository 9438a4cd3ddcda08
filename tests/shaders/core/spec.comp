#version 460
// Specialization: LocalSizeId, an array length from OpSpecConstantOp, a bool spec constant set
// from a 4-byte value, a switch on a spec constant, push constants and Private globals.
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 8;
layout(constant_id = 1) const uint K = 3;
layout(constant_id = 2) const bool DOUBLE = false;
layout(constant_id = 3) const int MODE = 0;
layout(std430, binding = 0) buffer O { uint o[]; };
layout(push_constant) uniform P { uint base; } pc;
shared uint tile[K * 4u];                 // length: OpSpecConstantOp IMul
uint private_counter = 5u;                // a Private global with an initializer
void bump() { private_counter += 1u; }
void main() {
  uint i = gl_LocalInvocationID.x;
  if (i < K * 4u) tile[i] = i * 10u;
  barrier();
  bump(); bump();
  uint v = tile[i % (K * 4u)] + pc.base + private_counter;
  if (DOUBLE) v *= 2u;
  switch (MODE) {
    case 0: v += 1000u; break;
    case 1: v += 2000u; break;
    default: v += 3000u; break;
  }
  o[gl_GlobalInvocationID.x] = v;
  o[gl_NumWorkGroups.x * WG + gl_GlobalInvocationID.x] = gl_WorkGroupSize.x + K * 4u;
}
