#version 450
// Test data for tests/test_asm.py, compiled with glslang 16.6:
//   glslang -V -gVS --target-env vulkan1.1 debuginfo.comp -o debuginfo.spv
// -gVS: NonSemantic.Shader.DebugInfo instructions and the source text in
// OpSource (a string with newlines, quotes and backslashes: "a\b"), plus debugPrintfEXT.
#extension GL_EXT_debug_printf : require

layout(local_size_x = 8, local_size_y = 8) in;
layout(std430, binding = 0) buffer Data { ivec2 pairs[4]; vec4 v[]; } data;
layout(constant_id = 7) const uint N = 16u;
layout(constant_id = 8) const bool FLAG = true;
const uint HALF_N = N / 2u;

struct Pair { int a; float b; };

Pair make(int i) { Pair p; p.a = -i; p.b = float(i) * -2.5e-3; return p; }

void main() {
    uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * HALF_N;
    Pair p = make(int(i));
    vec4 x = data.v[i];
    x.yz = x.zy;
    if (FLAG) x = normalize(x) * vec4(1.0, -0.0, 3.4028235e38, 1.17549435e-38);
    int n = 0;
    while (n < 10 && x.x < 100.0) { x.x *= 2.0; n++; }
    do { n -= 3; } while (n > 0);
    data.v[i] = x + float(p.b);
    debugPrintfEXT("i=%u n=%d\n", i, n);
}
