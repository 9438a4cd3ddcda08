#version 460
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
// Divergent control flow: per-lane trip counts with break/continue, switch with fallthrough,
// a return from inside a loop of a called function, a barrier inside a called function inside a
// loop, and a subgroup reduction in divergent code.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer O { int o[]; };
layout(std430, binding = 1) readonly buffer I { int a[]; };
shared int sh[64];
int find_first(int start, int key) {
  for (int j = start; j < 64; j++) {
    if (a[j] == key) return j;
    if (a[j] < 0) break;
  }
  return -1;
}
void stage(uint i) { sh[i] = a[i] * 2; barrier(); }
int sw(int v) {
  int r = 0;
  switch (v & 7) {
    case 0: r += 1;
    case 1: r += 10; break;
    case 2: case 3: r += 100; break;
    case 4: return -5;
    default: r += 1000;
  }
  return r;
}
void main() {
  uint i = gl_LocalInvocationID.x;
  int acc = 0;
  for (int k = 0; k < 3; k++) {
    stage(i);
    acc += sh[(i + uint(k)) % 64u];
    barrier();
  }
  int f = find_first(int(i), 7);
  int t = 0;
  for (int k = 0; k < int(i % 5u) + a[i] % 3; k++) {
    if (k == 2) continue;
    if (k > 4) break;
    t += k;
  }
  int s = 0;
  if (i % 3u == 0u) s = subgroupAdd(int(i));
  o[i] = acc;
  o[64 + i] = f;
  o[128 + i] = t;
  o[192 + i] = sw(a[i] + int(i));
  o[256 + i] = s;
  if (a[i] == 3) return;        // early return: lanes with a[i] == 3 leave o[320 + i] alone
  o[320 + i] = 1;
}
