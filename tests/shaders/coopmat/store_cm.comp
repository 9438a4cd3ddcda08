#version 450
// Column-major stores of a ROWS x COLS matrix of TYPE (use USE) per subgroup, two subgroups a
// workgroup: tile t = the subgroup's index in the dispatch, loaded row-major from x at t * ROWS *
// COLS (stride COLS) and stored column-major to y at t * p.tout with Stride p.sout (p.sout >= ROWS
// leaves p.sout - ROWS untouched elements after each column).
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x_id = 10) in;
layout(push_constant) uniform P { uint sout, tout; } p;
layout(set = 0, binding = 0) readonly buffer BX { TYPE x[]; };
layout(set = 0, binding = 1) buffer BY { TYPE y[]; };
void main() {
    uint tile = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
    coopmat<TYPE, gl_ScopeSubgroup, ROWS, COLS, USE> m;
    coopMatLoad(m, x, tile * ROWS * COLS, COLS, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(m, y, tile * p.tout, p.sout, gl_CooperativeMatrixLayoutColumnMajor);
}
