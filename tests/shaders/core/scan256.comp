#version 460
// Workgroup inclusive prefix sum of 256 values (Hillis-Steele, log-step with barriers).
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer In { uint a[]; };
layout(std430, binding = 1) writeonly buffer Out { uint b[]; };
shared uint tmp[256];
void main() {
  uint i = gl_LocalInvocationID.x, g = gl_GlobalInvocationID.x;
  tmp[i] = a[g];
  barrier();
  for (uint s = 1; s < 256; s <<= 1) {
    uint v = i >= s ? tmp[i - s] : 0;
    barrier();
    tmp[i] += v;
    barrier();
  }
  b[g] = tmp[i];
}
