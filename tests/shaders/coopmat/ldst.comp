#version 450
// Loads and stores through StorageBuffer memory: one 16 x 8 matrix (not square, so rows and
// columns cannot be confused) per subgroup, several subgroups per workgroup and several
// workgroups, each on its own tile. From tile base t = tile * p.tin + p.off of `x`:
//   y = row-major load (stride p.srow) stored column-major (stride p.sout)
//   z = column-major load (stride p.scol) stored row-major (stride p.sout)
//   w = row-major load with Stride 0 (every row the same) stored row-major (stride p.sout)
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x_id = 10) in;
layout(push_constant) uniform P { uint off, tin, srow, scol, sout, tout; } p;
layout(set = 0, binding = 0) readonly buffer BX { float16_t x[]; };
layout(set = 0, binding = 1) writeonly buffer BY { float16_t y[]; };
layout(set = 0, binding = 2) writeonly buffer BZ { float16_t z[]; };
layout(set = 0, binding = 3) writeonly buffer BW { float16_t w[]; };
void main() {
    uint tile = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
    uint src = tile * p.tin + p.off, dst = tile * p.tout;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 8, gl_MatrixUseA> m;
    coopMatLoad(m, x, src, p.srow, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(m, y, dst, p.sout, gl_CooperativeMatrixLayoutColumnMajor);
    coopMatLoad(m, x, src, p.scol, gl_CooperativeMatrixLayoutColumnMajor);
    coopMatStore(m, z, dst, p.sout, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(m, x, src, 0, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(m, w, dst, p.sout, gl_CooperativeMatrixLayoutRowMajor);
}
