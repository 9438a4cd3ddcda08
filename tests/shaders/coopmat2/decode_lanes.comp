#version 450
// A DecodeFunc on a 16 x 64 tensor slice of 1 x 32 byte blocks (Blk: 32 bytes), run in vector
// form on 16 columns at a time (jitcoop/codegen/callback_vector.py): its branch on coordInBlock
// against a push constant takes one path for 16 columns, or parts them when `split` is not a
// multiple of 16; a buffer shorter than the slice's last block fails in the middle of a group.
// Element (r, c): byte i = c % 32 of block (row0 + r, c / 32); x * 2 + blockCoord[0] from
// `split` on, x - blockCoord[1] below it.
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_EXT_buffer_reference : enable
layout(local_size_x = 32) in;
layout(push_constant) uniform P { uint R, C, split, row0; } p;
layout(set=0, binding=0) readonly buffer Q { uint8_t q[]; };
layout(set=0, binding=1) buffer O { float o[]; };
layout(buffer_reference, std430, buffer_reference_align = 1) buffer Blk { uint8_t v[32]; };

float dec(const in Blk b, const in uint32_t bc[2], const in uint32_t cib[2]) {
    uint i = cib[1];
    float x = float(uint(b.v[i]));
    if (i >= p.split)
        return x * 2.0 + float(bc[0]);
    return x - float(bc[1]);
}

void main() {
    tensorLayoutNV<2> t = createTensorLayoutNV(2);
    t = setTensorLayoutBlockSizeNV(t, 1, 32);
    t = setTensorLayoutDimensionNV(t, p.R, p.C);
    t = sliceTensorLayoutNV(t, p.row0, 16, 0, 64);
    coopmat<float, gl_ScopeSubgroup, 16, 64, gl_MatrixUseAccumulator> m;
    coopMatLoadTensorNV(m, q, 0, t, dec);
    coopMatStore(m, o, 0, 64, gl_CooperativeMatrixLayoutRowMajor);
}
