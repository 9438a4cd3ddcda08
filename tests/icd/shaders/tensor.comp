#version 460
// VK_NV_cooperative_matrix2 tensor addressing: the 16 x 16 float16 tile at (p.r0, p.c0) of a
// p.R x p.C row-major tensor, through a Constant-clamped layout (elements outside read 0), stored
// row major to o.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(push_constant) uniform P { uint R, C, r0, c0; } p;
layout(std430, set = 0, binding = 0) readonly buffer T { float16_t t[]; };
layout(std430, set = 0, binding = 1) writeonly buffer O { float16_t o[]; };
void main() {
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> l =
        createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    l = setTensorLayoutDimensionNV(l, p.R, p.C);
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
    coopMatLoadTensorNV(m, t, 0, sliceTensorLayoutNV(l, p.r0, 16, p.c0, 16));
    coopMatStore(m, o, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
