#version 450
// DecodeFunc + DecodeVectorFunc (V = 2) on a 64 x 64 matrix (2048 groups of two), plain and
// through views: p[9] = 0 none, 1 the transposing view (2, false, 1, 0), 2 a view
// (3, true, 2, 0, 1) with dimensions p[10..12], strides p[13..15] and clip p[16..19].
// Same functions as decode_vec.comp (pl[6] marks the vector function's components).
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_NV_cooperative_matrix_decode_vector : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_EXT_buffer_reference : enable
layout(local_size_x = 32) in;
layout(set=0, binding=0) readonly buffer T { uint words[]; };
layout(set=0, binding=1) buffer O { uint o[]; };
layout(set=0, binding=2) readonly buffer P { uint p[]; };
layout(set=0, binding=3) readonly buffer Pl { uint pl[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Word { uint w; };
const uint M = 64, N = 64;

uint f(uint w, uint b0, uint b1, uint c0, uint c1) {
    return w * 3u + b0 * 1000003u + b1 * 7919u + c0 * 131u + c1;
}

uint dec(const in Word b, const in uint32_t bc[2], const in uint32_t cib[2]) {
    return f(b.w, bc[0], bc[1], cib[0], cib[1]);
}

uvec2 decv(const in Word b, const in uint32_t bc[2], const in uint32_t cib[2]) {
    uvec2 r;
    bool hit = bc[0] == pl[2] && bc[1] == pl[3] && cib[0] == pl[4] && cib[1] == pl[5];
    for (uint i = 0; i < 2; i++)
        r[i] = f(b.w, bc[0], bc[1], cib[0], cib[1] + i) + pl[6] + (hit && i == pl[1] ? pl[0] : 0u);
    return r;
}

void main() {
    tensorLayoutNV<2> t = createTensorLayoutNV(2);
    t = setTensorLayoutBlockSizeNV(t, p[1], p[2]);
    t = setTensorLayoutDimensionNV(t, p[3], p[4]);
    t = sliceTensorLayoutNV(t, p[5], p[6], p[7], p[8]);
    tensorViewNV<2, false, 1, 0> vt = createTensorViewNV(2, false, 1, 0);
    tensorViewNV<3, true, 2, 0, 1> v3 = createTensorViewNV(3, true, 2, 0, 1);
    v3 = setTensorViewDimensionsNV(v3, p[10], p[11], p[12]);
    v3 = setTensorViewStrideNV(v3, p[13], p[14], p[15]);
    v3 = setTensorViewClipNV(v3, p[16], p[17], p[18], p[19]);
    coopmat<uint, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator> m;
    coopMatLoad(m, o, 0, N, gl_CooperativeMatrixLayoutRowMajor);
    if (p[9] == 0) coopMatLoadTensorNV(m, words, p[0], t, dec, decv);
    else if (p[9] == 1) coopMatLoadTensorNV(m, words, p[0], t, vt, dec, decv);
    else coopMatLoadTensorNV(m, words, p[0], t, v3, dec, decv);
    coopMatStore(m, o, 0, N, gl_CooperativeMatrixLayoutRowMajor);
}
