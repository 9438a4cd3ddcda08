#version 450
// A 4-bit decode function that reads a Private variable of the calling invocation and a storage
// buffer of per-block scales.
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_EXT_buffer_reference : enable
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer A { uint8_t q[]; };
layout(set=0, binding=1) buffer O { float o[]; };
layout(set=0, binding=2) buffer S { float scales[]; };
layout(buffer_reference, std430, buffer_reference_align = 1) buffer Blk { uint8_t v[4]; };
float scale_mul = 1.0;
float dec(const in Blk b, const in uint32_t bc[2], const in uint32_t cib[2]) {
    uint x = uint(b.v[cib[1] >> 1]);
    uint nib = (cib[1] & 1) == 0 ? (x & 15) : (x >> 4);
    return (float(nib) - 8.0) * scales[bc[0] * 2 + bc[1]] * scale_mul;
}
void main() {
    scale_mul = 2.0;
    tensorLayoutNV<2> t = createTensorLayoutNV(2);
    t = setTensorLayoutBlockSizeNV(t, 1, 8);
    t = setTensorLayoutDimensionNV(t, 16, 16);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
    coopMatLoadTensorNV(m, q, 0, t, dec);
    tensorLayoutNV<2> to = createTensorLayoutNV(2);
    to = setTensorLayoutDimensionNV(to, 16, 16);
    coopMatStoreTensorNV(m, o, 0, to);
}
