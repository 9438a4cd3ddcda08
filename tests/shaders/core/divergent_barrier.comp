#version 460
// Two halves of the workgroup wait at two different barriers: undefined on a GPU, an error here.
// (Lanes that have returned do not hold a barrier up, as on NVIDIA hardware.)
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer O { uint o[]; };
void main() {
  uint i = gl_LocalInvocationID.x;
  o[i] = 1u;
  if (i < 32u) {
    barrier();
    o[i] = 2u;
  } else {
    barrier();
    o[i] = 3u;
  }
}
