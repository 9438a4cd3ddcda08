#version 460
// Tensor loads and stores of whole rows: one ROWS x COLS matrix of ETYPE per subgroup, tile
// (tr, tc) = (tile / p.tcols, tile % p.tcols). It is loaded from the R x C tensor x through a
// Constant-clamped layout sliced at (tr * ROWS + p.roff, tc * COLS + p.coff), so tiles past the
// edge are partly clamped (clamp value 0x3C17); then stored to the tiled tensor y (every tile
// inside it) and back to z through the load's own slice (elements outside are not written).
// With -DTRANSPOSED the matrix is read through the view (2, false, 1, 0) from the slice at
// (tc * COLS + p.coff, COLS, tr * ROWS + p.roff, ROWS): the transpose of that block of x; it is
// stored tiled to y, and back to z through the same view and slice (the block of x again).
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint R, C, roff, coff, tcols; } p;
layout(set = 0, binding = 0) readonly buffer BX { ETYPE x[]; };
layout(set = 0, binding = 1) writeonly buffer BY { ETYPE y[]; };
layout(set = 0, binding = 2) writeonly buffer BZ { ETYPE z[]; };
void main() {
    uint tile = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
    uint tr = tile / p.tcols, tc = tile % p.tcols;
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> t =
        createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    t = setTensorLayoutDimensionNV(t, p.R, p.C);
    t = setTensorLayoutClampValueNV(t, 0x3C17);
    tensorLayoutNV<2> ty = createTensorLayoutNV(2);
    ty = setTensorLayoutDimensionNV(ty, (gl_NumWorkGroups.x * gl_NumSubgroups / p.tcols) * ROWS, p.tcols * COLS);
    coopmat<ETYPE, gl_ScopeSubgroup, ROWS, COLS, gl_MatrixUseA> m;
#ifdef TRANSPOSED
    t = sliceTensorLayoutNV(t, tc * COLS + p.coff, COLS, tr * ROWS + p.roff, ROWS);
    tensorViewNV<2, false, 1, 0> tv = createTensorViewNV(2, false, 1, 0);
    coopMatLoadTensorNV(m, x, 0, t, tv);
    coopMatStoreTensorNV(m, y, 0, sliceTensorLayoutNV(ty, tr * ROWS, ROWS, tc * COLS, COLS));
    coopMatStoreTensorNV(m, z, 0, t, tv);
#else
    t = sliceTensorLayoutNV(t, tr * ROWS + p.roff, ROWS, tc * COLS + p.coff, COLS);
    coopMatLoadTensorNV(m, x, 0, t);
    coopMatStoreTensorNV(m, y, 0, sliceTensorLayoutNV(ty, tr * ROWS, ROWS, tc * COLS, COLS));
    coopMatStoreTensorNV(m, z, 0, t);
#endif
}
