#version 450
// DecodeFunc + DecodeVectorFunc (V = 2, 4 or 8 components; built with -DV=...). Both compute
// f(word at the pointer, blockCoord, coordInBlock) for each element; the vector function adds
// pl[6] to every component (so a test sees which function decoded an element) and pl[0] to
// component pl[1] of the group with blockCoord (pl[2], pl[3]), coordInBlock (pl[4], pl[5])
// (a planted disagreement).
// p[0] element offset of the Pointer, p[1..2] blockSize, p[3..4] dims, p[5..8] slice
// (offset, span, offset, span).
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_NV_cooperative_matrix_decode_vector : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_EXT_buffer_reference : enable
#if V == 8
#extension GL_EXT_long_vector : enable
#define VEC vector<uint, 8>
#elif V == 4
#define VEC uvec4
#else
#define VEC uvec2
#endif
layout(local_size_x = 32) in;
layout(set=0, binding=0) readonly buffer T { uint words[]; };
layout(set=0, binding=1) buffer O { uint o[]; };
layout(set=0, binding=2) readonly buffer P { uint p[]; };
layout(set=0, binding=3) readonly buffer Pl { uint pl[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Word { uint w; };
const uint M = 16, N = 32;

uint f(uint w, uint b0, uint b1, uint c0, uint c1) {
    return w * 3u + b0 * 1000003u + b1 * 7919u + c0 * 131u + c1;
}

uint dec(const in Word b, const in uint32_t bc[2], const in uint32_t cib[2]) {
    return f(b.w, bc[0], bc[1], cib[0], cib[1]);
}

VEC decv(const in Word b, const in uint32_t bc[2], const in uint32_t cib[2]) {
    VEC r;
    bool hit = bc[0] == pl[2] && bc[1] == pl[3] && cib[0] == pl[4] && cib[1] == pl[5];
    for (uint i = 0; i < V; i++)
        r[i] = f(b.w, bc[0], bc[1], cib[0], cib[1] + i) + pl[6] + (hit && i == pl[1] ? pl[0] : 0u);
    return r;
}

void main() {
    tensorLayoutNV<2> t = createTensorLayoutNV(2);
    t = setTensorLayoutBlockSizeNV(t, p[1], p[2]);
    t = setTensorLayoutDimensionNV(t, p[3], p[4]);
    t = sliceTensorLayoutNV(t, p[5], p[6], p[7], p[8]);
    coopmat<uint, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator> m;
    coopMatLoadTensorNV(m, words, p[0], t, dec, decv);
    coopMatStore(m, o, 0, N, gl_CooperativeMatrixLayoutRowMajor);
}
