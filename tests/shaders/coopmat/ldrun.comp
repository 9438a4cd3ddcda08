#version 450
// Row-major loads into the striped layout, stored back row major: one ROWS x COLS matrix of
// ETYPE per subgroup, tile t = workgroup * subgroups + subgroup read from x at t * p.tin + p.off
// (row stride p.srow) and written to y at t * p.tout (row stride p.sout). Sizes chosen so rows
// pack into fragment rows (COLS < 32), span several (COLS > 32), or neither (COLS = 48).
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint off, tin, srow, tout, sout; } p;
layout(set = 0, binding = 0) readonly buffer BX { ETYPE x[]; };
layout(set = 0, binding = 1) writeonly buffer BY { ETYPE y[]; };
void main() {
    uint tile = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
    coopmat<ETYPE, gl_ScopeSubgroup, ROWS, COLS, gl_MatrixUseA> m;
    coopMatLoad(m, x, tile * p.tin + p.off, p.srow, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(m, y, tile * p.tout, p.sout, gl_CooperativeMatrixLayoutRowMajor);
}
