#version 460
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_EXT_buffer_reference : enable
#extension GL_EXT_shader_atomic_int64 : enable
// buffer_reference linked list, std140 vs std430 layouts, 8/16-bit storage, 64-bit atomics.
layout(local_size_x = 32) in;
layout(buffer_reference) buffer Node;
layout(buffer_reference, std430) buffer Node { int value; Node next; };
struct S { vec3 p; float w; mat2 m; float arr[2]; };
layout(std140, binding = 0) uniform U140 { S s; vec4 v[3]; float f[3]; } u;
layout(std430, binding = 1) readonly buffer B430 { S s; vec4 v[3]; float f[3]; } b;
layout(std430, binding = 2) buffer Out { int64_t total; int64_t mn; uint64_t orr; float o[]; } o;
layout(std430, binding = 3) readonly buffer In { Node head; int8_t i8[32]; uint16_t u16[32]; } inb;
layout(std430, binding = 4) buffer Row { layout(row_major) mat2x3 rm; mat2x3 cm; } rows;
void main() {
  uint i = gl_LocalInvocationIndex;
  // walk the list (every lane)
  int sum = 0, n = 0;
  Node node = inb.head;
  while (uint64_t(node) != 0ul && n < 100) { sum += node.value; node = node.next; n++; }
  atomicAdd(o.total, int64_t(sum) * 1000000000l + int64_t(i));
  atomicMin(o.mn, int64_t(inb.i8[i]) * 1000000000000l);
  atomicOr(o.orr, 1ul << (i + 20u));
  // layouts: the same struct read through std140 and std430
  float a = u.s.p.y + u.s.w + u.s.m[1][0] + u.s.arr[1] + u.v[i % 3u].z + u.f[i % 3u];
  float c = b.s.p.y + b.s.w + b.s.m[1][0] + b.s.arr[1] + b.v[i % 3u].z + b.f[i % 3u];
  o.o[i] = a;
  o.o[32 + i] = c;
  o.o[64 + i] = float(inb.u16[i]) + float(inb.i8[i]);
  if (i == 0u) {
    rows.cm = rows.rm;         // row-major -> column-major copy through matrix strides
    rows.rm[1][2] = 99.0;
  }
}
