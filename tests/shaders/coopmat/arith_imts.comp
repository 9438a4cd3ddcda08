#version 450
// An integer cooperative matrix times a scalar: glslang emits OpMatrixTimesScalar on an int32
// matrix (the seed allows cooperative matrix types for OpMatrixTimesScalar). o = c * p.si.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(push_constant) uniform P { int si; } p;
layout(set = 0, binding = 0) readonly buffer BI { int iv[]; };
layout(set = 0, binding = 1) writeonly buffer BO { int o[]; };
void main() {
    coopmat<int, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> c;
    coopMatLoad(c, iv, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(c * p.si, o, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
