#version 460
// What hardware does where SPV_NV_cooperative_matrix2 says "must" or "undefined": one 16x16 float32
// accumulator per subgroup.
//   x: the source tensor (float32, row-major, R x C, row stride C) read at element offset p.poff,
//      so the tensor load's Pointer is 4 * p.poff bytes into binding 0 (16-byte aligned only
//      when p.poff is a multiple of 4).
//   y: the loaded matrix stored with a plain KHR store (row-major, stride 16).
//   z: the same matrix stored through a 16x16 tensor layout at element offset p.soff (the
//      Pointer's alignment again).
//   u: a load through an Undefined-clamped R x C layout sliced at (p.roff, p.coff): elements past
//      the tensor's edge, stored plainly (row-major, stride 16).
//   v: a tensor store of the loaded matrix through that Undefined-clamped slice (v is filled with
//      a sentinel: which elements past the edge are written, and where).
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(push_constant) uniform P { uint R, C, poff, soff, roff, coff; } p;
layout(set = 0, binding = 0) readonly buffer BX { float x[]; };
layout(set = 0, binding = 1) writeonly buffer BY { float y[]; };
layout(set = 0, binding = 2) buffer BZ { float z[]; };
layout(set = 0, binding = 3) writeonly buffer BU { float u[]; };
layout(set = 0, binding = 4) buffer BV { float v[]; };
void main() {
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m, q;
    tensorLayoutNV<2> t = createTensorLayoutNV(2);
    t = setTensorLayoutDimensionNV(t, p.R, p.C);
    tensorLayoutNV<2> tile = sliceTensorLayoutNV(t, 0, 16, 0, 16);
    coopMatLoadTensorNV(m, x, p.poff, tile);
    coopMatStore(m, y, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    tensorLayoutNV<2> t16 = createTensorLayoutNV(2);
    t16 = setTensorLayoutDimensionNV(t16, 16, 16);
    coopMatStoreTensorNV(m, z, p.soff, t16);
    tensorLayoutNV<2> past = sliceTensorLayoutNV(t, p.roff, 16, p.coff, 16);
    coopMatLoadTensorNV(q, x, 0, past);
    coopMatStore(q, u, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStoreTensorNV(m, v, 0, past);
}
