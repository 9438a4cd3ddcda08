#version 460
// Two tensor loads, in the two arms of a branch, into a matrix that starts as a constant: after
// spirv-opt -O both loads take that constant as their Object operand (const_object_O.spv).
// o = the 16 x 16 float16 tile of x at row 0 (sel != 0) or row 4, rows past `rows` 0 (Constant
// clamping).
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
layout(local_size_x = 32) in;
layout(push_constant) uniform P { uint rows; uint sel; } p;
layout(binding = 0) readonly buffer X { float16_t x[]; };
layout(binding = 1) writeonly buffer O { float16_t o[]; };
void main() {
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> t = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    t = setTensorLayoutDimensionNV(t, p.rows, 16);
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0);
    if (p.sel != 0) {
        coopMatLoadTensorNV(m, x, 0, sliceTensorLayoutNV(t, 0, 16, 0, 16));
    } else {
        coopMatLoadTensorNV(m, x, 0, sliceTensorLayoutNV(t, 4, 16, 0, 16));
    }
    coopMatStore(m, o, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
