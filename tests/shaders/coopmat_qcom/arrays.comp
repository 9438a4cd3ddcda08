#version 450
// OpBitCastArrayQCOM and OpExtractSubArrayQCOM, per invocation (no cooperation). Each invocation
// reads 16 words w and writes:
//   rt   w[0:8] -> float16_t[16] -> uint[8]                    (a bit-exact round trip)
//   h    w[0:8] -> float16_t[16], stored as float16 values
//   f    w[0:8] -> float[8], stored as float values
//   i    w[0:8] -> int[8] -> float16_t[16] -> float[8] -> int[8]
//   wide w[0:16] -> float16_t[32] -> float[16] -> uint[16]     (64-byte arrays)
//   s    sub-arrays: w[8:16] (constant start), w[p.a : p.a + 4] as int[4], and the float16
//        elements [p.b : p.b + 8] of w[0:16] seen as float16_t[32], bit cast to uint[4]
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_QCOM_cooperative_matrix_conversion : require
layout(local_size_x = 32) in;
layout(push_constant) uniform P { int a; int b; } p;
struct W16 { uint v[16]; };
struct W8 { uint v[8]; };
struct H16 { float16_t v[16]; };
struct F8 { float v[8]; };
struct I8 { int v[8]; };
struct S { uint c[8]; int a[4]; uint b[4]; };
layout(set = 0, binding = 0) readonly buffer B0 { W16 w[]; };
layout(set = 0, binding = 1) writeonly buffer B1 { W8 rt[]; };
layout(set = 0, binding = 2) writeonly buffer B2 { H16 h[]; };
layout(set = 0, binding = 3) writeonly buffer B3 { F8 f[]; };
layout(set = 0, binding = 4) writeonly buffer B4 { I8 i[]; };
layout(set = 0, binding = 5) writeonly buffer B5 { W16 wide[]; };
layout(set = 0, binding = 6) writeonly buffer B6 { S s[]; };
void main() {
    uint g = gl_GlobalInvocationID.x;
    uint src[16] = w[g].v;
    uint lo[8];
    for (int k = 0; k < 8; k++) lo[k] = src[k];

    float16_t h16[16];
    bitcastQCOM(lo, h16);
    uint back[8];
    bitcastQCOM(h16, back);
    rt[g].v = back;
    h[g].v = h16;

    float f8[8];
    bitcastQCOM(lo, f8);
    f[g].v = f8;

    int i8[8];
    bitcastQCOM(lo, i8);
    float16_t t16[16];
    bitcastQCOM(i8, t16);
    float t8[8];
    bitcastQCOM(t16, t8);
    int i8b[8];
    bitcastQCOM(t8, i8b);
    i[g].v = i8b;

    float16_t h32[32];
    bitcastQCOM(src, h32);
    float f16w[16];
    bitcastQCOM(h32, f16w);
    uint u16w[16];
    bitcastQCOM(f16w, u16w);
    wide[g].v = u16w;

    uint c8[8];
    extractSubArrayQCOM(src, 8, c8);
    s[g].c = c8;
    int si[16];
    bitcastQCOM(src, si);
    int a4[4];
    extractSubArrayQCOM(si, p.a, a4);
    s[g].a = a4;
    float16_t b8[8];
    extractSubArrayQCOM(h32, p.b, b8);
    uint b4[4];
    bitcastQCOM(b8, b4);
    s[g].b = b4;
}
